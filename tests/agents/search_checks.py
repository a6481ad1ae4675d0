"""Alpha-beta searches checked against ``search_reference.Minimax`` (shared by the search-kernel mutation tests)."""

from __future__ import annotations

import numpy as np
import pytest
from search_reference import Minimax, first_order, tie_set, vector

from agents.search import negamax
from agents.search.api import Searcher, SearchTables
from agents.search.features import FEATURES
from engine.rules import Rules
from engine.state import State

WEIGHTS = (1.0, 3.0)  # discs, mobility


def check_search(
    rules: Rules, state: State, depth: int, weights, utility, *, use_tt: bool, tables: SearchTables, evaluate_finished: bool = False
) -> None:
    """One search against the reference: value, values, ties, best move, order, completed depth."""
    kernel_weights = vector(*weights) if isinstance(weights, tuple) else weights
    searcher = Searcher(
        rules, kernel_weights, None if evaluate_finished else utility, use_tt=use_tt, tables=tables, evaluate_finished=evaluate_finished
    )
    reference = Minimax(rules, state.to_move, weights, None if evaluate_finished else utility)
    assert searcher.scale == pytest.approx(reference.scale)
    expected = reference.children(state, depth)
    result = searcher.search(state, depth)
    best = max(expected.values())
    assert result.depth == depth
    assert result.value == pytest.approx(best, abs=1e-9)
    assert sorted(result.moves) == sorted(expected)
    assert set(result.ties) == tie_set(expected), (depth, use_tt, state)
    for move, value in zip(result.moves, result.values):
        if move in result.ties:
            assert value == pytest.approx(expected[move], abs=1e-9)
        else:
            assert expected[move] - 1e-9 <= value < result.value
    assert list(result.values) == sorted(result.values, reverse=True)
    assert result.move == result.moves[0]
    if depth <= 2:  # depth 1 is exact everywhere: its order is a stable sort of the first order
        order = first_order(tables.order, list(expected))
        if depth == 2:
            shallow = reference.children(state, 1)
            order = sorted(order, key=lambda move: -shallow[move])
        assert result.move == next(move for move in order if move in result.ties)
    assert 0 < result.nodes
    before = int(tables.stats[negamax.NODES])
    reference.nodes = 0
    assert searcher.minimax_value(state, depth) == pytest.approx(reference.value(state, depth), abs=1e-9)
    assert int(tables.stats[negamax.NODES]) - before == reference.nodes


def count_indexed_table(pairs: np.ndarray) -> np.ndarray:
    """Kernel weights indexed by the disc counts: ``pairs[..., 0]`` for discs, ``pairs[..., 1]`` for mobility, 0 elsewhere."""
    table = np.zeros((*pairs.shape[:2], len(FEATURES)))
    table[..., FEATURES.index("discs")], table[..., FEATURES.index("mobility")] = pairs[..., 0], pairs[..., 1]
    return table


def check_table(
    rules: Rules, state: State, depth: int, table, pairs, utility, tables: SearchTables, *, evaluate_finished: bool = False
) -> None:
    """A search with count-indexed weights against the reference with the same ``pairs``: value, ties, minimax value."""
    searcher = Searcher(rules, table, utility, tables=tables, evaluate_finished=evaluate_finished)
    reference = Minimax(rules, state.to_move, pairs, utility)
    expected = reference.children(state, depth)
    result = searcher.search(state, depth)
    assert result.value == pytest.approx(max(expected.values()), abs=1e-9)
    assert set(result.ties) == tie_set(expected)
    assert searcher.minimax_value(state, depth) == pytest.approx(result.value, abs=1e-9)
