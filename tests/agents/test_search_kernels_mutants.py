"""The alpha-beta kernel (agents/search/negamax.py) against a plain minimax written over ``Rules``.

Fast enough to run with numba's JIT off (the "search_kernels" mutation group): small boards, depths 1-3. Each
search is compared with ``search_reference.Minimax`` (no kernel inside): the value, every root move's value (exact
where it ties the best, an upper bound below it elsewhere), the tie set, the best move, the root order, with and
without the transposition table; then hand-made positions (one move, a forced pass, a threshold K that decides).
"""

from __future__ import annotations

import numpy as np
import pytest
from search_checks import WEIGHTS, check_search, check_table, count_indexed_table
from search_positions import live_positions
from search_reference import FOUR, SIX, Minimax, k_utility, layout_of, vector

from agents.search import negamax
from agents.search.api import Searcher, SearchTables
from engine.layout import standard_layout
from engine.rules import Rules
from engine.state import BLACK, PASS, WHITE

CASES = [  # (layout, turn limit, counting, K, positions, seed)
    ("4x4", None, "per_player", "0.6", 4, 1),
    ("4x4", 3, "per_player", "0.3", 3, 2),
    ("6x6", None, "per_player", "1.01", 3, 3),
    ("blocked", None, "per_player", "0.6", 3, 4),
    ("6x6", 5, "total", "0.6", 3, 5),
]


@pytest.mark.parametrize(("name", "limit", "counting", "k", "count", "seed"), CASES)
def test_alpha_beta_matches_plain_minimax(name, limit, counting, k, count, seed):
    rules = Rules(layout_of(name), limit, counting)
    tables = SearchTables(rules.layout, tt_bits=10)
    utility = k_utility(rules.layout.cells, k)
    max_plies = 12 if limit is None else 2 * limit
    for i, state in enumerate(live_positions(rules, seed=seed, count=count, max_plies=max_plies)):
        depth = 1 + (i + seed) % 3
        check_search(rules, state, depth, WEIGHTS, utility, use_tt=True, tables=tables)
        check_search(rules, state, depth, WEIGHTS, utility, use_tt=False, tables=tables)


def test_late_positions_reach_the_end_inside_the_horizon():
    """4x4 positions a few empties from the end, depth 3: finished games scored by the utility, passes included."""
    rules = Rules(FOUR)
    tables = SearchTables(FOUR, tt_bits=10)
    utility = k_utility(FOUR.cells, "0.3")
    rng = np.random.default_rng(11)
    checked = 0
    while checked < 4:
        state = rules.initial_state()
        for _ in range(int(rng.integers(7, 10))):
            legal = rules.legal_moves(state)
            if not legal:
                break
            state = rules.play(state, legal[int(rng.integers(len(legal)))])
        if rules.legal_moves(state):
            check_search(rules, state, 3, WEIGHTS, utility, use_tt=checked % 2 == 0, tables=tables)
            checked += 1


def test_count_indexed_weights_and_evaluated_finished_games():
    rules = Rules(FOUR)
    tables = SearchTables(FOUR, tt_bits=10)
    rng = np.random.default_rng(7)
    pairs = rng.normal(size=(FOUR.cells + 1, FOUR.cells + 1, 2)) * 3
    table = count_indexed_table(pairs)
    utility = k_utility(FOUR.cells, "0.6")
    for i, state in enumerate(live_positions(rules, seed=21, count=3, max_plies=8)):
        depth = 1 + i % 3
        check_table(rules, state, depth, table, pairs, utility, tables)
        check_search(rules, state, depth, WEIGHTS, utility, use_tt=i % 2 == 1, tables=tables, evaluate_finished=True)


# Black to move has exactly one placement (row 2, column 0), white none after it.
ONE_MOVE = """
    . . . .
    . . . .
    . W B .
    . . . .
"""
# White to move has no placement but black has: a forced pass at the root.
WHITE_PASSES = """
    B B B B
    B B B B
    B B B W
    B B B .
"""


def test_a_root_with_one_move_and_a_forced_pass(make_position):
    rules = Rules(FOUR)
    tables = SearchTables(FOUR, tt_bits=10)
    utility = k_utility(FOUR.cells, "0.6")
    single = make_position(rules, ONE_MOVE, BLACK)
    assert len(rules.legal_moves(single)) == 1
    for depth in (1, 2, 3):
        check_search(rules, single, depth, WEIGHTS, utility, use_tt=depth != 2, tables=tables)
    passing = make_position(rules, WHITE_PASSES, WHITE)
    assert rules.legal_moves(passing) == [PASS]
    for depth in (1, 2, 3):
        result = Searcher(rules, vector(*WEIGHTS), utility, tables=tables).search(passing, depth)
        assert result.moves == (PASS,)
        check_search(rules, passing, depth, WEIGHTS, utility, use_tt=depth != 1, tables=tables)


