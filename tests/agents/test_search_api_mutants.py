"""The search's Python roots: tables, argument checks, scales and what each entry point passes on.

Mutation testing: docs/mutation_search.md.
"""

from __future__ import annotations

import numpy as np
import pytest
from search_positions import late_positions, layout_named

from agents.search import api
from agents.search.endgame import disc_difference_utility, target_utility
from engine.layout import standard_layout
from engine.rules import Rules
from engine.state import PASS, State

RULES = Rules(standard_layout(6, 6))


def test_search_tables_buffers_have_a_row_per_ply_of_a_whole_game():
    tables = api.SearchTables(RULES.layout, tt_bits=4)
    assert tables.move_buffer.shape == (2 * 36 + 2, 36) and tables.move_buffer.dtype == np.int64
    assert tables.score_buffer.shape == (74, 36) and tables.score_buffer.dtype == np.float64
    assert tables.stats.shape == (3,) and tables.stats.dtype == np.int64
    assert tables.order.dtype == np.float64 and tables.order.flags.c_contiguous


def test_root_moves_come_best_positional_value_first():
    positional = np.zeros(36)
    positional[[9, 16, 19, 26]] = [1.0, 5.0, 3.0, -2.0]  # the four first moves of the 6x6 board
    tables = api.SearchTables(RULES.layout, tt_bits=4, positional=positional)
    start = RULES.initial_state()
    assert sorted(RULES.legal_moves(start)) == [9, 16, 19, 26]
    moves = tables.root_moves(RULES, start)
    assert moves.dtype == np.int64 and moves.tolist() == [16, 19, 9, 26]
    assert tables.root_moves(RULES, start, legal=[26, 9]).tolist() == [9, 26]  # the caller's legal moves are used
    assert tables.root_moves(RULES, start, legal=[PASS]).tolist() == [PASS]


def test_root_moves_refuse_a_finished_game():
    tables = api.SearchTables(RULES.layout, tt_bits=4)
    with pytest.raises(ValueError, match=r"^no legal moves: the game is over$"):
        tables.root_moves(RULES, RULES.initial_state(), legal=[])


def test_terminal_scale_puts_utilities_beyond_the_heuristic():
    weights = np.array([1.0, -2.0, 3.0])
    assert api.terminal_scale(weights, np.array([[0.0, 2.0], [-4.0, 0.0]])) == 3.5  # (1 + 6) / 2
    assert api.terminal_scale(weights, np.zeros((2, 2))) == 7.0  # no non-zero utility: divided by 1
    table = np.zeros((2, 2, 3))
    table[0, 1] = [1.0, 1.0, -1.0]
    table[1, 0] = [0.0, -5.0, 0.0]
    assert api.terminal_scale(table, np.array([[0.0, 0.5], [-1.0, 0.0]])) == 12.0  # (1 + max row sum 5) / 0.5


def test_tables_of_another_layout_are_refused():
    other = api.SearchTables(standard_layout(4, 4), tt_bits=4)
    with pytest.raises(ValueError, match=r"^search tables were built for another layout$"):
        api.Searcher(RULES, tables=other)


def test_the_position_passes_the_movers_placements_first():
    start = RULES.initial_state()
    for to_move, expected in ((0, (3, 1)), (1, (1, 3))):
        state = State(start.black, start.white, to_move, placed_black=3, placed_white=1)
        assert api._position(RULES, state)[2:] == expected


@pytest.mark.parametrize("depth", [True, 0, 1.5])
def test_depth_must_be_a_whole_number(depth):
    with pytest.raises(ValueError, match=r"give a whole number >= 1"):
        api.search_position(RULES, RULES.initial_state(), depth)


def test_searcher_defaults_and_what_it_keeps():
    tables = api.SearchTables(RULES.layout, tt_bits=4)
    searcher = api.Searcher(RULES, tables=tables)
    assert searcher.tables is tables and searcher.use_tt is True and searcher._context[8] is True
    utility = disc_difference_utility(36)
    assert searcher.scale == api.terminal_scale(searcher.weights, utility) > 1.0
    assert np.array_equal(searcher._context[5], utility * searcher.scale)
    plain = api.Searcher(RULES, tables=tables, evaluate_finished=True)
    assert plain.scale == 1.0 and plain._context[5].shape == (0, 0)
    with pytest.raises(ValueError, match=r"^give a utility_table or evaluate_finished=True, not both$"):
        api.Searcher(RULES, utility_table=utility, evaluate_finished=True)


