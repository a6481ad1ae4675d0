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

Privilege is configuration: an arena built with ``privileged=True`` (for an
agent whose registry entry is privileged, such as MCTS with real rollouts) hands
out a :class:`PrivilegedSimulator` through :meth:`Arena.grant_simulator`; every
grant and every call is counted in the ledger, so results can be labelled
privileged. Any other arena refuses the request with :class:`PrivilegeRefused`
and records the refusal in the ledger, where the reports read it.

This in-process arena is for quick experiments from Python: an agent in the same
process could still reach the condition (private attributes, the call stack), so
runs that must hold against a cheating agent go through the referee
(:mod:`harness.referee`), and every run records which of the two it used.
Frozen evaluation matches, which play outside any arena, get their simulators
from :class:`EvaluationGrants` (or :func:`evaluation_simulator`), which keeps its
own usage record the same way.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from engine.condition import Condition
from engine.environments import Environment
from engine.layout import Layout
from engine.protocol.arena import DEFAULT_BUDGET, BudgetExhausted, Ledger, PrivilegedUsage, PrivilegeRefused
from engine.protocol.policy import Policy
from engine.protocol.record import GameRecord
from engine.rules import Rules
from harness.play.game import Decide, PlyDecision, VerifiedGame, play_game_async, play_policies
from harness.play.grants import PrivilegedSimulator, checked_reason, refusal_message
from harness.play.open_games import OpenGames


class LedgerView:
    """What every arena shows: the public rules and the ledger's counts (``_rules`` and ``_ledger`` set by the arena)."""

    _rules: Rules
    _ledger: Ledger

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


class Arena(LedgerView):
    """One environment behind a game budget (default 2,000 games).

    Public: ``rules``, ``layout``, ``budget``, ``games_played``, ``remaining``,
    ``ledger``, ``privileged_uses``, ``play()``, ``grant_simulator()``.
    Pass ``ledger`` to resume an interrupted run: its games count against the budget.
    """

    def __init__(self, env: Environment, budget: int = DEFAULT_BUDGET, ledger: Ledger | None = None, *, privileged: bool = False) -> None:
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
        self._privileged = privileged
        self._in_game = False
        self._open = OpenGames()  # play_verified games under way (a wave), entered in the order they started

    @property
    def privileged_uses(self) -> PrivilegedUsage:
        """Simulator grants and calls so far."""
        return self._ledger.privileged

    def play(self, black_policy: Policy, white_policy: Policy) -> GameRecord:
        """Play one whole game and return its record (trajectory and terminal rewards).

        Raises :class:`BudgetExhausted` once ``budget`` games have been played.
        A game aborted by a bad proposal raises and is not counted.
        """
        with self._one_game("Arena.play"):
            game = play_policies(self._rules, self._condition, black_policy, white_policy)
            self._enter(game)
        return game.record

    async def play_verified(
        self, decide_black: Decide, decide_white: Decide, names: tuple[str, str] | None = None
    ) -> tuple[VerifiedGame, list[PlyDecision]]:
        """Like :meth:`play`, with deciders that may await (model agents): returns (VerifiedGame, decisions).

        A forfeited game is a finished game: it is counted and uses budget. Several may be under way at once
        (a wave of adaptation games); they are entered in the order they started (:mod:`harness.play.open_games`).
        """
        async with self._open.game(lambda: self._check_start("Arena.play_verified")) as turn:
            game, decisions = await play_game_async(self._rules, self._condition, decide_black, decide_white, names)
            async with turn():
                self._enter(game)
        return game, decisions

    @contextmanager
    def _one_game(self, caller: str) -> Iterator[None]:
        """Refuse a game past the budget or inside another game; the budget is checked before anything is played."""
        self._check_start(caller)
        if self._open.open:
            raise RuntimeError(f"{caller} called while play_verified games are open: games are played one at a time")
        self._in_game = True
        try:
            yield
        finally:
            self._in_game = False

    def _check_start(self, caller: str) -> None:
        """Refuse a game past the budget (the open games count) or inside a synchronous game."""
        if self.games_played + self._open.open >= self.budget:
            raise BudgetExhausted(
                f"budget of {self.budget} games used up: {self.games_played} games played on "
                f"{self.layout.name!r} and {self._open.open} under way; no further game is allowed"
            )
        if self._in_game:
            raise RuntimeError(f"{caller} called from inside a game: games are played one at a time")

    def _enter(self, game: VerifiedGame) -> None:
        """Append a finished game to the ledger (a new immutable snapshot)."""
        self._ledger = self._ledger.model_copy(update={"records": (*self._ledger.records, game.record.without_trajectory())})

    def grant_simulator(self, reason: str) -> PrivilegedSimulator:
        """A simulator with the true outcome rule (privileged arenas only); the grant and each use are recorded.

        On an arena built without ``privileged=True`` the request is recorded in
        ``ledger.privileged.refused`` and raises :class:`PrivilegeRefused`.
        """
        reason = checked_reason(reason)
        if not self._privileged:
            self._count(refused=(*self._ledger.privileged.refused, reason))
            raise PrivilegeRefused(refusal_message(reason))
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
