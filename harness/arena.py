"""The budgeted handle agents adapt through, and the explicit privileged simulator.

An :class:`Arena` wraps one environment. Agents may know its ``rules`` and
``layout`` and may play whole games through :meth:`Arena.play` (self-play
allowed) until the budget is spent; the call after that raises
:class:`BudgetExhausted`. Every completed game is appended to the
:class:`Ledger`, the single source of truth for the count.

What is hidden: the condition (threshold K) is held in the private attribute
``_condition`` and used only to score finished games; no public attribute, the
ledger or the repr reveals it. The environment id and name are withheld too,
since the id encodes the condition index (id = 7 * condition + layout) and the
name carries the condition label. Python cannot enforce privacy: agents are
expected to use the public API only, and reviewers can grep for ``_condition``.

Aborted games are not counted: a game stopped by an illegal or malformed
proposal is not entered in the ledger and uses no budget. This leaks nothing
about K, because rewards are computed only after the last move, once no policy
will be asked again.

Anything that needs the true outcome rule (MCTS with real rollouts) must ask
for a :class:`PrivilegedSimulator` through :meth:`Arena.grant_simulator`; every
grant and every call is counted in the ledger, so results can be labelled
privileged. Frozen evaluation matches, which play outside any arena, get theirs
from :class:`EvaluationGrants` (or :func:`evaluation_simulator`), which keeps
its own usage record the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from pydantic import BaseModel, ConfigDict

from engine.condition import Condition
from engine.environments import Environment
from engine.layout import Layout
from engine.playouts import random_playout
from engine.rules import Rules
from engine.state import BLACK, State
from harness.game import GameRecord, play_game
from harness.policy import Policy

DEFAULT_BUDGET = 2000
LEDGER_SCHEMA = 1


class BudgetExhausted(RuntimeError):
    """The arena's game budget is used up; no further game is played."""


class PrivilegedUsage(BaseModel):
    """Grants of the true simulator (their reasons) and calls made through them, by kind."""

    model_config = ConfigDict(frozen=True)

    grants: tuple[str, ...] = ()
    outcome_calls: int = 0
    rewards_calls: int = 0
    rollout_calls: int = 0
    table_calls: int = 0

    @property
    def uses(self) -> int:
        """All calls to any granted simulator."""
        return self.outcome_calls + self.rewards_calls + self.rollout_calls + self.table_calls

    @property
    def privileged(self) -> bool:
        """True once a simulator has been granted: results must then be labelled privileged."""
        return bool(self.grants)


class Ledger(BaseModel):
    """The budget ledger: completed games in order, the budget and privileged usage (JSON-serialisable).

    Immutable: the arena replaces its ledger with a new one after each game, so
    a ledger handed out is a snapshot that cannot be edited.
    """

    model_config = ConfigDict(frozen=True)

    schema_version: int = LEDGER_SCHEMA
    layout: str
    budget: int
    records: tuple[GameRecord, ...] = ()
    privileged: PrivilegedUsage = PrivilegedUsage()

    @property
    def games_played(self) -> int:
        return len(self.records)

    @property
    def remaining(self) -> int:
        return max(0, self.budget - self.games_played)


class Rollout(NamedTuple):
    """A random playout to the end: final disc counts, true rewards, and the seed to continue with."""

    black: int
    white: int
    rewards: tuple[int, int]
    seed: int


