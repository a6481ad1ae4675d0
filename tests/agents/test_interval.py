"""The interval agent: the exact feasible set of K, its belief and utilities, budgeted probing, legal play."""

from __future__ import annotations

from fractions import Fraction
from typing import NamedTuple

import numpy as np
import pytest
import reference_othello as ref
from hypothesis import given
from hypothesis import strategies as st

from agents.base import AgentContext
from agents.interval.agent import IntervalAgent, IntervalConfig, final_total, play_weights, remaining_placements
from agents.interval.belief import (
    HALF,
    InconsistentRecord,
    KInterval,
    constraints,
    feasible_set,
    informative,
    informative_shares,
    outcome_probabilities,
    outcome_table,
    probe_target,
)
from agents.search.endgame import outcome_utility
from engine.condition import Condition
from engine.environments import make_env
from engine.playouts import random_playout
from engine.protocol.arena import BudgetExhausted
from engine.protocol.policy import RandomPolicy
from engine.rules import Rules
from engine.state import BLACK, WHITE
from harness.play.arena import Arena
from harness.play.game import play_game
from harness.prompting.beliefs import score_belief
from harness.registry.specs import make_agent, registry

K_VALUES = ("1.01", "-0.01", "0.8", "0.6", "0.4", "0.2", "0.52", "0.97")
STANDARD, SMALL = 0, 5  # layouts: standard 8x8; Random Board 2 (6x8, 40 playable cells)


class Game(NamedTuple):
    """A finished game as the feasible set reads it."""

    black: int
    white: int
    rewards: tuple[int, int]


def random_games(rules: Rules, condition: Condition, count: int, seed: int) -> list[Game]:
    """``count`` uniformly random games scored with ``condition`` (fast numba playouts)."""
    games = []
    for _ in range(count):
        black, white, seed = random_playout(rules, rules.initial_state(), seed)
        games.append(Game(black, white, condition.rewards(black, white)))
    return games


def agent_on(env_id: int, seed: int = 1, **settings) -> IntervalAgent:
    return IntervalAgent(AgentContext(make_env(env_id).rules), np.random.default_rng(seed), **settings)


# --- the feasible set --------------------------------------------------------------------------------


def test_one_game_gives_the_hand_computed_half_lines():
    black_inside, white_outside = constraints(40, 24, 1)
    assert black_inside == KInterval(lower=Fraction(5, 8))
    assert white_outside == KInterval(lower=Fraction(3, 8), lower_closed=True)
    win = KInterval.everything().update(Game(40, 24, (1, -1)))  # black 5/8 inside; white 3/8 outside
    assert (win.lower, win.lower_closed, win.upper) == (Fraction(5, 8), False, None)
    draw = KInterval.everything().update(Game(40, 24, (0, 0)))
    assert (draw.lower, draw.lower_closed) == (Fraction(3, 8), True)
    assert (draw.upper, draw.upper_closed) == (Fraction(5, 8), True)
    loss = KInterval.everything().update(Game(40, 24, (-1, 1)))  # white's 3/8 inside: K < 3/8
    assert (loss.lower, loss.upper, loss.upper_closed) == (None, Fraction(3, 8), False)
    assert (win.regime, draw.regime, loss.regime) == ("majority", "unknown", "minority")


def test_a_tie_teaches_nothing_and_cannot_be_won():
    assert KInterval.everything().update(Game(32, 32, (0, 0))) == KInterval.everything()
    with pytest.raises(InconsistentRecord, match="no threshold K"):
        KInterval.everything().update(Game(32, 32, (1, -1)))


def test_contradicting_games_raise_a_clear_error():
    majority = KInterval.everything().update(Game(40, 24, (1, -1)))
    with pytest.raises(InconsistentRecord, match=r"contradicts the feasible set \(5/8, \+inf\)"):
        majority.update(Game(24, 40, (1, -1)))  # a minority win as well
    with pytest.raises(InconsistentRecord, match="draw|no threshold"):
        majority.update(Game(36, 28, (0, 0)))  # 9/16 is below 5/8, so it must have won


def test_only_the_half_is_left_is_empty():
    assert KInterval(HALF, HALF, True, True).is_empty
    assert not KInterval(Fraction(3, 5), Fraction(3, 5), True, True).is_empty
    assert KInterval(Fraction(3, 5), Fraction(3, 5), True, False).is_empty
    assert not KInterval.everything().contains(HALF)


@given(
    k=st.fractions(min_value=-1, max_value=2).filter(lambda k: k != HALF),
    games=st.lists(st.tuples(st.integers(0, 120), st.integers(0, 120)).filter(lambda g: sum(g) > 0), max_size=30),
)
def test_any_games_scored_with_k_keep_k_feasible(k: Fraction, games: list[tuple[int, int]]):
    condition = Condition(k)
    interval = feasible_set([Game(b, w, condition.rewards(b, w)) for b, w in games])
    assert interval.contains(k)
    assert not interval.is_empty


