"""One game played with verified model decisions; a forfeit ends it as a loss.

The game loop is async (:func:`play_verified_game_async`), so a decision can
await a model call; :func:`play_verified_game` runs it with ``asyncio.run`` for
synchronous callers (not from inside a running event loop: await the async one
there). A decider is ``observation -> MoveDecision`` (plain or awaitable), e.g.
``lambda obs: asker.decide(obs, render(obs))``; :func:`from_policy` wraps a
classical :class:`~harness.policy.Policy` so it can play the other side.

Forced passes are played without asking, as in :func:`harness.game.play_game`.
Every move is checked against the rules again before it is played; a decider
that returns an illegal move raises :class:`~harness.game.IllegalProposalError`.

Forfeit: when a decision is forfeited the game stops at that ply. The record
keeps the moves played so far and the disc counts as they stand; rewards are
(-1, +1) if black forfeited, (+1, -1) if white did, whatever the condition
would say about those counts, and ``forfeit`` records who and at which ply
(``GameEntry.forfeit_by`` in the transcript).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from engine.condition import Condition
from engine.rules import Rules
from engine.state import BLACK, COLOUR_NAMES, PASS, WHITE, State
from harness.game import GameRecord, IllegalProposalError, Step, _rho
from harness.moves import FailureCounts, FailureKind, MoveDecision
from harness.observation import Observation
from harness.policy import Policy, policy_name

Decide = Callable[[Observation], "Awaitable[MoveDecision] | MoveDecision"]


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
    """A decider that asks a classical policy (no model, so no attempts); its move is still verified."""

    def decide(obs: Observation) -> MoveDecision:
        return MoveDecision(int(policy.act(obs)), False, [])

    decide.name = policy_name(policy)  # type: ignore[attr-defined]
    return decide


async def play_verified_game_async(
    rules: Rules, condition: Condition, decide_black: Decide, decide_white: Decide,
    names: tuple[str, str] | None = None,
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
            obs = _observe(rules, state, legal)
            decision = await _decision(deciders[state.to_move], obs)
            decisions.append(PlyDecision(len(moves), state.to_move, decision))
            if decision.forfeited:
                last = decision.attempts[-1].failure_kind if decision.attempts else None
                forfeit = Forfeit(state.to_move, len(moves), last)
                break
            move = decision.move  # type: ignore[assignment]
            if move not in obs.legal_moves:
                raise IllegalProposalError(names[state.to_move], state.to_move, move, obs.legal_moves, rules)
            trajectory.append((obs, move))
        state = rules.play(state, move)
        moves.append(move)
    record = _record(rules, condition, state, names, moves, trajectory, forfeit)
    failures = tuple(FailureCounts.of_decisions([d.decision for d in decisions if d.colour == c]) for c in (BLACK, WHITE))
    return VerifiedGame(record, forfeit, failures), decisions  # type: ignore[arg-type]


def play_verified_game(
    rules: Rules, condition: Condition, decide_black: Decide, decide_white: Decide,
    names: tuple[str, str] | None = None,
) -> tuple[VerifiedGame, list[PlyDecision]]:
    """:func:`play_verified_game_async` run to completion with ``asyncio.run`` (not inside a running loop)."""
    return asyncio.run(play_verified_game_async(rules, condition, decide_black, decide_white, names))


def _observe(rules: Rules, state: State, legal: list[int]) -> Observation:
    """:func:`~harness.observation.observe` with the legal moves already computed (not computed again)."""
    grid = rules.grid(state, state.to_move)
    grid.flags.writeable = False
    return Observation(grid, tuple(legal), state.to_move, state.placed_black + state.placed_white, state, rules)


async def _decision(decide: Decide, obs: Observation) -> MoveDecision:
    decision = decide(obs)
    if inspect.isawaitable(decision):
        decision = await decision
    if not isinstance(decision, MoveDecision):
        raise TypeError(f"a decider must return a MoveDecision, got {type(decision).__name__}")
    return decision


def _record(
    rules: Rules, condition: Condition, state: State, names: tuple[str, str], moves: list[int],
    trajectory: list[Step], forfeit: Forfeit | None,
) -> GameRecord:
    black, white = rules.counts(state)
    if forfeit is None:
        rewards = condition.rewards(black, white)
    else:
        rewards = (-1, 1) if forfeit.colour == BLACK else (1, -1)
    record = GameRecord(
        layout=rules.layout.name, black_policy=names[0], white_policy=names[1], moves=tuple(moves),
        black=black, white=white, rho_black=float(_rho(black, white)), rho_white=float(_rho(white, black)),
        rewards=rewards, plies=len(moves),
    )
    record._trajectory = tuple(trajectory)
    return record
