"""The positional table (SWH on plain 8x8, derived elsewhere), corners, WPC and the positional agent."""

from __future__ import annotations

import numpy as np
import pytest

from agents.base import AgentContext
from agents.heuristic.positional import SWH_TABLE, PositionalAgent, corner_cells, corner_neighbours, derived_table, positional_table, wpc
from engine import PASS, make_env
from engine.environments import layouts
from engine.layout import standard_layout
from engine.layout_gen import random_layouts
from engine.protocol.observation import observe
from harness.registry.specs import make_agent

STANDARD, NO_CORNERS, PARTIAL_C, X_SQUARES, BOARD_12X10 = 0, 1, 2, 3, 4
SWH_FIRST_ROWS = [
    [1, -0.25, 0.1, 0.05, 0.05, 0.1, -0.25, 1],
    [-0.25, -0.25, 0.01, 0.01, 0.01, 0.01, -0.25, -0.25],
    [0.1, 0.01, 0.05, 0.02, 0.02, 0.05, 0.01, 0.1],
    [0.05, 0.01, 0.02, 0.01, 0.01, 0.02, 0.01, 0.05],
]


def test_the_8x8_table_is_swh():
    table = positional_table(layouts()[STANDARD])
    assert table.dtype == np.float64 and table.shape == (64,)
    grid = table.reshape(8, 8)
    assert np.array_equal(grid[:4], np.array(SWH_FIRST_ROWS))
    assert np.array_equal(grid, grid[::-1]) and np.array_equal(grid, grid[:, ::-1]) and np.array_equal(grid, grid.T)
    assert np.array_equal(table, SWH_TABLE.reshape(-1))


def test_any_plain_8x8_layout_gets_swh_and_tables_are_cached_read_only():
    layout = standard_layout(8, 8, name="another plain 8x8")
    table = positional_table(layout)
    assert np.array_equal(table, SWH_TABLE.reshape(-1))
    assert positional_table(layout) is table
    with pytest.raises(ValueError):
        table[0] = 5.0
    derived = positional_table(layouts()[NO_CORNERS])
    assert positional_table(layouts()[NO_CORNERS]) is derived
    assert not derived.flags.writeable


def test_the_derived_table_of_plain_8x8_matches_swh():
    derived = derived_table(layouts()[STANDARD])
    assert np.allclose(derived, SWH_TABLE.reshape(-1), rtol=0, atol=1e-12)


def test_corners_of_plain_8x8_and_their_c_and_x_cells():
    layout = layouts()[STANDARD]
    assert corner_cells(layout) == ((0, 0), (0, 7), (7, 0), (7, 7))
    hood = corner_neighbours(layout)
    assert hood[(0, 0)].c_cells == ((0, 1), (1, 0)) and hood[(0, 0)].x_cells == ((1, 1),)
    assert hood[(7, 7)].c_cells == ((6, 7), (7, 6)) and hood[(7, 7)].x_cells == ((6, 6),)


def test_on_no_corners_the_old_c_squares_become_corners():
    layout = layouts()[NO_CORNERS]
    assert set(corner_cells(layout)) == {(0, 1), (1, 0), (0, 6), (1, 7), (6, 0), (7, 1), (6, 7), (7, 6)}
    hood = corner_neighbours(layout)
    assert hood[(0, 1)].c_cells == ((0, 2), (1, 1)) and hood[(0, 1)].x_cells == ((1, 2),)
    assert hood[(1, 0)].c_cells == ((1, 1), (2, 0)) and hood[(1, 0)].x_cells == ((2, 1),)


def test_an_obstacle_on_the_edge_makes_a_corner_beside_it():
    layout = layouts()[PARTIAL_C]  # obstacle at (0, 1)
    assert {(0, 0), (0, 2)} <= set(corner_cells(layout))
    hood = corner_neighbours(layout)
    assert hood[(0, 0)].c_cells == ((1, 0),) and hood[(0, 0)].x_cells == ((1, 1),)
    assert hood[(0, 2)].c_cells == ((0, 3), (1, 2)) and hood[(0, 2)].x_cells == ((1, 3),)