@pytest.mark.parametrize("layout", [STANDARD, 3, SMALL, 6])
@pytest.mark.parametrize("k", K_VALUES)
def test_random_games_on_the_benchmark_layouts_keep_the_true_k(layout: int, k: str):
    rules = make_env(layout).rules
    condition = Condition(k)
    interval = feasible_set(random_games(rules, condition, 60, seed=101 + layout))
    assert interval.contains(condition.k)


@pytest.mark.parametrize("env_id", [0, 12, 21, 28, 47])  # K > 1, K < 0 (small), 0.6, 0.4, K > 1 with 10 turns
def test_recorded_games_with_random_policies_keep_the_true_k(env_id: int):
    env = make_env(env_id)
    rng = np.random.default_rng(env_id)
    interval = KInterval.everything()
    for _ in range(8):
        record = play_game(env.rules, env.condition, RandomPolicy(rng), RandomPolicy(rng))
        interval = interval.update(record)
    assert interval.contains(env.condition.k)


@pytest.mark.parametrize("layout", [STANDARD, SMALL])
@pytest.mark.parametrize("k", ["0.2", "0.4", "0.6", "0.8"])
def test_many_random_games_narrow_the_set_below_five_hundredths(layout: int, k: str):
    condition = Condition(k)
    interval = feasible_set(random_games(make_env(layout).rules, condition, 400, seed=12345))
    assert interval.contains(condition.k)
    assert interval.width is not None and interval.width < Fraction(1, 20)
    assert interval.regime == ("majority" if condition.k > HALF else "minority")


# --- belief and utility ------------------------------------------------------------------------------


def test_outcome_probabilities_hand_computed():
    uniform = KInterval(HALF, Fraction(4, 5))  # K uniform on (1/2, 4/5)
    assert outcome_probabilities(uniform, 6, 4) == (Fraction(2, 3), 0)  # K > 0.6 with probability 2/3
    assert outcome_probabilities(uniform, 4, 6) == (0, Fraction(2, 3))  # the opponent holds 0.6
    assert outcome_probabilities(uniform, 9, 1) == (0, 0)  # 0.9 overshoots every K: a draw
    straddling = KInterval(Fraction(1, 4), Fraction(3, 4), True, True)  # symmetric: no side is favoured
    assert outcome_probabilities(straddling, 6, 4) == (Fraction(3, 10), Fraction(3, 10))
    assert outcome_probabilities(straddling, 5, 5) == (0, 0)


def test_unbounded_sides_mean_every_share_beyond_wins():
    above = KInterval(lower=Fraction(7, 10))
    assert outcome_probabilities(above, 10, 0) == (1, 0)
    assert outcome_probabilities(above, 1, 9) == (0, 1)
    below = KInterval(upper=Fraction(1, 10))
    assert outcome_probabilities(below, 0, 10) == (1, 0)
    assert outcome_probabilities(KInterval.everything(), 7, 3) == (HALF, HALF)


def test_the_utility_table_is_win_minus_loss_in_range():
    cells = 64
    table = outcome_table(KInterval(HALF, Fraction(4, 5)), cells)
    assert table.shape == (cells + 1, cells + 1) and not table.flags.writeable
    assert np.all(table >= -1) and np.all(table <= 1)
    assert table[6, 4] == pytest.approx(2 / 3) and table[4, 6] == pytest.approx(-2 / 3)
    assert table[32, 32] == 0 and table[0, 0] == 0
    assert np.all(outcome_table(KInterval.everything(), cells) == 0)


@pytest.mark.parametrize("k", K_VALUES)
def test_a_known_k_gives_the_true_reward_table(k: str):
    point = Fraction(k)
    table = outcome_table(KInterval(point, point, True, True), 48)
    assert np.array_equal(table, outcome_utility(48, k))


def test_the_belief_report_matches_the_set():
    belief = KInterval(Fraction(19, 32), Fraction(39, 64), False, True).belief()
    assert (belief.regime, belief.k_low, belief.k_high, belief.confidence) == ("majority", 19 / 32, 39 / 64, 1.0)
    assert score_belief(belief, "0.6").contains_k
    broad = KInterval(upper=Fraction(1, 20)).belief()
    assert (broad.regime, broad.k_low) == ("minority", -1.0) and score_belief(broad, "-0.01").contains_k
    assert KInterval.everything().belief().regime == "unknown"


# --- probing targets ---------------------------------------------------------------------------------


def test_probe_targets_bisect_the_uncertain_shares():
    assert probe_target(KInterval.everything(), {64}) == (Fraction(33, 64) + 1) / 2
    narrowed = KInterval(Fraction(19, 32), Fraction(39, 64), False, True)
    assert probe_target(narrowed, {64}) is None  # no 64-disc share lies between 38/64 and 39/64
    assert informative_shares(narrowed, {63}) == (Fraction(38, 63),)
    assert not informative(KInterval.everything(), HALF)


# --- the agent -----------------------------------------------------------------------------------------