def test_search_checks_the_time_limit_and_uses_the_given_legal_moves():
    searcher = api.Searcher(RULES, tables=api.SearchTables(RULES.layout, tt_bits=8))
    start = RULES.initial_state()
    with pytest.raises(ValueError, match=r"^time_limit=-1: give seconds >= 0 \(0 = no limit\)$"):
        searcher.search(start, 2, time_limit=-1)
    assert searcher.search(start, 2, legal=[26]).moves == (26,)


def test_one_ply_without_a_table_visits_each_child_once():
    searcher = api.Searcher(RULES, use_tt=False, tables=api.SearchTables(RULES.layout, tt_bits=4))
    result = searcher.search(RULES.initial_state(), 1)
    assert result.nodes == 4 and result.depth == 1


def test_a_distant_deadline_lets_every_iteration_finish():
    searcher = api.Searcher(RULES, tables=api.SearchTables(RULES.layout, tt_bits=12))
    result = searcher.search(RULES.initial_state(), 6, time_limit=3600.0)
    assert result.depth == 6 and result.nodes > 1024  # past a deadline check (every 1024 nodes)


def test_search_position_passes_on_the_tables_and_the_table_switch():
    tables = api.SearchTables(RULES.layout, tt_bits=10)
    api.search_position(RULES, RULES.initial_state(), 4, tables=tables)
    assert tables.tt.used() > 0
    tables.tt.clear()
    api.search_position(RULES, RULES.initial_state(), 4, tables=tables, use_tt=False)
    assert tables.tt.used() == 0


def test_search_and_minimax_value_pass_on_weights_utility_and_scoring():
    rules = Rules(layout_named("plain 4x4"))
    state = next(s for s in late_positions(rules, seed=3, count=10, max_empties=3) if len(rules.legal_moves(s)) > 1)
    weights = {"discs": 5.0, "mobility": 0.0}
    target = target_utility(16, 3)  # not proportional to the default disc difference
    full = api.search_position(rules, state, 8, weights, target)
    assert api.search(rules, state, 8, weights, target) == (full.move, full.value, full.nodes)
    assert full.value != api.search_position(rules, state, 8, weights).value
    assert full.value != api.search_position(rules, state, 8, None, target).value
    by_evaluation = api.Searcher(rules, weights, evaluate_finished=True).minimax_value(state, 8)
    assert api.minimax_value(rules, state, 8, weights, evaluate_finished=True) == by_evaluation
    assert by_evaluation != api.minimax_value(rules, state, 8, weights)


def test_solve_position_reports_the_best_move_and_its_own_tables():
    rules = Rules(layout_named("plain 4x5"))
    tables = api.SearchTables(rules.layout, tt_bits=10)
    found = 0
    for state in late_positions(rules, seed=5, count=30, max_empties=9, min_empties=8):
        result = api.solve_position(rules, state, tables=tables)
        best = result.moves[int(np.argmax(result.values))]
        assert result.move == best and result.values[result.moves.index(result.move)] == result.value
        assert isinstance(result.nodes, int) and result.nodes > len(result.moves)
        found += result.moves.index(result.move) > 0
    assert found > 0  # some best move was not the first in search order
    assert tables.tt.used() > 0  # the solver used the tables it was given, with its table on by default


def test_a_passed_deadline_stops_the_search_at_its_first_check():
    """A 1 ns limit has passed by the first deadline check (after 1024 nodes, depth 1 done): the same stop for both."""
    start = RULES.initial_state()
    limited = api.search_position(RULES, start, 7, time_limit=1e-9, tables=api.shared_tables(RULES.layout))
    move, value, nodes = api.search(RULES, start, 7, time_limit=1e-9)
    full = api.search_position(RULES, start, 7, tables=api.SearchTables(RULES.layout, tt_bits=12))
    assert limited.depth < 7 and nodes == limited.nodes < full.nodes and full.depth == 7