@pytest.mark.parametrize("layout_index", [NO_CORNERS, X_SQUARES, BOARD_12X10])
def test_derived_tables_value_corners_most_and_their_neighbours_negatively(layout_index):
    layout = layouts()[layout_index]
    table = positional_table(layout)
    assert not np.array_equal(table, SWH_TABLE.reshape(-1)) or layout_index == X_SQUARES
    corners = corner_cells(layout)
    assert corners
    top = table.max()
    assert all(table[layout.index(cell)] == top for cell in corners)
    others = [i for i in range(layout.cells) if layout.cell(i) not in corners]
    assert table[others].max() < top
    for hood in corner_neighbours(layout).values():
        for cell in (*hood.c_cells, *hood.x_cells):
            assert table[layout.index(cell)] < 0, cell
    for cell in layout.obstacles:
        assert table[layout.index(cell)] == 0


def test_x_squares_has_no_x_cells_left():
    hood = corner_neighbours(layouts()[X_SQUARES])
    assert set(hood) == {(0, 0), (0, 7), (7, 0), (7, 7)}
    assert all(not h.x_cells and len(h.c_cells) == 2 for h in hood.values())


def test_12x10_has_x_cells_and_they_are_negative():
    layout = layouts()[BOARD_12X10]
    x_cells = {cell for hood in corner_neighbours(layout).values() for cell in hood.x_cells}
    assert x_cells
    assert all(positional_table(layout)[layout.index(cell)] < 0 for cell in x_cells)


@pytest.mark.parametrize("layout", random_layouts(seed=11, count=12), ids=lambda layout: layout.name)
def test_derived_tables_on_random_layouts(layout):
    table = derived_table(layout)
    assert table.shape == (layout.cells,) and np.isfinite(table).all()
    corners = {layout.index(cell) for cell in corner_cells(layout)}
    playable = [i for i in range(layout.cells) if layout.cell(i) not in layout.obstacles]
    assert corners <= set(playable)
    assert all(table[i] != 0 for i in playable)
    if corners:
        assert {i for i in playable if table[i] == table.max()} == corners


def test_wpc_counts_own_minus_opponent_and_ignores_obstacles():
    rules = make_env(STANDARD).rules
    assert wpc(positional_table(rules.layout), rules.grid(rules.initial_state())) == 0.0
    grid = np.zeros((8, 8), dtype=np.int8)
    grid[0, 0], grid[0, 1], grid[2, 2], grid[7, 7] = 1, -1, 2, -1
    assert wpc(SWH_TABLE.reshape(-1), grid) == pytest.approx(1.0 + 0.25 - 1.0)
    assert wpc(SWH_TABLE.reshape(-1), -grid * (grid != 2)) == pytest.approx(-0.25)


@pytest.mark.parametrize("layout_index", range(7))
def test_positional_agent_maximises_the_wpc_after_its_move(layout_index, random_positions):
    rules = make_env(layout_index).rules
    agent = make_agent("positional", AgentContext(rules), np.random.default_rng(layout_index))
    assert isinstance(agent, PositionalAgent)
    table = positional_table(rules.layout)
    for state in random_positions(rules, 25, seed=200 + layout_index):
        mover = state.to_move
        after = {m: wpc(table, rules.grid(rules.play(state, m), mover)) for m in rules.legal_moves(state) if m != PASS}
        move = agent.act(observe(rules, state))
        assert after[move] == pytest.approx(max(after.values()), abs=1e-9)


def test_positional_agent_prefers_a_corner_to_an_x_square_with_more_flips(make_position):
    rules = make_env(STANDARD).rules
    state = make_position(
        rules,
        """
. W B . . . . .
. . . . . . . .
. . . . . . B .
. . . . . . W .
. . . . . . W .
. . . . . . W .
. . . . . . . .
. . . . . . . .
""",
    )
    index = rules.layout.index
    assert set(rules.legal_moves(state)) == {index((0, 0)), index((6, 6))}
    assert agent_move("greedy", rules, state) == index((6, 6))  # three flips, onto an X-square
    for seed in range(5):
        assert agent_move("positional", rules, state, seed) == index((0, 0))


def agent_move(spec, rules, state, seed=0):
    return make_agent(spec, AgentContext(rules), np.random.default_rng(seed)).act(observe(rules, state))


def test_corner_neighbours_are_cached_and_read_only():
    layout = layouts()[NO_CORNERS]
    hood = corner_neighbours(layout)
    assert corner_neighbours(layout) is hood
    with pytest.raises(TypeError):
        hood[(0, 0)] = hood[(0, 1)]  # type: ignore[index]