def test_registered_with_its_parameters():
    entry = registry()["interval"]
    assert {"depth", "endgame", "limit_plies", "probes", "patience", "margin"} <= set(entry.params)
    agent = make_agent("interval:depth=2,probes=10", AgentContext(make_env(0).rules), np.random.default_rng(0))
    assert agent.name == "interval:depth=2,probes=10" and agent.config.probes == 10
    with pytest.raises(ValueError, match="depth"):
        IntervalConfig(depth=0)
    with pytest.raises(ValueError, match="margin"):
        IntervalConfig(margin=-1.0)


def test_turn_limits_count_placements():
    rules = make_env(42).rules  # 8x8, 10 placements each
    assert final_total(rules) == 24 and final_total(make_env(0).rules) == 64
    assert remaining_placements(rules, rules.initial_state()) == 20


def test_weights_follow_the_winning_shares():
    assert play_weights(None, False)["discs"] == 0
    assert play_weights(Fraction(3, 4), False)["discs"] > 0
    assert play_weights(Fraction(11, 20), False)["discs"] < 0
    assert play_weights(Fraction(1, 4), True)["discs"] < 0


@pytest.mark.parametrize("env_id", [1, 42, 54])
def test_the_unadapted_agent_plays_legal_games_as_either_colour(env_id: int):
    env = make_env(env_id)
    agent = agent_on(env_id, depth=2, nodes=0, limit_depth=2)
    for colour in (BLACK, WHITE):
        opponent = RandomPolicy(np.random.default_rng(colour))
        black, white = (agent, opponent) if colour == BLACK else (opponent, agent)
        record = play_game(env.rules, env.condition, black, white)  # raises on an illegal proposal
        assert record.rewards == ref.rewards_for_counts(record.black, record.white, env.condition.k)


def test_adapt_stays_within_the_budget_and_reports_progress():
    env = make_env(14)  # K = 0.8 on 8x8: identifying it takes more than 5 probes
    arena = Arena(env, budget=5)
    agent = agent_on(14, patience=50)
    seen: list[int] = []
    agent.adapt(arena, on_progress=seen.append)
    assert arena.games_played == agent.probe_games == 5 and seen == [1, 2, 3, 4, 5]
    agent.adapt(arena)  # a second call takes the ledger in again and plays nothing more
    assert arena.games_played == 5 and agent.interval.contains(env.condition.k)
    with pytest.raises(BudgetExhausted):
        arena.play(agent, agent)


def test_adapt_stops_at_the_probe_cap():
    arena = Arena(make_env(SMALL), budget=2000)
    agent = agent_on(SMALL, probes=3, patience=50)
    agent.adapt(arena)
    assert arena.games_played == agent.probe_games == 3


@pytest.mark.parametrize("env_id", [19, 26, 33, 40, 12])  # 6x8: K = 0.8, 0.6, 0.4, 0.2, K < 0
def test_adapt_identifies_k_on_a_small_layout(env_id: int):
    env = make_env(env_id)
    arena = Arena(env)
    agent = agent_on(env_id)
    agent.adapt(arena)
    assert 0 < arena.games_played < 2000
    score = score_belief(agent.belief(), env.condition.k)
    assert score.regime_correct and score.contains_k
    if env.condition.k > 0:
        assert agent.interval.width is not None and agent.interval.width < Fraction(1, 10)


def test_adaptation_is_deterministic_for_a_seed():
    ledgers = []
    for _ in range(2):
        arena = Arena(make_env(26))
        agent = agent_on(26, seed=7)
        agent.adapt(arena)
        ledgers.append([record.moves for record in arena.ledger.records])
    assert ledgers[0] == ledgers[1]


def test_adapt_after_freeze_is_refused():
    agent = agent_on(SMALL)
    agent.freeze()
    with pytest.raises(RuntimeError, match="freeze"):
        agent.adapt(Arena(make_env(SMALL), budget=3))


def test_short_games_on_small_boards_are_solved_exactly_sooner():
    from agents.interval.agent import Searcher
    from agents.search.api import SearchTables

    env = make_env(54)  # the 6x8 layout with a 10-turn limit
    rules = env.rules
    state = rules.initial_state()
    rng = np.random.default_rng(0)
    while remaining_placements(rules, state) > 12:
        moves = rules.legal_moves(state)
        state = rules.play(state, moves[int(rng.integers(len(moves)))])
    remaining = remaining_placements(rules, state)
    branching = len(rules.legal_moves(state))
    tables = SearchTables(rules.layout)

    def searcher(exact_nodes: int, limit_plies: int = 6) -> Searcher:
        return Searcher(tables, outcome_utility(rules.layout.cells, "-0.01"), np.zeros(7), 3, 12, limit_plies, 0, exact_nodes)

    assert searcher(branching ** (remaining / 2))._small_tree(rules, state, remaining)
    assert not searcher(branching ** (remaining / 2) - 1)._small_tree(rules, state, remaining)
    assert not searcher(0)._small_tree(rules, state, remaining)  # 0: never
    assert not searcher(10**9, limit_plies=5)._small_tree(rules, state, remaining)  # more than 2 x limit_plies left
    assert not searcher(10**9)._small_tree(make_env(5).rules, make_env(5).rules.initial_state(), 12)  # no turn limit
