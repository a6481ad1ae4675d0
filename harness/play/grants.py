"""Privileged simulators: the true outcome rule handed out by name, every grant and call recorded.

Anything that needs the true outcome rule (MCTS with real rollouts) must ask for a
:class:`PrivilegedSimulator`: inside an arena through
:meth:`harness.play.arena.Arena.grant_simulator` (recorded in the ledger), in frozen
evaluation matches through :class:`EvaluationGrants` (or
:func:`evaluation_simulator`), which keeps its own usage record the same way.
Results with any grant are labelled privileged.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from engine.condition import Condition
from engine.environments import Environment
from engine.playouts import random_playout
from engine.protocol.arena import PrivilegedUsage
from engine.rules import Rules
from engine.state import BLACK, State


class Rollout(NamedTuple):
    """A random playout to the end: final disc counts, true rewards, and the seed to continue with."""

    black: int
    white: int
    rewards: tuple[int, int]
    seed: int


@lru_cache(maxsize=64)
def _reward_table(condition: Condition, size: int) -> np.ndarray:
    """:meth:`PrivilegedSimulator.reward_table`, built once per (condition, board size): every MCTS opponent of a
    run asks for it (about 20 ms in exact fractions each time); the array is read-only, so sharing it is safe."""
    table = np.zeros((size, size), dtype=np.int8)
    for own in range(size):
        for opp in range(size - own):
            table[own, opp] = condition.rewards(own, opp)[0]
    table.setflags(write=False)
    return table


class EvaluationGrants:
    """Simulator grants for frozen evaluation matches, which play outside any arena (no budget).

    One object per environment (or per match): its :meth:`grant_simulator` is what
    the match runner hands privileged agents as ``AgentContext.grant_simulator``,
    and :attr:`usage` records every grant and every call, so the match's results
    can be labelled privileged. Nothing else about the condition is exposed.
    """

    def __init__(self, env: Environment) -> None:
        self._rules: Rules = env.rules
        self._condition: Condition = env.condition  # private: the hidden K, reached only through simulators
        self._usage = PrivilegedUsage()

    @classmethod
    def for_rules(cls, rules: Rules, condition: Condition) -> EvaluationGrants:
        """Grants for a privileged agent in its own process, which is given the rules and the condition."""
        grants = cls.__new__(cls)
        grants._rules, grants._condition, grants._usage = rules, condition, PrivilegedUsage()
        return grants

    @property
    def usage(self) -> PrivilegedUsage:
        """Grants and calls so far (an immutable snapshot)."""
        return self._usage

    def grant_simulator(self, reason: str) -> PrivilegedSimulator:
        """A simulator with the true outcome rule; the grant and each use are recorded in :attr:`usage`."""
        reason = checked_reason(reason)
        self._usage = self._usage.model_copy(update={"grants": (*self._usage.grants, reason)})
        return PrivilegedSimulator(self._rules, self._condition, self._count_call, lambda: self._usage)

    def _count_call(self, kind: str) -> None:
        field = f"{kind}_calls"
        self._usage = self._usage.model_copy(update={field: getattr(self._usage, field) + 1})

    def __repr__(self) -> str:
        return f"EvaluationGrants(layout={self._rules.layout.name!r}, grants={len(self._usage.grants)}, uses={self._usage.uses})"


def evaluation_simulator(env: Environment, reason: str) -> PrivilegedSimulator:
    """One simulator for evaluation outside an arena, with its own usage record (``simulator.usage``)."""
    return EvaluationGrants(env).grant_simulator(reason)


def checked_reason(reason: str) -> str:
    if not isinstance(reason, str) or not reason.strip():
        raise ValueError("grant_simulator needs a reason (e.g. 'MCTS baseline rollouts'); it is recorded")
    return reason.strip()


def refusal_message(reason: str) -> str:
    """Why a simulator request was refused: privilege comes from the agent's registry entry, not from asking."""
    return (
        f"simulator request {reason!r} refused: this agent is not registered as privileged, so it may not see "
        "the true outcome rule; the request is recorded in the ledger (privileged.refused) and shown in reports. "
        "Agents that need the simulator declare privileged=True in their registry entry."
    )


class PrivilegedSimulator:
    """The true outcome rule (with K), handed out only by :meth:`Arena.grant_simulator` and :class:`EvaluationGrants`.

    Every call is reported back to the grantor's usage record (the arena's
    ledger, or the evaluation grants), which :attr:`usage` shows.
    """

    def __init__(
        self, rules: Rules, condition: Condition, record_call: Callable[[str], None], read_usage: Callable[[], PrivilegedUsage]
    ) -> None:
        self.rules = rules
        self._condition = condition
        self._record_call = record_call
        self._read_usage = read_usage

    @property
    def usage(self) -> PrivilegedUsage:
        """The grantor's record of grants and calls (shared by all simulators it granted)."""
        return self._read_usage()

    def reward_table(self) -> np.ndarray:
        """True rewards for every final count: int8 array ``[own, opp]`` of shape (cells + 1, cells + 1).

        Entry ``[own, opp]`` is the reward (+1 / 0 / -1) of a player who ends with
        ``own`` discs against ``opp`` (or is scored there, e.g. at a rollout cap);
        counts that cannot occur (``own + opp > cells``) hold 0. Read-only; one
        recorded use however often it is indexed.
        """
        self._record_call("table")
        return _reward_table(self._condition, self.rules.layout.cells + 1)

    def rewards(self, black: int, white: int) -> tuple[int, int]:
        """True terminal rewards (black, white) for final disc counts."""
        self._record_call("rewards")
        return self._condition.rewards(black, white)

    def outcome(self, state: State) -> tuple[int, int]:
        """True rewards (black, white) of a terminal state; ValueError if the game is not over."""
        if not self.rules.is_over(state):
            raise ValueError("outcome() needs a finished game (rules.is_over(state)); use rollout() from other states")
        self._record_call("outcome")
        return self._condition.rewards(*self.rules.counts(state))

    def rollout(self, state: State, seed: int) -> Rollout:
        """A uniformly random playout from ``state`` to the end, scored with the true K."""
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
            raise ValueError(f"seed={seed!r}: give an int in [0, 2**64)")
        self._record_call("rollout")
        mover, opponent, next_seed = random_playout(self.rules, state, seed)
        black, white = (mover, opponent) if state.to_move == BLACK else (opponent, mover)
        return Rollout(black, white, self._condition.rewards(black, white), next_seed)
