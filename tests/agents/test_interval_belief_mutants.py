"""The interval belief at its edges: open and closed ends, degenerate intervals, shares at 1/2.

Written against the mutants `make mutation MODULES=interval_belief` found alive (docs/testing.md):
each test pins one boundary the module's other tests left free. Expected values are worked out by
hand from the rule in agents/interval/belief.py's docstring, never by calling the module twice.
"""

from dataclasses import dataclass
from fractions import Fraction as F

import pytest

from agents.interval.belief import (
    InconsistentRecord,
    KInterval,
    achievable_shares,
    constraints,
    feasible_set,
    informative,
    outcome_probabilities,
)


@dataclass(frozen=True)
class Game:
    black: int
    white: int
    rewards: tuple[int, int]


def test_contains_respects_open_and_closed_ends():
    open_interval = KInterval(F(3, 5), F(4, 5))
    assert not open_interval.contains(F(3, 5))
    assert not open_interval.contains(F(4, 5))
    assert open_interval.contains(F(7, 10))
    assert not open_interval.contains(F(9, 10))  # above the upper end, though above the lower one
    assert not open_interval.contains(F(1, 5))  # below the lower end, though below the upper one
    closed_interval = KInterval(F(3, 5), F(4, 5), True, True)
    assert closed_interval.contains(F(3, 5)) and closed_interval.contains(F(4, 5))
    assert not closed_interval.contains(F(1, 5))  # a closed end admits its own point, not what lies beyond
    assert not closed_interval.contains(F(9, 10))


def test_inconsistent_game_message_names_black_reward():
    known = KInterval(lower=F(3, 4))  # majority wins only above 3/4
    with pytest.raises(InconsistentRecord, match=r"game 5-3 \(black's reward -1\)"):
        known.update(Game(5, 3, (-1, 1)))  # black 5/8 lost, so K <= 5/8: contradicts K > 3/4


@pytest.mark.parametrize(
    ("interval", "text"),
    [
        (KInterval(), "(-inf, +inf)"),
        (KInterval(F(3, 5), F(4, 5), True, False), "[3/5, 4/5)"),
        (KInterval(F(3, 5), F(4, 5), False, True), "(3/5, 4/5]"),
        (KInterval(upper=F(1, 5), upper_closed=True), "(-inf, 1/5]"),
        (KInterval(lower=F(3, 5)), "(3/5, +inf)"),
    ],
)
def test_describe_writes_bracket_notation(interval, text):
    assert interval.describe() == text


def test_point_interval_probabilities_are_zero_or_one():
    point = KInterval(F(3, 5), F(3, 5), True, True)
    assert point.prob_above(F(1, 2)) == 1 and point.prob_above(F(3, 5)) == 0
    assert point.prob_below(F(7, 10)) == 1 and point.prob_below(F(3, 5)) == 0


def test_probabilities_are_capped_at_one_outside_the_interval():
    interval = KInterval(F(3, 5), F(4, 5))
    assert interval.prob_above(F(1, 2)) == 1  # (4/5 - 1/2) / (1/5) = 3/2 uncapped
    assert interval.prob_below(F(9, 10)) == 1
    assert interval.prob_above(F(7, 10)) == F(1, 2) and interval.prob_below(F(7, 10)) == F(1, 2)


def test_belief_rationale_and_confidence():
    unknown = KInterval(F(1, 5), F(4, 5)).belief()
    assert unknown.regime == "unknown" and unknown.confidence == 0.0
    assert unknown.rationale is not None and "(1/5, 4/5)" in unknown.rationale
    majority = KInterval(F(3, 5), F(4, 5)).belief()
    assert majority.regime == "majority" and majority.confidence == 1.0


def test_intersect_at_a_shared_end_keeps_it_open_when_either_is_open():
    closed, opened = KInterval(lower=F(3, 5), lower_closed=True), KInterval(lower=F(3, 5))
    assert closed.intersect(opened).lower_closed is False
    assert opened.intersect(closed).lower_closed is False
    assert closed.intersect(closed).lower_closed is True
    upper_closed, upper_open = KInterval(upper=F(2, 5), upper_closed=True), KInterval(upper=F(2, 5))
    assert upper_closed.intersect(upper_open).upper_closed is False


@pytest.mark.parametrize(("black", "white"), [(-1, 5), (5, -1), (0, 0)])
def test_impossible_final_counts_are_refused(black, white):
    with pytest.raises(InconsistentRecord, match=f"final counts {black}-{white}"):
        constraints(black, white, 0)


def test_bad_reward_message_and_a_one_disc_game():
    with pytest.raises(InconsistentRecord, match="black's reward 2"):
        constraints(3, 1, 2)
    black_side, white_side = constraints(1, 0, 1)  # black holds the only disc and wins: K > 1
    assert black_side == KInterval(lower=F(1))
    assert white_side == KInterval(lower=F(0), lower_closed=True)  # white's 0 share is outside: K >= 0


def test_feasible_set_starts_from_the_given_interval():
    start = KInterval(lower=F(3, 5))
    assert feasible_set([], start=start) == start
    assert feasible_set([Game(6, 2, (0, 0))], start=start) == KInterval(F(3, 5), F(3, 4), False, True)


def test_outcome_probabilities_with_no_discs_and_one_disc():
    assert outcome_probabilities(KInterval(), 0, 0) == (0, 0)
    assert outcome_probabilities(KInterval(lower=F(3, 5)), 0, 0) == (0, 0)
    # own 1 of 1: we win iff K > 1, the opponent (share 0) iff K < 0: half and half on the whole line.
    assert outcome_probabilities(KInterval(), 1, 0) == (F(1, 2), F(1, 2))
    assert outcome_probabilities(KInterval(lower=F(3, 5)), 1, 0) == (1, 0)


def test_informative_counts_the_draw_range_with_its_closed_ends():
    share = F(3, 5)  # majority wins iff K > 3/5, minority iff K < 2/5, a draw for K in [2/5, 3/5]
    assert not informative(KInterval(upper=F(1, 5)), share)  # only "minority wins" is possible
    assert informative(KInterval(upper=F(2, 5), upper_closed=True), share)  # K = 2/5 draws
    assert informative(KInterval(lower=F(3, 5), lower_closed=True), share)  # K = 3/5 draws
    assert not informative(KInterval(F(2, 5), F(3, 5), True, True), share)  # always a draw


@pytest.mark.parametrize(
    ("totals", "shares"), [((1,), (F(1),)), ((4,), (F(3, 4), F(1))), ((6,), (F(2, 3), F(5, 6), F(1))), ((0, 2), (F(1),))]
)
def test_achievable_shares_are_exactly_the_majorities(totals, shares):
    assert achievable_shares(totals) == shares
