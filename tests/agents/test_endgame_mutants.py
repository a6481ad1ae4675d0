"""The endgame's utility tables and their check, value by value (mutation testing: docs/mutation_search.md)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from agents.search.endgame import check_utility, ratio_utility, target_utility


def test_ratio_utility_is_minus_the_distance_of_the_share_from_the_target():
    cells, target = 4, 0.25
    table = ratio_utility(cells, target)
    assert table.shape == (5, 5) and table.dtype == np.float64
    for own in range(5):
        for opp in range(5):
            if own + opp == 0:
                expected = -1.0  # no discs at all: never reached in play
            else:
                expected = -float(abs(Fraction(own, own + opp) - Fraction(1, 4)))
            assert table[own, opp] == pytest.approx(expected, abs=1e-15), (own, opp)
    assert table[1, 0] == -0.75 and table[0, 1] == -0.25 and table[1, 3] == 0.0


def test_ratio_utility_raises_no_floating_point_warnings():
    with np.errstate(all="raise"):
        table = ratio_utility(3, 0.5)
    assert table[0, 0] == -1.0 and table[2, 2] == 0.0


def test_target_utility_is_float():
    table = target_utility(6, 2)
    assert table.dtype == np.float64
    assert table[5, 0] == -3.0 and table[2, 4] == 0.0


def test_check_utility_converts_to_contiguous_float64():
    ints = np.arange(16, dtype=np.int64).reshape(4, 4)
    table = check_utility(ints, 3)
    assert table.dtype == np.float64 and table.flags.c_contiguous
    assert table[3, 1] == 13.0


def test_check_utility_names_the_expected_shape():
    with pytest.raises(ValueError, match=r"^utility table: shape \(4, 5\), expected \(5, 5\) \(final own x opp discs\)$"):
        check_utility(np.zeros((4, 5)), 4)


def test_check_utility_refuses_non_finite_entries():
    table = np.zeros((3, 3))
    table[1, 2] = np.nan
    with pytest.raises(ValueError, match=r"^utility table: all entries must be finite$"):
        check_utility(table, 2)