# Black to move, two empties: the final counts differ by move, so K decides which is best.
LAST_MOVE = """
    W W W W
    W B B W
    B B B W
    . B . W
"""


@pytest.mark.parametrize("k", ["0.6", "0.3", "0.9"])
def test_the_threshold_decides_the_last_move(make_position, k):
    rules = Rules(FOUR)
    state = make_position(rules, LAST_MOVE, BLACK)
    utility = k_utility(FOUR.cells, k)
    tables = SearchTables(FOUR, tt_bits=10)
    for use_tt in (True, False):
        check_search(rules, state, 2, WEIGHTS, utility, use_tt=use_tt, tables=tables)
    reference = Minimax(rules, BLACK, WEIGHTS, utility)
    values = reference.children(state, 1)
    assert len({round(v, 6) for v in values.values()}) >= 1
    searcher = Searcher(rules, vector(*WEIGHTS), utility, tables=tables)
    assert searcher.search(state, 1).value == pytest.approx(max(values.values()))


def test_a_deadline_in_the_past_keeps_the_last_complete_iteration():
    """Past the first iteration the clock is read every CHECK_EVERY nodes: the aborted iteration is thrown away."""
    rules = Rules(SIX)
    state = live_positions(rules, seed=8, count=1, max_plies=14)[0]
    tables = SearchTables(SIX, tt_bits=12)
    searcher = Searcher(rules, vector(*WEIGHTS), k_utility(SIX.cells, "0.6"), tables=tables)
    timed = searcher.search(state, 8, time_limit=1e-9)
    assert timed.nodes == negamax.CHECK_EVERY
    assert 1 <= timed.depth < 8
    complete = searcher.search(state, timed.depth)
    assert (timed.move, timed.value, timed.moves, timed.values) == (complete.move, complete.value, complete.moves, complete.values)
    deeper = searcher.search(state, timed.depth + 1)  # no deadline: the same search runs past CHECK_EVERY nodes
    assert deeper.depth == timed.depth + 1 and deeper.nodes > negamax.CHECK_EVERY
    first = searcher.search(state, 1)
    expected = Minimax(rules, state.to_move, WEIGHTS, k_utility(SIX.cells, "0.6")).children(state, 1)
    assert first.values == pytest.approx(sorted(expected.values(), reverse=True), abs=1e-9)


WIDE = standard_layout(8, 10, name="8x10")  # 80 cells: two words per bitboard


def test_an_uneven_utility_evaluated_finished_games_and_two_word_boards():
    """A utility that is not zero-sum in (own, opp) order tells the sides apart; finished games evaluated (mobility 0)."""
    rules = Rules(FOUR)
    tables = SearchTables(FOUR, tt_bits=10)
    uneven = np.random.default_rng(3).integers(-4, 5, size=(FOUR.cells + 1, FOUR.cells + 1)).astype(float)
    rng = np.random.default_rng(12)
    late = []
    while len(late) < 4:
        state = rules.initial_state()
        for _ in range(int(rng.integers(8, 11))):
            legal = rules.legal_moves(state)
            state = rules.play(state, legal[int(rng.integers(len(legal)))]) if legal else state
        if rules.legal_moves(state):
            late.append(state)
    for i, state in enumerate(late):
        check_search(rules, state, 3, WEIGHTS, uneven, use_tt=i % 2 == 0, tables=tables)
        check_search(rules, state, 2 + i % 2, WEIGHTS, uneven, use_tt=i % 2 == 1, tables=tables, evaluate_finished=True)
    wide = Rules(WIDE, 6, "total")
    wide_tables = SearchTables(WIDE, tt_bits=10)
    for i, state in enumerate(live_positions(wide, seed=2, count=2, max_plies=8)):
        check_search(wide, state, 1 + i, WEIGHTS, k_utility(WIDE.cells, "0.6"), use_tt=True, tables=wide_tables)
        result = Searcher(wide, vector(*WEIGHTS), tables=wide_tables).search(state, 1)
        assert result.nodes == len(wide.legal_moves(state))  # one node per root move at depth 1
