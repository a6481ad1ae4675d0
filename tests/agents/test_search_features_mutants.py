"""The layout-feature builders on a small obstacle layout, against definitions written out here.

Built with ``build_layout_features`` and the private builders directly (``layout_features`` is cached: a test
calling it may not reach the builders at all). Mutation testing: docs/mutation_search.md.
"""

from __future__ import annotations

import numpy as np
import pytest

from agents.search import features as ft
from engine.bits import from_words
from engine.layout import standard_layout

# 4 x 5, obstacles at (0, 3) and (2, 0):
#   . . . # .
#   . . . . .
#   # . . . .
#   . . . . .
LAYOUT = standard_layout(4, 5, obstacles=[(0, 3), (2, 0)])
PLAYABLE = {(r, c) for r in range(4) for c in range(5)} - {(0, 3), (2, 0)}
LANE_STEPS = ((0, 1), (1, -1), (1, 0), (1, 1))  # E, SW, S, SE


def bits(cells) -> int:
    return sum(1 << LAYOUT.index(cell) for cell in cells)


def test_blocked_cells_are_off_the_board_or_obstacles():
    assert not ft._blocked(LAYOUT, 3, 4) and not ft._blocked(LAYOUT, 0, 0)
    assert ft._blocked(LAYOUT, 3, 5) and ft._blocked(LAYOUT, 4, 0) and ft._blocked(LAYOUT, 0, -1)
    assert ft._blocked(LAYOUT, 2, 0) and ft._blocked(LAYOUT, 0, 3)


def test_corner_cells_are_blocked_across_both_axes():
    # (0, 2) and (0, 4): left/right of the obstacle (0, 3), and the top edge; (1, 0)/(3, 0): beside (2, 0) and the left edge
    expected = [(0, 0), (0, 2), (0, 4), (1, 0), (3, 0), (3, 4)]
    assert ft.corner_cells(LAYOUT) == expected


def test_c_and_x_cells_are_the_playable_non_corner_neighbours():
    corner_set = set(ft.corner_cells(LAYOUT))
    assert ft._neighbours(LAYOUT, (0, 4), ft._ORTHOGONAL, corner_set) == (LAYOUT.index((1, 4)),)
    assert ft._neighbours(LAYOUT, (0, 4), ft._DIAGONAL, corner_set) == (LAYOUT.index((1, 3)),)
    assert ft._neighbours(LAYOUT, (3, 0), ft._ORTHOGONAL, corner_set) == (LAYOUT.index((3, 1)),)
    assert ft._neighbours(LAYOUT, (3, 0), ft._DIAGONAL, corner_set) == (LAYOUT.index((2, 1)),)
    assert ft._neighbours(LAYOUT, (1, 0), ft._DIAGONAL, corner_set) == (LAYOUT.index((0, 1)), LAYOUT.index((2, 1)))
    assert ft._neighbours(LAYOUT, (0, 2), ft._ORTHOGONAL, corner_set) == (LAYOUT.index((0, 1)), LAYOUT.index((1, 2)))


def expected_segments() -> list[tuple[int, int]]:
    """Every maximal run of >= 2 playable cells along each lane's axis, walking whole lines of the grid."""
    found = []
    for lane, (dr, dc) in enumerate(LANE_STEPS):
        starts = {
            (r, c) for r in range(-5, 9) for c in range(-5, 10) if not (0 <= r - dr < 4 and 0 <= c - dc < 5) and (0 <= r < 4 and 0 <= c < 5)
        }
        for r, c in starts:  # the first on-board cell of a line
            run: list[tuple[int, int]] = []
            while 0 <= r < 4 and 0 <= c < 5:
                if (r, c) in PLAYABLE:
                    run.append((r, c))
                else:
                    if len(run) >= 2:
                        found.append((lane, bits(run)))
                    run = []
                r, c = r + dr, c + dc
            if len(run) >= 2:
                found.append((lane, bits(run)))
    return sorted(found)


def test_segments_are_the_maximal_runs_along_each_lane():
    segments = ft._segments(LAYOUT)
    assert sorted(segments) == expected_segments()
    assert len(segments) == len(set(segments))
    # spelled out for the east lane: row 0 splits at (0, 3); row 2 starts after (2, 0)
    east = sorted(mask for lane, mask in segments if lane == 0)
    assert east == sorted(
        [
            bits([(0, 0), (0, 1), (0, 2)]),
            bits([(1, c) for c in range(5)]),
            bits([(2, c) for c in range(1, 5)]),
            bits([(3, c) for c in range(5)]),
        ]
    )


def test_blocked_lanes_mark_cells_with_a_blocked_neighbour_on_the_lane_axis():
    words = ft._blocked_lanes(LAYOUT, 1)
    assert len(words) == 4
    for lane, (dr, dc) in enumerate(LANE_STEPS):
        expected = bits(
            cell for cell in PLAYABLE if (cell[0] + dr, cell[1] + dc) not in PLAYABLE or (cell[0] - dr, cell[1] - dc) not in PLAYABLE
        )
        assert int(words[lane]) == expected, lane
    assert int(words[0]) & (1 << LAYOUT.index((1, 2))) == 0  # an inner cell of a full row
    cornerless = standard_layout(4, 4, obstacles=[(0, 0)])  # cell 0 an obstacle: in no lane's mask
    assert [int(word) & 1 for word in ft._blocked_lanes(cornerless, 1)] == [0, 0, 0, 0]
    two = ft._blocked_lanes(standard_layout(9, 8), 2)  # 72 cells: the words interleave lane by lane
    assert len(two) == 8 and int(two[4]) == 0b10000001  # east lane, second word: row 8's ends, cells 64 and 71


