"""Observations: the mover's view of the board and the legal moves, never the condition."""

import dataclasses

import numpy as np
import pytest

from engine import BLACK, PASS, WHITE, Condition, Rules, make_env
from engine.protocol.observation import Observation, observe, to_planes

NO_CORNERS = 1  # layout index 1: 8x8 with the four corners blocked
RANDOM_12x10 = 32  # env 32: the 12x10 layout with 24 obstacles


def expected_grid(rules, state, colour):
    """The board built cell by cell from the state, for comparison."""
    layout = rules.layout
    grid = np.zeros(layout.shape, dtype=np.int8)
    for index in range(layout.cells):
        cell = layout.cell(index)
        if cell in layout.obstacles:
            grid[cell] = 2
        elif state.discs(colour) >> index & 1:
            grid[cell] = 1
        elif state.discs(1 - colour) >> index & 1:
            grid[cell] = -1
    return grid


@pytest.mark.parametrize("env_id", [NO_CORNERS, RANDOM_12x10])
def test_grid_from_each_colours_view(env_id):
    rules = make_env(env_id).rules
    black_to_move = rules.initial_state()
    white_to_move = rules.play(black_to_move, rules.legal_moves(black_to_move)[0])
    for state, colour in ((black_to_move, BLACK), (white_to_move, WHITE)):
        obs = observe(rules, state)
        assert obs.colour == colour
        assert obs.grid.dtype == np.int8 and obs.grid.shape == rules.layout.shape
        np.testing.assert_array_equal(obs.grid, expected_grid(rules, state, colour))
        assert (obs.grid == 2).sum() == len(rules.layout.obstacles) > 0
        black, white = rules.counts(state)
        own, opp = (black, white) if colour == BLACK else (white, black)
        assert (obs.grid == 1).sum() == own and (obs.grid == -1).sum() == opp
    # The same discs read with opposite signs from the two sides.
    after = observe(rules, white_to_move).grid
    from_black = rules.grid(white_to_move, BLACK)
    discs = np.isin(after, (1, -1))
    np.testing.assert_array_equal(after[discs], -from_black[discs])


def test_corner_obstacles_show_as_2():
    obs = observe(make_env(NO_CORNERS).rules, make_env(NO_CORNERS).rules.initial_state())
    assert [obs.grid[r, c] for r, c in ((0, 0), (0, 7), (7, 0), (7, 7))] == [2, 2, 2, 2]


def test_legal_moves_colour_and_move_number():
    rules = make_env(RANDOM_12x10).rules
    state = rules.initial_state()
    for placed in range(6):
        obs = observe(rules, state)
        assert obs.legal_moves == tuple(rules.legal_moves(state))
        assert obs.colour == state.to_move
        assert obs.move_number == placed
        assert obs.state == state and obs.rules is rules
        state = rules.play(state, obs.legal_moves[-1])


def test_grid_is_read_only_and_record_frozen():
    obs = observe(make_env(0).rules, make_env(0).rules.initial_state())
    with pytest.raises(ValueError):
        obs.grid[0, 0] = 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        obs.colour = WHITE  # type: ignore[misc]
    assert isinstance(obs.legal_moves, tuple)


def test_observation_holds_no_condition_and_rules_hold_no_k():
    env = make_env(18)  # K = 0.8
    obs = observe(env.rules, env.rules.initial_state())
    names = {field.name for field in dataclasses.fields(Observation)}
    assert names == {"grid", "legal_moves", "colour", "move_number", "state", "rules"}
    for name in names:
        assert not isinstance(getattr(obs, name), Condition)
    assert {field.name for field in dataclasses.fields(Rules)} == {"layout", "turn_limit", "turn_counting"}
    assert not any(isinstance(value, Condition) for value in vars(obs.rules).values())
    assert not hasattr(obs.rules, "k") and not hasattr(obs.rules, "condition")


@pytest.mark.parametrize("env_id", [0, NO_CORNERS, RANDOM_12x10])
def test_planes_and_mask(env_id):
    rules = make_env(env_id).rules
    obs = observe(rules, rules.initial_state())
    planes, mask = to_planes(obs)
    rows, cols = rules.layout.shape
    assert planes.dtype == np.float32 and planes.shape == (3, rows, cols)
    assert mask.dtype == np.int8 and mask.shape == (rows * cols,)
    np.testing.assert_array_equal(planes[0], obs.grid == 1)
    np.testing.assert_array_equal(planes[1], obs.grid == -1)
    np.testing.assert_array_equal(planes[2], obs.grid == 2)
    assert planes.sum(axis=0).max() == 1.0
    assert sorted(np.flatnonzero(mask)) == sorted(obs.legal_moves)


def test_mask_is_empty_when_the_mover_must_pass():
    rules = make_env(0).rules
    obs = Observation(np.zeros((8, 8), np.int8), (PASS,), BLACK, 0, rules.initial_state(), rules)
    assert obs.must_pass
    assert not to_planes(obs)[1].any()
