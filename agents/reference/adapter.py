"""Agents written for the paper's public reference environment, plugged in unchanged.

Such an agent has ``act(obs_planes, action_mask) -> flat index``: float32
planes ``[3, H, W]`` (own, opponent, obstacle) and an int8 mask of length
``H * W`` with a 1 at each legal placement (:func:`engine.protocol.observation.to_planes`).
:class:`ReferenceAgentAdapter` turns it into one of our agents.
"""

from __future__ import annotations

import numbers
from typing import Any, Protocol

import numpy as np

from agents.base import Agent, AgentContext
from engine.protocol.observation import Observation, to_planes
from engine.state import PASS


class ReferenceStyleAgent(Protocol):
    """The reference environment's agent interface."""

    def act(self, obs_planes: np.ndarray, action_mask: np.ndarray) -> int: ...


class ReferenceAgentAdapter(Agent):
    """Our :class:`~agents.base.Agent` around a reference-environment agent.

    The inner agent is asked only when there is a placement to choose; an
    all-zero mask (a forced pass, normally played by the harness) gives PASS
    without asking. Its answer is returned as a plain ``int`` when it is an
    integer (numpy integers included) and passed through unchanged otherwise,
    so the harness reports it; the harness verifies every move. ``freeze()`` is
    forwarded to the inner agent when it has one. ``context`` and ``rng`` are
    optional: the inner agent keeps whatever state it was built with.
    """

    def __init__(
        self,
        inner: ReferenceStyleAgent,
        name: str | None = None,
        context: AgentContext | None = None,
        rng: np.random.Generator | None = None,
    ) -> None:
        if not callable(getattr(inner, "act", None)):
            raise TypeError(f"{type(inner).__name__} has no act(obs_planes, action_mask) method")
        super().__init__(context, rng if rng is not None else np.random.default_rng(0))  # type: ignore[arg-type]
        self.inner = inner
        self.name = name or getattr(inner, "name", None) or type(inner).__name__

    def act(self, observation: Observation) -> int:
        """The inner agent's flat index for the observation's planes and mask (PASS on an all-zero mask)."""
        planes, mask = to_planes(observation)
        if not mask.any():
            if not observation.legal_moves:
                raise ValueError("no legal moves: the game is over")
            return PASS
        proposal: Any = self.inner.act(planes, mask)
        if isinstance(proposal, numbers.Integral) and not isinstance(proposal, bool | np.bool_):
            return int(proposal)
        return proposal

    def freeze(self) -> None:
        super().freeze()
        if callable(getattr(self.inner, "freeze", None)):
            self.inner.freeze()