def test_byte_table_sums_the_cell_values_of_each_byte():
    table = np.array([1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0])
    out = ft._byte_table(table, 1)
    assert out.shape == (8, 256) and out.dtype == np.float64
    assert out[0, 0b101] == 5.0 and out[0, 255] == 255.0 and out[1, 0b11] == 768.0 and out[1, 0b100] == 0.0
    assert np.all(out[2:] == 0.0)


def test_build_layout_features_packs_the_kernel_arrays():
    positional = np.arange(20, dtype=np.int64).reshape(4, 5)  # a 2-D int table is flattened and made float
    positional[0, 3] = 1000  # an obstacle: not part of the norm
    features = ft.build_layout_features(LAYOUT, positional)
    corners = [(0, 0), (0, 2), (0, 4), (1, 0), (3, 0), (3, 4)]
    assert features.corners == tuple(LAYOUT.index(cell) for cell in corners)
    assert features.table.dtype == np.float64 and features.table.shape == (20,) and features.table[19] == 19.0
    assert features.edges == tuple(
        sorted(
            LAYOUT.index(cell) for cell in PLAYABLE if cell[0] in (0, 3) or cell[1] in (0, 4) or cell in {(1, 3), (2, 1), (1, 0), (3, 0)}
        )
    )
    assert features.c_cells[2] == (LAYOUT.index((1, 4)),) and features.x_cells[5] == (LAYOUT.index((2, 3)),)
    corner_mask, corner_index, near, byte_table, lanes, seg_words, seg_lane, norms = features.kernel_args
    assert from_words(corner_mask) == bits(corners)
    assert corner_index.dtype == np.int64 and corner_index.tolist() == list(features.corners)
    assert near.dtype == np.uint64 and near.shape == (6, 1)
    for i in range(6):
        assert int(near[i, 0]) == sum(1 << index for index in (*features.c_cells[i], *features.x_cells[i]))
    assert int(near[0, 0]) == bits([(0, 1), (1, 0), (1, 1)]) - bits([(1, 0)])  # (1, 0) is a corner
    assert seg_words.dtype == np.uint64 and seg_words.shape == (len(expected_segments()), 1)
    assert seg_lane.dtype == np.int64 and sorted(zip(seg_lane.tolist(), (int(w) for w in seg_words[:, 0]))) == expected_segments()
    near_cells = {i for group in (*features.c_cells, *features.x_cells) for i in group}
    assert norms.dtype == np.float64
    assert norms.tolist() == [6.0, float(len(near_cells)), float(sum(range(20)) - 3 - 10)]  # minus (0, 3) and (2, 0)
    assert features.positional_norm == 177.0
    assert byte_table.shape == (8, 256) and byte_table[0, 1] == 0.0 and byte_table[0, 2] == 1.0
    assert len(lanes) == 4


def test_an_all_zero_table_is_normed_by_one():
    features = ft.build_layout_features(LAYOUT, np.zeros(20))
    assert features.positional_norm == 1.0


@pytest.mark.parametrize(("rows", "cols", "words"), [(8, 8, 1), (13, 10, 3), (9, 8, 2)])
def test_the_words_of_a_layout(rows: int, cols: int, words: int):
    features = ft.build_layout_features(standard_layout(rows, cols), np.ones(rows * cols))
    assert len(features.kernel_args[0]) == words and features.kernel_args[2].shape == (4, words)


@pytest.mark.parametrize("positional", [np.ones(19), np.ones((4, 4)), [1.0] * 19 + [np.inf]])
def test_build_layout_features_refuses_a_wrong_table(positional):
    with pytest.raises(ValueError, match=r"^positional table of shape \(\d+,\): give 20 finite cell values for the 4x5 layout$"):
        ft.build_layout_features(LAYOUT, positional)


def test_weights_array_messages_and_types():
    with pytest.raises(ValueError, match=r"^unknown feature\(s\) parity, tempo; valid features: discs, mobility, "):
        ft.weights_array({"tempo": 1.0, "parity": 2.0})
    with pytest.raises(ValueError, match=r"^weights: give 7 finite numbers in the order discs, mobility, corners, "):
        ft.weights_array([1.0])
    ints = ft.weights_array([[1, 2, 3, 4, 5, 6, 7]])
    assert ints.dtype == np.float64 and ints.shape == (7,) and ints[6] == 7.0


def test_weight_table_makes_tables_float64():
    table = np.ones((5, 5, len(ft.FEATURES)), dtype=np.float32)
    assert ft.weight_table(table, 4).dtype == np.float64


def test_weights_at_indexes_a_table_from_the_root_movers_side():
    vector = np.arange(7.0)
    own, opp = (np.uint64(0b111),), (np.uint64(0b1),)  # 3 discs and 1 disc
    assert ft.weights_at(vector, own, opp, 1) is vector
    table = np.arange(5 * 5 * 7, dtype=np.float64).reshape(5, 5, 7)
    assert np.array_equal(ft.weights_at(table, own, opp, 0), table[3, 1])
    assert np.array_equal(ft.weights_at(table, own, opp, 1), table[1, 3])
