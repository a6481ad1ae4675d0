"""The minimal agent protocol the harness plays with: ``act(observation) -> move``.

Full agents (``adapt``/``freeze``) live in ``agents/``; the harness only needs a
move for an observation. Randomness always comes from a passed-in numpy
Generator, never the global one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

import numpy as np

from engine.protocol.observation import Observation


@runtime_checkable
class Policy(Protocol):
    """Anything that picks a move (a flat index, or PASS) for an observation."""

    def act(self, observation: Observation) -> int:
        """The move to play; the harness checks it against the rules before playing it."""
        ...


def policy_name(policy: object) -> str:
    """A short label for messages and records: the policy's ``name`` if it has one, else its class."""
    name = getattr(policy, "name", None)
    return name if isinstance(name, str) and name else type(policy).__name__


class RandomPolicy:
    """Uniformly random legal move, drawn from the given generator."""

    name = "random"

    def __init__(self, rng: np.random.Generator) -> None:
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"RandomPolicy needs a numpy Generator (np.random.default_rng(seed)), got {type(rng).__name__}")
        self.rng = rng

    def act(self, observation: Observation) -> int:
        """One of ``observation.legal_moves``, uniformly."""
        moves = observation.legal_moves
        if not moves:
            raise ValueError("no legal moves: the game is over")
        return int(moves[int(self.rng.integers(len(moves)))])


class FunctionPolicy:
    """Wraps a plain function ``observation -> move`` as a policy (handy in tests)."""

    def __init__(self, fn: Callable[[Observation], int], name: str | None = None) -> None:
        self.fn = fn
        self.name = name or getattr(fn, "__name__", "function")

    def act(self, observation: Observation) -> int:
        """Whatever the function returns; the harness verifies it."""
        return self.fn(observation)