class Arena:
    """One environment behind a game budget (default 2,000 games).

    Public: ``rules``, ``layout``, ``budget``, ``games_played``, ``remaining``,
    ``ledger``, ``privileged_uses``, ``play()``, ``grant_simulator()``.
    Pass ``ledger`` to resume an interrupted run: its games count against the budget.
    """

    def __init__(self, env: Environment, budget: int = DEFAULT_BUDGET, ledger: Ledger | None = None) -> None:
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
            raise ValueError(f"budget={budget!r}: give a non-negative number of games")
        self._rules: Rules = env.rules
        self._condition: Condition = env.condition  # private: the hidden K, used only to score games
        if ledger is None:
            ledger = Ledger(layout=env.layout.name, budget=budget)
        elif ledger.layout != env.layout.name or ledger.budget != budget:
            raise ValueError(
                f"cannot resume: the ledger is for layout {ledger.layout!r} with budget {ledger.budget}, "
                f"this arena is {env.layout.name!r} with budget {budget}"
            )
        self._ledger = ledger
        self._in_game = False

    @property
    def rules(self) -> Rules:
        """The transition rules (layout, turn limit): public knowledge, no K."""
        return self._rules

    @property
    def layout(self) -> Layout:
        return self._rules.layout

    @property
    def budget(self) -> int:
        return self._ledger.budget

    @property
    def games_played(self) -> int:
        return self._ledger.games_played

    @property
    def remaining(self) -> int:
        return self._ledger.remaining

    @property
    def ledger(self) -> Ledger:
        """An immutable snapshot of the ledger."""
        return self._ledger

    @property
    def privileged_uses(self) -> PrivilegedUsage:
        """Simulator grants and calls so far."""
        return self._ledger.privileged

    def play(self, black_policy: Policy, white_policy: Policy) -> GameRecord:
        """Play one whole game and return its record (trajectory and terminal rewards).

        Raises :class:`BudgetExhausted` once ``budget`` games have been played.
        A game aborted by a bad proposal raises and is not counted.
        """
        if self.games_played >= self.budget:
            raise BudgetExhausted(
                f"budget of {self.budget} games used up: {self.games_played} games played on "
                f"{self.layout.name!r}; no further game is allowed"
            )
        if self._in_game:
            raise RuntimeError("Arena.play called from inside a game: games are played one at a time")
        self._in_game = True
        try:
            record = play_game(self._rules, self._condition, black_policy, white_policy)
        finally:
            self._in_game = False
        self._ledger = self._ledger.model_copy(update={"records": (*self._ledger.records, record.without_trajectory())})
        return record

    async def play_verified(self, decide_black: Any, decide_white: Any, names: tuple[str, str] | None = None) -> Any:
        """Like :meth:`play`, with verified deciders (model agents): returns (VerifiedGame, decisions).

        A forfeited game is a finished game: it is counted and uses budget.
        """
        from harness.verified_game import play_verified_game_async  # local: verified_game imports moves

        if self.games_played >= self.budget:
            raise BudgetExhausted(
                f"budget of {self.budget} games used up: {self.games_played} games played on "
                f"{self.layout.name!r}; no further game is allowed"
            )
        if self._in_game:
            raise RuntimeError("Arena.play_verified called from inside a game: games are played one at a time")
        self._in_game = True
        try:
            game, decisions = await play_verified_game_async(self._rules, self._condition, decide_black, decide_white, names)
        finally:
            self._in_game = False
        self._ledger = self._ledger.model_copy(update={"records": (*self._ledger.records, game.record.without_trajectory())})
        return game, decisions

    def grant_simulator(self, reason: str) -> PrivilegedSimulator:
        """A simulator with the true outcome rule; the grant and each use are recorded as privileged."""
        reason = _checked_reason(reason)
        self._count(grants=(*self._ledger.privileged.grants, reason))
        return PrivilegedSimulator(self._rules, self._condition, self._count_call, lambda: self.privileged_uses)

    def _count(self, **update: object) -> None:
        usage = self._ledger.privileged.model_copy(update=update)
        self._ledger = self._ledger.model_copy(update={"privileged": usage})

    def _count_call(self, kind: str) -> None:
        field = f"{kind}_calls"
        self._count(**{field: getattr(self._ledger.privileged, field) + 1})

    def __repr__(self) -> str:
        return f"Arena(layout={self.layout.name!r}, budget={self.budget}, games_played={self.games_played})"


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

    @property
    def usage(self) -> PrivilegedUsage:
        """Grants and calls so far (an immutable snapshot)."""
        return self._usage

    def grant_simulator(self, reason: str) -> PrivilegedSimulator:
        """A simulator with the true outcome rule; the grant and each use are recorded in :attr:`usage`."""
        reason = _checked_reason(reason)
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


def _checked_reason(reason: str) -> str:
    if not isinstance(reason, str) or not reason.strip():
        raise ValueError("grant_simulator needs a reason (e.g. 'MCTS baseline rollouts'); it is recorded")
    return reason.strip()


class PrivilegedSimulator:
    """The true outcome rule (with K), handed out only by :meth:`Arena.grant_simulator` and :class:`EvaluationGrants`.

    Every call is reported back to the grantor's usage record (the arena's
    ledger, or the evaluation grants), which :attr:`usage` shows.
    """

    def __init__(
        self, rules: Rules, condition: Condition, record_call: Callable[[str], None],
        read_usage: Callable[[], PrivilegedUsage],
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
        size = self.rules.layout.cells + 1
        table = np.zeros((size, size), dtype=np.int8)
        for own in range(size):
            for opp in range(size - own):
                table[own, opp] = self._condition.rewards(own, opp)[0]
        table.setflags(write=False)
        return table

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
