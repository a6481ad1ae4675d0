"""More alpha-beta kernel checks for the "search_kernels" mutation group (JIT off): a total turn limit that ends
the game inside the horizon, so the counting mode, finished games and count-indexed weights all decide the values.

Every expected value comes from ``search_reference.Minimax`` (a plain minimax over ``Rules``, no kernel inside).
"""

from __future__ import annotations

import numpy as np
import pytest
from search_checks import WEIGHTS, check_search, check_table, count_indexed_table
from search_positions import live_positions
from search_reference import FOUR, k_utility

from agents.search.api import SearchTables
from engine.rules import Rules


@pytest.mark.parametrize("limit", [2, 3])
def test_a_total_turn_limit_ends_the_game_inside_the_horizon(limit):
    rules = Rules(FOUR, limit, "total")
    tables = SearchTables(FOUR, tt_bits=10)
    utility = k_utility(FOUR.cells, "0.6")
    state = rules.initial_state()
    for use_tt in (True, False):
        check_search(rules, state, limit + 1, WEIGHTS, utility, use_tt=use_tt, tables=tables)
    check_search(rules, state, limit + 1, WEIGHTS, utility, use_tt=True, tables=tables, evaluate_finished=True)


def test_count_indexed_weights_decide_evaluated_finished_games():
    rules = Rules(FOUR, 3, "total")
    tables = SearchTables(FOUR, tt_bits=10)
    rng = np.random.default_rng(11)
    pairs = rng.normal(size=(FOUR.cells + 1, FOUR.cells + 1, 2)) * 3
    table = count_indexed_table(pairs)
    state = rules.initial_state()
    for depth in (2, 4):
        check_table(rules, state, depth, table, pairs, None, tables, evaluate_finished=True)


def test_a_second_search_of_the_same_position_answers_from_the_table():
    """The second search meets the first one's entries at equal depths: cutoffs and stored moves must keep the values."""
    rules = Rules(FOUR)
    tables = SearchTables(FOUR, tt_bits=10)
    utility = k_utility(FOUR.cells, "0.6")
    for state in live_positions(rules, seed=31, count=1, max_plies=6):
        for depth in (4, 4):
            check_search(rules, state, depth, WEIGHTS, utility, use_tt=True, tables=tables)
