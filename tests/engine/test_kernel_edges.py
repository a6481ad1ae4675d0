"""Kernel and rule paths the other engine tests pass by, checked against the pure-Python reference
or hand-written values: perft through forced passes and at a finished game, the random-games
total, the empty-board outcome, the condition's description and the rules' refusals.
Part of the JIT-off run of `make coverage-floor` (fast in pure Python)."""

from __future__ import annotations

import random

import numpy as np
import pytest
import reference_othello as ref
from test_playout_passes import endgame_with_passes

from engine import kernels
from engine.condition import Condition
from engine.environments import make_env
from engine.layout import standard_layout
from engine.playouts import random_games
from engine.rules import IllegalMoveError, Rules


@pytest.mark.parametrize(("env_id", "seed"), [(0, 1), (1, 3)])
def test_perft_through_forced_passes_equals_the_reference(env_id, seed):
    rules, state, mirror = endgame_with_passes(env_id, empties=5, seed=seed)
    for depth in range(4):
        assert rules.perft(state, depth) == ref.perft(mirror, depth)


def _finished(env_id: int, seed: int):
    env = make_env(env_id)
    rules, rng = env.rules, random.Random(seed)
    state, mirror = rules.initial_state(), ref.initial_state(env.layout)
    while ref.legal_moves(mirror):
        move = rng.choice(ref.legal_moves(mirror))
        state, mirror = rules.play(state, move), ref.play(mirror, move)
    return rules, state


def test_a_finished_game_is_one_leaf_and_plays_no_more_placements():
    rules, state = _finished(6, seed=2)
    assert rules.is_over(state)
    assert [rules.perft(state, depth) for depth in (0, 1, 3)] == [1, 1, 1]
    assert random_games(rules, state, 3, seed=5) == 0


def test_random_games_totals_the_placements_of_each_game():
    rules, state, _ = endgame_with_passes(0, empties=5, seed=1)
    g = rules.geometry
    seed, expected = np.uint64(77), 0
    for _ in range(4):  # the same games, one by one, each seeded by the one before
        *_, plies, seed = kernels.random_playout(
            g.words(state.own),
            g.words(state.opponent),
            state.placed(state.to_move),
            state.placed(1 - state.to_move),
            *rules.limit_args,
            g.kernel_args,
            np.uint64(seed),
            -1,  # compiled code hands the seed back as an int
        )
        assert 1 <= plies <= 5  # five empty cells, at least one placement before the end
        expected += plies
    assert random_games(rules, state, 4, seed=77) == expected


def test_no_discs_is_no_win_and_the_description_names_the_interval():
    condition = Condition(0.8, turn_limit=30)
    assert condition.wins(0, 0) is False and condition.rewards(0, 0) == (0, 0)
    assert condition.describe() == "K=0.8 (win iff rho in (0.5, 0.8)), 30 turns"
    assert Condition(0.25).describe() == "K=0.25 (win iff rho in (0.25, 0.5))"


def test_rules_refuse_an_unknown_counting_a_negative_depth_and_an_illegal_move():
    layout = standard_layout(8, 8)
    with pytest.raises(ValueError, match="turn_counting='weekly'"):
        Rules(layout, turn_counting="weekly")
    rules = Rules(layout)
    with pytest.raises(ValueError, match="perft depth -1"):
        rules.perft(rules.initial_state(), -1)
    with pytest.raises(IllegalMoveError, match=r"illegal move .* for black; legal moves: "):
        rules.play(rules.initial_state(), 0)


def test_grid_marks_own_opponent_empty_and_obstacle_cells():
    env = make_env(1)  # a layout with obstacles
    rules = env.rules
    state = rules.initial_state()
    mirror = ref.initial_state(env.layout)
    expected = [2 if c == ref.OBSTACLE else 0 if c == ref.EMPTY else (1 if c == mirror.to_move else -1) for c in mirror.cells]
    assert rules.grid(state).ravel().tolist() == expected
    assert rules.grid(state, 1 - state.to_move).ravel().tolist() == [-v if v in (1, -1) else v for v in expected]
