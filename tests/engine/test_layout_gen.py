"""Random layouts: determinism, validity, the documented distribution, symmetry, bad arguments."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.layout import Layout, LayoutError, centre_discs
from engine.layout_gen import random_layout, random_layouts, symmetric_image
from engine.layout_text import format_layout, parse_layout
from engine.rules import Rules
from engine.state import PASS


@cache
def _many() -> tuple[Layout, ...]:
    """500 layouts over the default distribution: sizes 4-16, density 0-0.25."""
    return tuple(random_layouts(2024, 500))


def _black_can_place(layout: Layout) -> bool:
    rules = Rules(layout)
    moves = rules.legal_moves(rules.initial_state())
    return moves not in ([], [PASS])


def _density(layout: Layout) -> float:
    return len(layout.obstacles) / layout.cells


def test_same_seed_same_layouts_other_seed_others() -> None:
    assert random_layouts(7, 25) == random_layouts(7, 25)
    assert random_layouts(7, 25) != random_layouts(8, 25)


def test_shorter_list_is_a_prefix() -> None:
    assert random_layouts(3, 40)[:15] == random_layouts(3, 15)
    assert random_layouts(3, 0) == []


def test_random_layout_follows_the_generator_state() -> None:
    first = random_layout(np.random.default_rng(11), symmetric="mirror")
    assert first == random_layout(np.random.default_rng(11), symmetric="mirror")
    rng = np.random.default_rng(11)
    assert random_layout(rng, symmetric="mirror") == first
    assert random_layout(rng, symmetric="mirror") != first


def test_keywords_are_passed_through_and_names_are_unique() -> None:
    layouts = random_layouts(5, 30, rows=8, cols=(6, 7), obstacle_density=0.1)
    assert all(layout.rows == 8 and layout.cols in (6, 7) for layout in layouts)
    assert len({layout.name for layout in layouts}) == 30
    assert layouts[4].name == f"Random 5:4 (8x{layouts[4].cols})"
    assert {layout.name for layout in random_layouts(5, 3, name="Mine")} == {"Mine"}


def test_every_generated_layout_is_valid_and_black_can_move() -> None:
    for layout in _many():
        assert 4 <= layout.rows <= 16 and 4 <= layout.cols <= 16
        black, white = centre_discs(layout.rows, layout.cols)
        assert layout.black == black and layout.white == white
        assert not layout.obstacles & (black | white)
        assert _black_can_place(layout), layout.name


def test_default_sizes_cover_4_to_16_and_non_square() -> None:
    layouts = _many()
    assert {layout.rows for layout in layouts} == set(range(4, 17))
    assert {layout.cols for layout in layouts} == set(range(4, 17))
    assert sum(layout.rows != layout.cols for layout in layouts) > 400


def test_default_density_in_range_and_spread() -> None:
    densities = [_density(layout) for layout in _many()]
    assert all(0.0 <= d <= 0.25 for d in densities)
    assert min(densities) < 0.02 and max(densities) > 0.23
    assert 0.10 < float(np.mean(densities)) < 0.15


@pytest.mark.parametrize("symmetric", [None, "none", "point", "mirror"])
@pytest.mark.parametrize("density", [(0.05, 0.3), (0.2, 0.25), (0.0, 0.0)])
def test_density_within_requested_range(symmetric: str | None, density: tuple[float, float]) -> None:
    # Sizes from 5: on 4 x 4 a point-symmetric board has only even counts, none in 0.2-0.25.
    for layout in random_layouts(17, 80, rows=(5, 16), cols=(5, 16), obstacle_density=density, symmetric=symmetric):
        assert density[0] <= _density(layout) <= density[1], (layout.name, _density(layout))


def test_fixed_density_gives_nearest_count() -> None:
    for layout in random_layouts(4, 40, obstacle_density=0.2):
        assert len(layout.obstacles) == round(0.2 * layout.cells)


def test_impossible_narrow_density_falls_back_to_nearest_count() -> None:
    layout = random_layout(np.random.default_rng(0), rows=4, cols=4, obstacle_density=(0.2, 0.24), symmetric="point")
    assert len(layout.obstacles) == 4  # 3.2-3.84 cells wanted; point symmetry allows only even counts


@pytest.mark.parametrize("symmetric", ["point", "mirror"])
def test_symmetric_layouts_are_symmetric(symmetric: str) -> None:
    layouts = random_layouts(9, 150, obstacle_density=(0.05, 0.3), symmetric=symmetric)
    assert any(layout.rows % 2 or layout.cols % 2 for layout in layouts)
    for layout in layouts:
        image = {symmetric_image(cell, layout.rows, layout.cols, symmetric) for cell in layout.obstacles}
        assert image == layout.obstacles, layout.name
        assert _black_can_place(layout)


def test_unsymmetric_layouts_are_mostly_not_symmetric() -> None:
    layouts = [layout for layout in _many() if len(layout.obstacles) >= 6]
    point = sum(
        {symmetric_image(cell, layout.rows, layout.cols, "point") for cell in layout.obstacles} == layout.obstacles for layout in layouts
    )
    assert point < len(layouts) // 20


def test_point_symmetry_keeps_even_board_discs_symmetric() -> None:
    for layout in random_layouts(1, 30, rows=(4, 8), cols=(4, 8), symmetric="point"):
        if layout.rows % 2 == 0 and layout.cols % 2 == 0:
            assert {symmetric_image(c, layout.rows, layout.cols, "point") for c in layout.black} == layout.black


def test_dense_boards_are_still_playable() -> None:
    for layout in random_layouts(12, 40, rows=(4, 6), cols=(4, 6), obstacle_density=(0.4, 0.5)):
        assert 0.4 <= _density(layout) <= 0.5
        assert _black_can_place(layout)


def test_unplayable_request_raises_after_max_tries() -> None:
    # Every cell but the centre four blocked: black's openings are always obstacles.
    with pytest.raises(LayoutError, match="no playable 4x4 layout with 12 obstacles in 5 tries"):
        random_layout(np.random.default_rng(0), rows=4, cols=4, obstacle_density=1.0, max_tries=5)


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"rows": (3, 8)}, "rows=(3, 8)"),
        ({"rows": 17}, "rows=17"),
        ({"cols": (9, 5)}, "cols=(9, 5)"),
        ({"obstacle_density": (-0.1, 0.2)}, "obstacle_density=(-0.1, 0.2)"),
        ({"obstacle_density": (0.3, 0.2)}, "0 <= low <= high <= 1"),
        ({"obstacle_density": 1.5}, "obstacle_density=1.5"),
        ({"symmetric": "diagonal"}, "'none', 'point', 'mirror'"),
    ],
)
def test_bad_arguments_say_what_is_allowed(kwargs: dict, fragment: str) -> None:
    with pytest.raises(ValueError) as info:
        random_layout(np.random.default_rng(0), **kwargs)
    assert fragment in str(info.value)


def test_negative_count_rejected() -> None:
    with pytest.raises(ValueError, match="count=-1"):
        random_layouts(0, -1)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    rows=st.tuples(st.integers(4, 16), st.integers(4, 16)).map(sorted).map(tuple),
    symmetric=st.sampled_from([None, "point", "mirror"]),
)
def test_generated_layouts_round_trip_through_text(seed: int, rows: tuple[int, int], symmetric: str | None) -> None:
    layout = random_layout(np.random.default_rng(seed), rows=rows, obstacle_density=(0.0, 0.35), symmetric=symmetric)
    assert rows[0] <= layout.rows <= rows[1]
    assert parse_layout(format_layout(layout)) == layout
