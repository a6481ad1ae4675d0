"""The one game loop: every game, classical or model-driven, is played here and every move verified.

:func:`play_game_async` is the loop. Each side is a *decider*, ``observation ->
MoveDecision`` (plain or awaitable), so a decision can await a model call; a
classical :class:`~engine.protocol.policy.Policy` becomes a decider through
:func:`from_policy`. Two synchronous wrappers call the same loop:
:func:`play_game` for two classical policies (it steps the loop without an event
loop, since a policy never awaits) and :func:`play_game_sync` for deciders that
may await (``asyncio.run``; not from inside a running loop).

What the loop guarantees, whoever decides:

- Deciders see :class:`~engine.protocol.observation.Observation` values only; the
  condition (threshold K) is used once, on the final disc counts, for the rewards.
  With ``condition=None`` the game is *unscored*: rewards stay (0, 0) (forfeits
  aside) until the referee, which holds K, scores the moves (:mod:`harness.referee`).
- Forced passes are played without asking. The game ends when neither side can
  move or the turn limit is reached (``rules.legal_moves`` is then empty).
- A proposal that is not a move index raises :class:`MoveTypeError`, an illegal
  one :class:`IllegalProposalError`; neither is ever played. (Re-asking a model
  with the reason is the decider's job, a layer above: see
  :class:`harness.prompting.moves.MoveAsker`.)
- Forfeit: a decision with ``forfeited=True`` stops the game at that ply. The
  record keeps the moves played so far and the disc counts as they stand;
  rewards are (-1, +1) if black forfeited, (+1, -1) if white did, whatever the
  condition would say, and :attr:`VerifiedGame.forfeit` says who and at which ply.
"""

from __future__ import annotations

import asyncio
import inspect
import numbers
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

from engine.condition import Condition
from engine.notation import NotationError, format_move
from engine.protocol.observation import Observation, observe
from engine.protocol.policy import Policy, policy_name
from engine.protocol.record import GameRecord, Step, rho_fraction
from engine.rules import IllegalMoveError, Rules
from engine.state import BLACK, COLOUR_NAMES, PASS, WHITE, State
from harness.play.decisions import FailureCounts, FailureKind, MoveDecision

Decide = Callable[[Observation], "Awaitable[MoveDecision] | MoveDecision"]
T = TypeVar("T")


class IllegalProposalError(IllegalMoveError):
    """A policy proposed a move the rules do not allow; it was not played."""

    def __init__(self, policy: str, colour: int, move: int, legal: tuple[int, ...], rules: Rules) -> None:
        self.policy, self.colour, self.move, self.legal = policy, colour, move, legal
        options = ", ".join(move_notation(m, rules) for m in legal)
        super().__init__(
            f"policy {policy!r} ({COLOUR_NAMES[colour]}) proposed the illegal move {move_notation(move, rules)}; "
            f"legal moves: {options}. The move was not played."
        )


class MoveTypeError(TypeError):
    """A policy returned something that is not a move index (an int, or PASS = -1)."""

    def __init__(self, policy: str, colour: int, proposal: object, legal: tuple[int, ...], rules: Rules) -> None:
        self.policy, self.colour, self.proposal, self.legal = policy, colour, proposal, legal
        options = ", ".join(f"{move_notation(m, rules)} = {m}" for m in legal)
        super().__init__(
            f"policy {policy!r} ({COLOUR_NAMES[colour]}) returned {proposal!r} of type {type(proposal).__name__}; "
            f"act() must return a flat move index (int, row * cols + col). Legal moves: {options}"
        )


@dataclass(frozen=True)
class PlyDecision:
    """The decision taken at one ply (forced passes are not decisions)."""

    ply: int
    colour: int
    decision: MoveDecision


@dataclass(frozen=True)
class Forfeit:
    """A colour gave up the game at ``ply`` after its retries ran out (``kind``: its last failure)."""

    colour: int
    ply: int
    kind: FailureKind | None

    @property
    def colour_name(self) -> str:
        return COLOUR_NAMES[self.colour]


@dataclass(frozen=True)
class VerifiedGame:
    """A finished (or forfeited) game: the record, who forfeited, and failure counts by colour."""

    record: GameRecord
    forfeit: Forfeit | None
    failures: tuple[FailureCounts, FailureCounts]

    @property
    def forfeit_by(self) -> int | None:
        return None if self.forfeit is None else self.forfeit.colour

    @property
    def failure_counts(self) -> FailureCounts:
        """Both colours together."""
        return self.failures[BLACK] + self.failures[WHITE]


def from_policy(policy: Policy) -> Decide:
    """A decider that asks a classical policy (no model, so no attempts); the loop verifies its move."""

    def decide(obs: Observation) -> MoveDecision:
        return MoveDecision(policy.act(obs), False, [])

    decide.name = policy_name(policy)  # type: ignore[attr-defined]
    return decide


