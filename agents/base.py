"""The agent interface: ``act(observation) -> move``; ``adapt(arena)`` and ``freeze()`` for learners.

Agents get randomness only from the numpy Generator passed to them, and the
rules/layout only through what the harness hands them (observations, the arena,
an :class:`AgentContext`). An agent that needs the true outcome rule (MCTS)
says so with ``privileged = True`` and receives a privileged simulator through
its context; every result it takes part in is labelled privileged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.protocol.observation import Observation
from engine.rules import Rules
from engine.state import PASS


@dataclass(frozen=True)
class AgentContext:
    """What an agent may be built with: the public rules and, for privileged agents, a simulator grant.

    ``grant_simulator(reason)`` returns a :class:`harness.play.grants.PrivilegedSimulator`
    (recorded by whoever supplies it); it is ``None`` where no simulator is offered.
    ``record_call(fields)``: where a model-driven agent built from a spec reports each
    model call it makes (the harness writes them to the run's transcript); ``None``: not recorded.
    """

    rules: Rules
    grant_simulator: Callable[[str], Any] | None = None
    record_call: Callable[[dict[str, Any]], None] | None = None


class Agent:
    """Base class: a named policy with a seeded generator; learning hooks do nothing by default."""

    name = "agent"
    privileged = False

    def __init__(self, context: AgentContext, rng: np.random.Generator) -> None:
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"{type(self).__name__} needs a numpy Generator (np.random.default_rng(seed)), got {type(rng).__name__}")
        self.context = context
        self.rng = rng
        self.frozen = False

    @property
    def rules(self) -> Rules:
        return self.context.rules

    def act(self, observation: Observation) -> int:
        """The move to play: a flat index from ``observation.legal_moves`` (PASS when forced)."""
        raise NotImplementedError

    def adapt(self, arena: Any) -> None:
        """Learn within the arena's game budget (default: nothing to learn)."""

    def freeze(self) -> None:
        """Stop learning; evaluation follows."""
        self.frozen = True


def placements(observation: Observation) -> list[int]:
    """The legal placements (PASS excluded); raises when the game is over."""
    if not observation.legal_moves:
        raise ValueError("no legal moves: the game is over")
    return [move for move in observation.legal_moves if move != PASS]


def forced_move(observation: Observation) -> int | None:
    """PASS when the mover must pass, its only placement when it has one, else None (a real choice)."""
    moves = placements(observation)
    if not moves:
        return PASS
    return moves[0] if len(moves) == 1 else None


def choose(rng: np.random.Generator, moves: list[int]) -> int:
    """One of ``moves`` uniformly (ties broken by the agent's generator)."""
    return int(moves[int(rng.integers(len(moves)))])
