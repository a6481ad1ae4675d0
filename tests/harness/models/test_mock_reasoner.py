"""mock/reasoner: deduces K soundly from the memory table and bins of a strategy prompt."""

import json
import random
from fractions import Fraction

from harness.models.reasoner import bin_constraint, bin_outcomes, deduce, reasoned_strategy, recent_games

PROMPT = """What you have learned so far:
All 4 finished games: 2 wins, 1 draws, 1 losses.
Outcomes by your final share rho = own / (own + opponent):
rho range | games | wins | draws | losses
0.50-0.60 | 2 | 2 | 0 | 0
0.70-0.80 | 1 | 0 | 1 | 0
0.40-0.50 | 1 | 0 | 0 | 1

The 3 most recent games (1 older games appear in the summary above only):
game | colour | own | opponent | empty | rho | reward
2 | white | 36 | 28 | 0 | 0.562 | +1
3 | black | 48 | 16 | 0 | 0.750 | 0
4 | white | 30 | 34 | 0 | 0.469 | -1

Games finished: 4 of at most 10.
"""


def test_rows_are_read_from_the_agents_side_into_black_white_reward():
    assert recent_games(PROMPT) == [(28, 36, -1), (48, 16, 0), (34, 30, 1)]


def test_deduction_from_rows_and_bins_contains_the_truth():
    interval = deduce(recent_games(PROMPT), bin_outcomes(PROMPT))
    # wins at 36/64 = 0.5625: K > 9/16; a draw at 0.75: K <= 3/4
    assert interval.lower == Fraction(9, 16) and interval.upper == Fraction(3, 4)
    for k in (Fraction(6, 10), Fraction(7, 10), Fraction(3, 4)):
        assert interval.contains(k)


def test_bin_constraint_is_the_hull_over_the_bin():
    # a win somewhere in [0.5, 0.6]: K > 0.5 is all that is sure
    win = bin_constraint(Fraction(1, 2), Fraction(3, 5), "win")
    assert win.lower == Fraction(1, 2) and win.upper is None
    # a draw somewhere in [0.7, 0.8]: K in [0.2, 0.8]
    draw = bin_constraint(Fraction(7, 10), Fraction(4, 5), "draw")
    assert draw.lower == Fraction(1, 5) and draw.upper == Fraction(4, 5)


def test_reply_is_a_valid_strategy_with_a_belief_that_holds_k():
    from harness.prompting.strategist_agent import parse_strategy

    messages = [{"role": "user", "content": PROMPT}]
    strategy = parse_strategy(reasoned_strategy(messages, random.Random(0)))
    assert strategy.belief.regime == "majority"
    assert strategy.belief.k_low <= 0.7 <= strategy.belief.k_high
    assert 0.5 < strategy.target_ratio < 0.75
    final = PROMPT.replace("Games finished: 4 of at most 10.", "Games finished: 10 of at most 10.")
    exploit = json.loads(reasoned_strategy([{"role": "user", "content": final}], random.Random(0)))
    assert 0.5 < exploit["target_ratio"] <= (0.5 + 9 / 16) / 2 + 1e-9  # inside the sure-win range
