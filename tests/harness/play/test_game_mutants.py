"""What the game loop left free (survivors of `make mutation MODULES=play`).

Pinned here: who a forfeit is scored against and the failure kind it names (the last attempt's),
an unscored game's (0, 0), the names a game is recorded under, awaitable deciders, the refusal
texts (the legal moves joined by ", "), a decider that awaits where none may, and the ply of a
colour's first decision after the other colour moved more than once.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from engine import make_env
from engine.protocol.observation import observe
from engine.protocol.policy import FunctionPolicy
from engine.state import BLACK, WHITE
from harness.play.decisions import Attempt, FailureKind, MoveDecision
from harness.play.game import (
    IllegalProposalError,
    MoveTypeError,
    _run_without_loop,
    decision_ply,
    from_policy,
    play_game_sync,
    play_policies,
)

ENV = make_env(0)  # standard 8x8: black's first legal moves are e3, f4, c5, d6 (20, 29, 34, 43)


def first_legal(obs):
    return MoveDecision(obs.legal_moves[0], False, [])


async def first_legal_later(obs):
    return first_legal(obs)


def failed(kind):
    return Attempt(messages=(), text=None, finish_reason=None, parsed=None, verdict="call_failed", failure_kind=kind)


def forfeits_after(*kinds):
    def decide(obs):
        return MoveDecision(None, True, [failed(kind) for kind in kinds])

    return decide


def test_a_forfeit_is_scored_against_who_forfeited_whatever_the_discs_say():
    assert ENV.condition.rewards(2, 2) == (0, 0)  # the position both forfeits below stop at
    black_gave_up, _ = play_game_sync(ENV.rules, ENV.condition, forfeits_after(), first_legal)
    assert black_gave_up.record.rewards == (-1, 1) and black_gave_up.forfeit_by == BLACK
    assert black_gave_up.forfeit.ply == 0 and black_gave_up.forfeit.kind is None
    white_gave_up, decisions = play_game_sync(ENV.rules, ENV.condition, first_legal, forfeits_after())
    assert white_gave_up.record.rewards == (1, -1) and white_gave_up.forfeit_by == WHITE
    assert white_gave_up.record.moves == (20,) and white_gave_up.forfeit.ply == 1
    assert [(d.ply, d.colour) for d in decisions] == [(0, BLACK), (1, WHITE)]


def test_a_forfeit_names_the_last_attempt_s_failure():
    kinds = (FailureKind.PARSE_ERROR, FailureKind.TIMEOUT, FailureKind.EMPTY_OR_REFUSAL)
    game, _ = play_game_sync(ENV.rules, ENV.condition, forfeits_after(*kinds), first_legal)
    assert game.forfeit.kind is FailureKind.EMPTY_OR_REFUSAL
    assert game.failures[BLACK].of(FailureKind.TIMEOUT) == 1 and game.failures[BLACK].forfeits == 1


def test_an_unscored_game_keeps_rewards_at_zero_and_a_scored_one_gets_the_condition_s():
    scored, _ = play_game_sync(ENV.rules, ENV.condition, first_legal, first_legal)
    record = scored.record
    assert record.rewards == ENV.condition.rewards(record.black, record.white) != (0, 0)
    unscored, _ = play_game_sync(ENV.rules, None, first_legal, first_legal)
    assert unscored.record.moves == record.moves and unscored.record.rewards == (0, 0)
    assert play_policies(
        ENV.rules, None, FunctionPolicy(lambda obs: obs.legal_moves[0]), FunctionPolicy(lambda obs: obs.legal_moves[-1])
    ).record.rewards == (0, 0)


def test_a_game_is_recorded_under_the_names_given_and_awaitable_deciders_are_awaited():
    game, decisions = play_game_sync(ENV.rules, ENV.condition, first_legal_later, first_legal, names=("alpha", "beta"))
    plain, _ = play_game_sync(ENV.rules, ENV.condition, first_legal, first_legal)
    assert (game.record.black_policy, game.record.white_policy) == ("alpha", "beta")
    assert game.record.moves == plain.record.moves and len(decisions) > 10


def test_a_decider_returning_something_else_is_refused_by_type():
    with pytest.raises(TypeError) as refused:
        play_game_sync(ENV.rules, ENV.condition, lambda obs: 19, first_legal)
    assert str(refused.value) == "a decider must return a MoveDecision, got int"


def test_a_policy_becomes_a_decider_that_never_forfeits_nor_attempts():
    decide = from_policy(FunctionPolicy(lambda obs: obs.legal_moves[-1], name="last"))
    decision = decide(observe(ENV.rules, ENV.rules.initial_state()))
    assert decision.move == 43 and decision.forfeited is False and decision.attempts == []
    assert decide.name == "last"


def test_the_refusals_list_the_legal_moves():
    illegal = IllegalProposalError("p", BLACK, 0, (19, 26, 37), ENV.rules)
    assert str(illegal) == "policy 'p' (black) proposed the illegal move a1; legal moves: d3, c4, f5. The move was not played."
    wrong_type = MoveTypeError("p", WHITE, "d3", (19, 26), ENV.rules)
    assert str(wrong_type) == (
        "policy 'p' (white) returned 'd3' of type str; act() must return a flat move index "
        "(int, row * cols + col). Legal moves: d3 = 19, c4 = 26"
    )


class _Suspend:
    def __await__(self):
        yield


def test_a_game_stepped_without_a_loop_refuses_a_decider_that_awaits():
    async def awaits():
        await _Suspend()
        return 1

    with pytest.raises(RuntimeError) as refused:
        _run_without_loop(awaits())
    assert str(refused.value) == "a decider awaited something: play such games with play_game_async or play_game_sync"


def test_a_first_decision_after_the_other_colour_moved_twice():
    start = observe(ENV.rules, ENV.rules.initial_state())
    assert decision_ply(None, replace(start, colour=BLACK, move_number=0)) == 0
    assert decision_ply(None, replace(start, colour=BLACK, move_number=1)) == 2  # black passed, white placed one
    assert decision_ply(None, replace(start, colour=BLACK, move_number=3)) == 6
    assert decision_ply(None, replace(start, colour=WHITE, move_number=0)) == 1  # black passed at once
    assert decision_ply(None, replace(start, colour=WHITE, move_number=1)) == 1
    assert decision_ply(None, replace(start, colour=WHITE, move_number=2)) == 3  # white passed once between
    assert decision_ply((3, 2), replace(start, colour=WHITE, move_number=3)) == 5
    assert decision_ply((3, 2), replace(start, colour=WHITE, move_number=6)) == 9