async def play_game_async(
    rules: Rules, condition: Condition | None, decide_black: Decide, decide_white: Decide, names: tuple[str, str] | None = None
) -> tuple[VerifiedGame, list[PlyDecision]]:
    """Play one game from the initial state; returns the result and every decision in play order."""
    deciders = (decide_black, decide_white)
    names = names or (policy_name(decide_black), policy_name(decide_white))
    state = rules.initial_state()
    moves: list[int] = []
    trajectory: list[Step] = []
    decisions: list[PlyDecision] = []
    forfeit: Forfeit | None = None
    while True:
        legal = rules.legal_moves(state)
        if not legal:
            break
        if legal == [PASS]:
            move = PASS
        else:
            obs = observe(rules, state, legal)
            decision = await _decision(deciders[state.to_move], obs)
            decisions.append(PlyDecision(len(moves), state.to_move, decision))
            if decision.forfeited:
                last = decision.attempts[-1].failure_kind if decision.attempts else None
                forfeit = Forfeit(state.to_move, len(moves), last)
                break
            move = _verified(decision.move, names[state.to_move], obs, rules)
            trajectory.append((obs, move))
        state = rules.play(state, move)
        moves.append(move)
    record = _record(rules, condition, state, names, moves, trajectory, forfeit)
    failures = (
        FailureCounts.of_decisions([d.decision for d in decisions if d.colour == BLACK]),
        FailureCounts.of_decisions([d.decision for d in decisions if d.colour == WHITE]),
    )
    return VerifiedGame(record, forfeit, failures), decisions


def decision_ply(previous: tuple[int, int] | None, observation: Observation) -> int:
    """The ply of a decision, from the mover's own view: ``previous`` is its last decision's (ply, move_number) this game.

    Plies count moves and passes. Between two decisions of one colour the opponent
    placed ``n`` discs; the mover's forced passes sit between those placements, and
    the opponent can pass only right before the mover's decision (a pass after a
    forced pass ends the game), so the next decision is ``2 * max(n, 1)`` plies
    later. Before a colour's first decision the same reasoning gives ``2n`` for
    black and ``max(2n - 1, 1)`` for white, ``n`` the opponent's placements so far.
    """
    if previous is None:
        placed = observation.move_number
        return 2 * placed if observation.colour == BLACK else max(2 * placed - 1, 1)
    ply, move_number = previous
    return ply + 2 * max(observation.move_number - move_number - 1, 1)


def play_game_sync(
    rules: Rules, condition: Condition | None, decide_black: Decide, decide_white: Decide, names: tuple[str, str] | None = None
) -> tuple[VerifiedGame, list[PlyDecision]]:
    """:func:`play_game_async` run to completion with ``asyncio.run`` (not inside a running loop)."""
    return asyncio.run(play_game_async(rules, condition, decide_black, decide_white, names))


def play_game(rules: Rules, condition: Condition, black_policy: Policy, white_policy: Policy) -> GameRecord:
    """Play one game between two classical policies and return its record (trajectory attached).

    Raises :class:`IllegalProposalError` (an ``IllegalMoveError``) or
    :class:`MoveTypeError` if a policy proposes a bad move; nothing is played then.
    The same policy object may play both colours (self-play).
    """
    return play_policies(rules, condition, black_policy, white_policy).record


def play_policies(rules: Rules, condition: Condition | None, black_policy: Policy, white_policy: Policy) -> VerifiedGame:
    """:func:`play_game_async` for two classical policies, stepped without an event loop (a policy never awaits)."""
    game, _ = _run_without_loop(play_game_async(rules, condition, from_policy(black_policy), from_policy(white_policy)))
    return game


def _run_without_loop(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine that never suspends (every decider answered at once) without an event loop."""
    try:
        coroutine.send(None)
    except StopIteration as finished:
        return finished.value  # type: ignore[no-any-return]
    coroutine.close()
    raise RuntimeError("a decider awaited something: play such games with play_game_async or play_game_sync")


async def _decision(decide: Decide, obs: Observation) -> MoveDecision:
    decision = decide(obs)
    if inspect.isawaitable(decision):
        decision = await decision
    if not isinstance(decision, MoveDecision):
        raise TypeError(f"a decider must return a MoveDecision, got {type(decision).__name__}")
    return decision


def _verified(proposal: object, name: str, obs: Observation, rules: Rules) -> int:
    """The proposal as a plain int, after checking that it is a move index and one of the legal moves."""
    if isinstance(proposal, bool) or not isinstance(proposal, numbers.Integral):
        raise MoveTypeError(name, obs.colour, proposal, obs.legal_moves, rules)
    move = int(proposal)
    if move not in obs.legal_moves:
        raise IllegalProposalError(name, obs.colour, move, obs.legal_moves, rules)
    return move


def _record(
    rules: Rules,
    condition: Condition | None,
    state: State,
    names: tuple[str, str],
    moves: list[int],
    trajectory: list[Step],
    forfeit: Forfeit | None,
) -> GameRecord:
    black, white = rules.counts(state)
    if forfeit is None:
        rewards = condition.rewards(black, white) if condition is not None else (0, 0)
    else:
        rewards = (-1, 1) if forfeit.colour == BLACK else (1, -1)
    record = GameRecord(
        layout=rules.layout.name,
        black_policy=names[0],
        white_policy=names[1],
        moves=tuple(moves),
        black=black,
        white=white,
        rho_black=float(rho_fraction(black, white)),
        rho_white=float(rho_fraction(white, black)),
        rewards=rewards,
        plies=len(moves),
    )
    record._trajectory = tuple(trajectory)
    return record


def move_notation(move: int, rules: Rules) -> str:
    """``d3`` (or ``pass``); a move off the board is shown as its index, saying so."""
    try:
        return format_move(move, rules.layout)
    except NotationError:
        return f"{move} (off the {rules.layout.rows} x {rules.layout.cols} board)"
