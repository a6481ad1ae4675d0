"""play_game: verified moves, forced passes, the record and its trajectory."""

from fractions import Fraction

import numpy as np
import pytest

from engine import BLACK, PASS, WHITE, IllegalMoveError, make_env
from engine.protocol.observation import observe, to_planes
from engine.protocol.policy import FunctionPolicy, Policy, RandomPolicy
from engine.protocol.record import GameRecord
from harness.play.game import IllegalProposalError, MoveTypeError, play_game

SMALL_WITH_OBSTACLES = 5  # 6x8 with 8 obstacles: passes are common


def random_game(env_id, seed):
    env = make_env(env_id)
    policy = RandomPolicy(np.random.default_rng(seed))
    return env, play_game(env.rules, env.condition, policy, policy)


def replay(rules, moves):
    state = rules.initial_state()
    for move in moves:
        state = rules.play(state, move)
    return state


def first_game_with_a_pass(env_id):
    for seed in range(200):
        env, record = random_game(env_id, seed)
        if PASS in record.moves:
            return env, seed, record
    raise AssertionError("no random game with a pass in 200 seeds")


@pytest.mark.parametrize("env_id", [0, 18, SMALL_WITH_OBSTACLES, 32, 48])
def test_record_is_consistent_with_the_rules(env_id):
    env, record = random_game(env_id, seed=env_id)
    final = replay(env.rules, record.moves)
    assert env.rules.is_over(final)
    assert (record.black, record.white) == env.rules.counts(final)
    assert record.plies == len(record.moves)
    assert record.rewards == env.condition.rewards(record.black, record.white)
    assert record.rho_exact(BLACK) + record.rho_exact(WHITE) == 1
    assert record.rho_exact(BLACK) == Fraction(record.black, record.black + record.white)
    assert record.rho_black == float(record.rho_exact(BLACK))
    assert record.layout == env.layout.name
    assert record.black_policy == record.white_policy == "random"


def test_record_json_round_trip_drops_only_the_trajectory():
    _, record = random_game(0, seed=1)
    loaded = GameRecord.model_validate_json(record.model_dump_json())
    assert loaded == record
    assert loaded.trajectory == () and record.trajectory
    assert isinstance(record.model_dump()["moves"], tuple | list)


def test_trajectory_holds_every_decision():
    env, record = random_game(SMALL_WITH_OBSTACLES, seed=3)
    decisions = [move for move in record.moves if move != PASS]
    assert [move for _, move in record.trajectory] == decisions
    state = env.rules.initial_state()
    steps = iter(record.trajectory)
    for move in record.moves:
        if move != PASS:
            obs, chosen = next(steps)
            assert obs.state == state and chosen == move and move in obs.legal_moves
            assert obs.colour == state.to_move
        state = env.rules.play(state, move)


def test_forced_pass_is_played_without_asking():
    env, seed, record = first_game_with_a_pass(SMALL_WITH_OBSTACLES)
    asked = []
    inner = RandomPolicy(np.random.default_rng(seed))

    def spy(obs):
        assert obs.legal_moves and PASS not in obs.legal_moves
        asked.append(obs.move_number)
        return inner.act(obs)

    policy = FunctionPolicy(spy)
    again = play_game(env.rules, env.condition, policy, policy)
    assert again.moves == record.moves  # same seed, same game
    assert len(asked) == len(record.moves) - record.moves.count(PASS)
    # The position before the pass: the mover's observation says it must pass.
    index = record.moves.index(PASS)
    state = replay(env.rules, record.moves[:index])
    obs = observe(env.rules, state)
    assert obs.legal_moves == (PASS,) and obs.must_pass
    assert not to_planes(obs)[1].any()


def test_illegal_proposal_is_refused_with_a_clear_message():
    env = make_env(0)
    board = FunctionPolicy(lambda obs: 0, name="corner-grabber")  # a1: never legal on move one
    random = RandomPolicy(np.random.default_rng(0))
    with pytest.raises(IllegalMoveError) as caught:
        play_game(env.rules, env.condition, board, random)
    error = caught.value
    assert isinstance(error, IllegalProposalError)
    message = str(error)
    assert "corner-grabber" in message and "black" in message and "a1" in message
    for move in ("e3", "f4", "c5", "d6"):  # the reference's mirrored start: black on d4 and e5
        assert move in message
    assert error.move == 0 and error.colour == BLACK and error.legal == (20, 29, 34, 43)


def test_illegal_proposal_by_white_names_white():
    env = make_env(0)
    random = RandomPolicy(np.random.default_rng(0))
    with pytest.raises(IllegalProposalError, match=r"'bad' \(white\) proposed the illegal move pass"):
        play_game(env.rules, env.condition, random, FunctionPolicy(lambda obs: PASS, name="bad"))


def test_off_board_proposal_is_refused():
    env = make_env(0)
    with pytest.raises(IllegalProposalError, match="999 \\(off the 8 x 8 board\\)"):
        play_game(env.rules, env.condition, FunctionPolicy(lambda obs: 999), FunctionPolicy(lambda obs: 999))


@pytest.mark.parametrize("proposal", ["e3", 20.0, None, True, [20]])
def test_non_integer_proposal_is_a_type_error(proposal):
    env = make_env(0)
    policy = FunctionPolicy(lambda obs: proposal, name="sloppy")
    with pytest.raises(TypeError) as caught:
        play_game(env.rules, env.condition, policy, policy)
    assert isinstance(caught.value, MoveTypeError)
    assert "sloppy" in str(caught.value) and type(proposal).__name__ in str(caught.value)
    assert "e3 = 20" in str(caught.value)


def test_numpy_integers_are_accepted():
    env = make_env(0)
    policy = FunctionPolicy(lambda obs: np.int64(obs.legal_moves[0]))
    record = play_game(env.rules, env.condition, policy, policy)
    assert all(type(move) is int for move in record.moves)
    assert env.rules.is_over(replay(env.rules, record.moves))


def test_policies_satisfy_the_protocol():
    assert isinstance(RandomPolicy(np.random.default_rng(0)), Policy)
    assert isinstance(FunctionPolicy(lambda obs: 0), Policy)
    with pytest.raises(TypeError, match="Generator"):
        RandomPolicy(0)  # type: ignore[arg-type]
