"""Wilson score interval against known values and its basic properties."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.tournaments.stats import wilson


@pytest.mark.parametrize(
    ("successes", "n", "expected"),
    [(5, 10, (0.2366, 0.7634)), (0, 20, (0.0, 0.1611)), (20, 20, (0.8389, 1.0)), (1, 10, (0.0179, 0.4042)), (50, 100, (0.4038, 0.5962))],
)
def test_known_values(successes, n, expected):
    low, high = wilson(successes, n)
    assert low == pytest.approx(expected[0], abs=1e-4)
    assert high == pytest.approx(expected[1], abs=1e-4)


def test_no_games_is_the_whole_unit_interval():
    assert wilson(0, 0) == (0.0, 1.0)


def test_extremes_are_exact():
    assert wilson(0, 7)[0] == 0.0
    assert wilson(7, 7)[1] == 1.0


@pytest.mark.parametrize(("successes", "n"), [(-1, 5), (6, 5), (0, -1)])
def test_rejects_impossible_counts(successes, n):
    with pytest.raises(ValueError, match="successes"):
        wilson(successes, n)


@given(st.integers(1, 5000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_interval_contains_the_rate_and_is_symmetric(pair):
    successes, n = pair
    low, high = wilson(successes, n)
    assert 0.0 <= low <= successes / n <= high <= 1.0
    mirror_low, mirror_high = wilson(n - successes, n)
    assert low == pytest.approx(1 - mirror_high, abs=1e-12)
    assert high == pytest.approx(1 - mirror_low, abs=1e-12)


def test_wider_z_gives_a_wider_interval():
    narrow, wide = wilson(30, 100, z=1.0), wilson(30, 100, z=2.576)
    assert wide[0] < narrow[0] and narrow[1] < wide[1]
