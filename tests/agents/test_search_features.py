"""The evaluation features: cell kinds on obstacle layouts, stable discs as a true lower bound, symmetry."""

from __future__ import annotations

import numpy as np
import pytest
from search_positions import layout_named, live_positions, random_walk

from agents.heuristic.positional import corner_cells as positional_corners
from agents.search.features import FEATURES, evaluate, feature_values, layout_features, weights_array
from agents.search.stability import stable_discs
from engine.bits import from_words
from engine.environments import layouts
from engine.rules import Rules

LAYOUT_NAMES = [layout.name for layout in layouts()] + ["random 5x7"]


def cells_of(layout, indices) -> set[tuple[int, int]]:
    return {layout.cell(index) for index in indices}


def test_corners_c_and_x_cells_of_the_plain_board():
    layout = layout_named("Standard 8x8")
    features = layout_features(layout)
    assert cells_of(layout, features.corners) == {(0, 0), (0, 7), (7, 0), (7, 7)}
    top_left = features.corners.index(layout.index((0, 0)))
    assert cells_of(layout, features.c_cells[top_left]) == {(0, 1), (1, 0)}
    assert cells_of(layout, features.x_cells[top_left]) == {(1, 1)}
    assert len(features.edges) == 28


def test_obstacle_corners_replace_missing_corners():
    layout = layout_named("No Corners")
    features = layout_features(layout)
    assert cells_of(layout, features.corners) == {(0, 1), (1, 0), (0, 6), (1, 7), (6, 0), (7, 1), (6, 7), (7, 6)}
    first = features.corners.index(layout.index((0, 1)))
    assert cells_of(layout, features.c_cells[first]) == {(0, 2), (1, 1)}
    assert cells_of(layout, features.x_cells[first]) == {(1, 2)}  # (1, 0) is a corner itself


@pytest.mark.parametrize("name", LAYOUT_NAMES)
def test_corners_follow_the_positional_tables_rule(name: str):
    layout = layout_named(name)
    assert cells_of(layout, layout_features(layout).corners) == set(positional_corners(layout))


@pytest.mark.parametrize("name", ["Standard 8x8", "Partial C-Squares", "Random Board 1 (12x10)", "random 5x7"])
def test_stable_discs_never_flip(name: str):
    """Every disc counted stable keeps its colour along random continuations of the game."""
    rules = Rules(layout_named(name))
    g = rules.geometry
    feat = layout_features(rules.layout).kernel_args
    rng = np.random.default_rng(2)
    counted = 0
    for state in live_positions(rules, seed=6, count=12, max_plies=rules.layout.cells):
        own, opp = stable_discs(g.words(state.own), g.words(state.opponent), g.kernel_args, feat)
        own, opp = from_words(own), from_words(opp)
        assert own & ~state.own == 0 and opp & ~state.opponent == 0
        counted += (own | opp).bit_count()
        mover = state.to_move
        for _ in range(6):
            later = state
            while rules.legal_moves(later):
                later = random_walk(rules, rng, 1, later)
                assert own & ~later.discs(mover) == 0 and opp & ~later.discs(1 - mover) == 0
    assert counted > 0


def test_stability_extremes():
    rules = Rules(layout_named("Standard 8x8"))
    g = rules.geometry
    feat = layout_features(rules.layout).kernel_args
    start = rules.initial_state()
    assert stable_discs(g.words(start.own), g.words(start.opponent), g.kernel_args, feat) == ((0,), (0,))
    rng = np.random.default_rng(4)
    state = random_walk(rules, rng, 200)
    while (state.black | state.white) != rules.layout.playable_mask:
        state = random_walk(rules, rng, 200)  # a game that filled the board
    own, opp = stable_discs(g.words(state.own), g.words(state.opponent), g.kernel_args, feat)
    assert from_words(own) == state.own and from_words(opp) == state.opponent


@pytest.mark.parametrize("name", ["Standard 8x8", "X-Squares", "Random Board 3 (10x10)"])
def test_features_are_antisymmetric_and_bounded(name: str):
    rules = Rules(layout_named(name))
    g = rules.geometry
    feat = layout_features(rules.layout).kernel_args
    weights = weights_array()
    for state in live_positions(rules, seed=1, count=20):
        own, opp = g.words(state.own), g.words(state.opponent)
        values = feature_values(own, opp, g.kernel_args, feat)
        assert np.all(np.abs(values) <= 1.0)
        assert np.allclose(values, -feature_values(opp, own, g.kernel_args, feat), atol=1e-12)
        assert evaluate(own, opp, g.kernel_args, feat, weights) == pytest.approx(float(values @ weights))


def test_weights_from_dicts_and_arrays():
    assert weights_array({"mobility": 0.0})[FEATURES.index("mobility")] == 0.0
    assert len(weights_array()) == len(FEATURES)
    with pytest.raises(ValueError, match="valid features"):
        weights_array({"parity": 1.0})
    with pytest.raises(ValueError, match=f"{len(FEATURES)} finite numbers"):
        weights_array([1.0, 2.0])
