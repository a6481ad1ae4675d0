"""Adaptive Minimax (Appendix D): WeightNet tables, the count-indexed search evaluation, adaptation in the arena."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
import types

import numpy as np
import pytest
import reference_othello as ref

import agents.adaptive_minimax.agent as am
from agents.adaptive_minimax.agent import UTILITY_TERMS, AdaptiveMinimaxAgent, parameter_count, table_for, weightnet
from agents.base import AgentContext
from agents.evolution import ensemble_weights, select_survivors
from agents.heuristic.positional import positional_table
from agents.search.api import SearchTables, minimax_value, search_position
from agents.search.features import FEATURES, feature_values, weight_table, weights_array
from engine.environments import make_env
from engine.protocol.observation import observe
from engine.protocol.policy import RandomPolicy
from engine.state import BLACK, PASS, WHITE
from harness.play.arena import Arena
from harness.play.game import play_game
from harness.registry.specs import make_agent

ENV = make_env(0)  # Standard 8x8, K > 1
RULES = ENV.rules


def small_agent(seed: int = 0, **params) -> AdaptiveMinimaxAgent:
    """A cheap agent on the standard board (SWH table, so tests do not depend on PosNet's data)."""
    settings = {"population": 4, "generations": 2, "train_depth": 1, "eval_depth": 2, "value_table": positional_table}
    return AdaptiveMinimaxAgent(AgentContext(RULES), np.random.default_rng(seed), **(settings | params))


def reference_weightnet(theta: np.ndarray, progress: float, rho: float, hidden: int) -> np.ndarray:
    """Eq. 18 written out: 3 inputs -> tanh hidden layer -> 4 linear outputs."""
    x = np.array([progress, rho, 1.0 - rho])
    w1 = theta[: 3 * hidden].reshape(3, hidden)
    b1 = theta[3 * hidden : 4 * hidden]
    w2 = theta[4 * hidden : 8 * hidden].reshape(hidden, 4)
    b2 = theta[8 * hidden :]
    return np.tanh(x @ w1 + b1) @ w2 + b2


def test_weight_table_is_weightnet_at_each_count_pair():
    agent = small_agent(hidden=5)
    theta = agent.population[1]
    table = agent.utility.kernel_table(weightnet(theta, agent.utility.inputs, 5)[0])
    layout = RULES.layout
    norm = agent.tables.features.positional_norm  # the SWH table's largest |value| is 1
    for own, opp in [(2, 2), (10, 3), (0, 17), (40, 24), (1, 0)]:
        w = reference_weightnet(theta, (own + opp) / 64, own / (own + opp), 5)
        row = table[own, opp]
        assert row[FEATURES.index("mobility")] == pytest.approx(w[1])
        assert row[FEATURES.index("corners")] == pytest.approx(w[2])
        assert row[FEATURES.index("discs")] == pytest.approx(w[3])
        assert row[FEATURES.index("positional")] == pytest.approx(w[0] * norm / (own + opp))  # Eq. 14
        assert row[[FEATURES.index(f) for f in ("corner_closeness", "frontier", "stability")]].tolist() == [0, 0, 0]
    assert table.shape == (layout.cells + 1, layout.cells + 1, len(FEATURES))
    assert not table[40, 30].any(), "unreachable count pairs (more discs than cells) stay 0"


def test_posscore_is_wpc_over_discs(make_position):
    agent = small_agent()
    state = make_position(
        RULES,
        """
        B B . . . . . .
        . W . . . . . .
        . . B W . . . .
        . . . B W . . .
        . . . W B . . .
        . . . . . . . .
        . . . . . . . .
        . . . . . . . W
    """,
    )
    table = positional_table(RULES.layout).reshape(-1)
    own, opp = state.black, state.white
    wpc = sum(table[i] for i in range(64) if own >> i & 1) - sum(table[i] for i in range(64) if opp >> i & 1)
    g = RULES.geometry
    positional = feature_values(g.words(own), g.words(opp), g.kernel_args, agent.tables.features.kernel_args)
    factor = agent.utility.kernel_table(np.array([[1.0, 0, 0, 0]] * len(agent.utility.pairs)))
    n_own, n_opp = own.bit_count(), opp.bit_count()
    score = positional[FEATURES.index("positional")] * factor[n_own, n_opp, FEATURES.index("positional")]
    assert score == pytest.approx(wpc / (n_own + n_opp))


@pytest.mark.parametrize("env_id", [0, 48])  # 48: 10x10 with obstacles and a 10-turn limit
def test_constant_weight_table_searches_like_static_weights(env_id, random_positions):
    rules = make_env(env_id).rules
    weights = weights_array({"stability": 2.0, "frontier": -1.0})
    constant = np.broadcast_to(weights, (rules.layout.cells + 1, rules.layout.cells + 1, len(FEATURES))).copy()
    for state in random_positions(rules, 12, seed=env_id + 5):
        for finished in (False, True):
            static = search_position(rules, state, 3, weights, evaluate_finished=finished)
            counted = search_position(rules, state, 3, constant, evaluate_finished=finished)
            assert counted.values == static.values and counted.moves == static.moves
        assert minimax_value(rules, state, 2, constant) == minimax_value(rules, state, 2, weights)
    assert np.array_equal(weight_table(weights, rules.layout.cells), weights)
    assert weight_table(constant, rules.layout.cells) is constant
    with pytest.raises(ValueError, match="weight table"):
        weight_table(constant[1:], rules.layout.cells)


def reference_value(state, depth: int, root: int, table: np.ndarray, feat: tuple) -> float:
    """Plain minimax from the root player's view: U(s) with the weights of the root's disc counts at leaves."""
    legal = RULES.legal_moves(state)
    if depth == 0 or not legal:
        g = RULES.geometry
        mine, theirs = state.discs(root), state.discs(1 - root)
        features = feature_values(g.words(mine), g.words(theirs), g.kernel_args, feat)
        return float(table[mine.bit_count(), theirs.bit_count()] @ features)
    values = [reference_value(RULES.play(state, move), depth - 1, root, table, feat) for move in legal]
    return max(values) if state.to_move == root else min(values)


def test_count_indexed_search_matches_a_python_reference(random_positions):
    agent = small_agent()
    table = agent.utility.kernel_table(weightnet(agent.population[0], agent.utility.inputs, agent.hidden)[0])
    feat = agent.tables.features.kernel_args
    for state in random_positions(RULES, 6, seed=11):
        for depth in (1, 2, 3):
            result = search_position(RULES, state, depth, table, evaluate_finished=True, tables=agent.tables)
            expected = reference_value(state, depth, state.to_move, table, feat)
            assert result.value == pytest.approx(expected, abs=1e-12)
            assert minimax_value(RULES, state, depth, table, evaluate_finished=True) == pytest.approx(expected)


ALMOST_FULL = "\n".join(["B B B B B B B B"] * 7 + ["B W W W W W W ."])  # black's only move h8 ends the game


def test_finished_games_are_scored_by_the_evaluation(make_position):
    state = make_position(RULES, ALMOST_FULL)
    weights = weights_array({name: 0.0 for name in FEATURES} | {"discs": 0.5})
    result = search_position(RULES, state, 3, weights, evaluate_finished=True)
    assert result.value == 0.5  # h8 flips the six whites: 64 to 0, discDiff 1; no utility, scale 1
    with pytest.raises(ValueError, match="not both"):
        search_position(RULES, state, 3, weights, np.zeros((65, 65)), evaluate_finished=True)


def test_adapt_plays_population_games_per_generation_through_the_arena():
    agent = small_agent()
    arena = Arena(ENV, budget=100)
    progress: list[int] = []
    agent.adapt(arena, on_progress=progress.append)
    assert arena.games_played == 8 and progress == [4, 8]
    assert agent.summary()["games"] == 8 and agent.generations_done == 2
    assert all(record.black_policy == record.white_policy == "adaptive-minimax/individual" for record in arena.ledger.records)


def test_paper_scale_adaptation_uses_exactly_the_2000_game_budget():
    # population 100 (pairs i, i+50), 20 generations, two games per pair: 20 x 100 = 2,000 games, no more
    env = make_env(5)  # the 6x8 layout, K > 1: the cheapest full games; depth 1 keeps the test short
    agent = AdaptiveMinimaxAgent(
        AgentContext(env.rules), np.random.default_rng(0), train_depth=1, eval_depth=1, value_table=positional_table
    )
    arena = Arena(env, budget=2000)
    progress: list[int] = []
    agent.adapt(arena, on_progress=progress.append)
    assert arena.games_played == 2000 and arena.remaining == 0
    assert progress == [100 * g for g in range(1, 21)]
    assert agent.generations_done == 20


def test_adapt_stops_at_the_budget_without_raising():
    agent = small_agent()
    arena = Arena(ENV, budget=6)
    progress: list[int] = []
    agent.adapt(arena, on_progress=progress.append)
    assert arena.games_played == 6 and progress == [4]
    assert agent.generations_done == 1
    agent.adapt(arena)  # nothing left: returns quietly
    assert arena.games_played == 6


def test_selection_follows_the_paired_outcomes():
    agent = small_agent(sigma=0.0, generations=1, population=6)
    before = agent.population.copy()
    arena = Arena(ENV, budget=100)
    agent.adapt(arena)
    rewards = [record.rewards for record in arena.ledger.records]
    pairs = len(before) // 2
    outcomes = np.array([np.sign(rewards[2 * i][BLACK] + rewards[2 * i + 1][WHITE]) for i in range(pairs)])
    expected = select_survivors(before, outcomes)  # Eq. 6; sigma 0: no mutation, only the shuffle remains
    assert sorted(map(tuple, agent.population)) == sorted(map(tuple, expected))


def test_ensemble_is_the_mean_of_l1_normalised_outputs():
    agent = small_agent(population=6)
    rhos = np.array([0.0, 0.3, 0.5, 0.9])
    inputs = np.stack([np.full(4, 0.4), rhos, 1 - rhos], axis=1)
    raw = np.array([[reference_weightnet(theta, 0.4, rho, agent.hidden) for rho in rhos] for theta in agent.population])
    expected = np.mean(raw / np.abs(raw).sum(axis=-1, keepdims=True), axis=0)
    assert agent.weight_curve(0.4, rhos) == pytest.approx(expected)
    outputs = weightnet(agent.population, inputs, agent.hidden)
    assert agent.weight_curve(0.4, rhos) == pytest.approx(ensemble_weights(outputs))
    ensemble_table = agent.ensemble().searcher.weights
    pair = (20, 12)
    curve = agent.weight_curve(32 / 64, np.array([20 / 32]))[0]
    assert ensemble_table[pair][FEATURES.index("discs")] == pytest.approx(curve[UTILITY_TERMS.index("discs")])
    assert ensemble_table[pair][FEATURES.index("mobility")] == pytest.approx(curve[UTILITY_TERMS.index("mobility")])
    assert agent.weight_curve(0.5, rhos).shape == (4, 4)


def test_ensemble_follows_the_population_after_each_generation():
    agent = small_agent()
    seen: list[np.ndarray] = []
    agent.adapt(Arena(ENV, budget=100), on_progress=lambda _: seen.append(agent.ensemble().searcher.weights.copy()))
    assert len(seen) == 2 and not np.array_equal(seen[0], seen[1])
    assert np.array_equal(seen[1], agent.ensemble().searcher.weights)


def test_adaptation_is_deterministic_for_a_seed():
    runs = []
    for seed in (3, 3, 4):
        agent = small_agent(seed)
        arena = Arena(ENV, budget=100)
        agent.adapt(arena)
        runs.append((agent.population, [record.moves for record in arena.ledger.records]))
    assert np.array_equal(runs[0][0], runs[1][0]) and runs[0][1] == runs[1][1]
    assert not np.array_equal(runs[0][0], runs[2][0])


@pytest.mark.parametrize("env_id", [4, 13, 54])  # 12x10 with obstacles; 10x10 minority; 6x8 with a turn limit
def test_plays_legal_games_without_adapting_and_after_freezing(env_id):
    env = make_env(env_id)
    agent = AdaptiveMinimaxAgent(
        AgentContext(env.rules), np.random.default_rng(1), population=6, eval_depth=2, value_table=positional_table
    )
    agent.freeze()
    record = play_game(env.rules, env.condition, agent, RandomPolicy(np.random.default_rng(2)))
    assert record.rewards == ref.rewards_for_counts(record.black, record.white, env.condition.k)
    with pytest.raises(RuntimeError, match="frozen"):
        agent.adapt(Arena(env, budget=2))


def test_a_lone_move_is_played_without_search(make_position):
    agent = small_agent()
    state = make_position(RULES, ALMOST_FULL)
    observation = observe(RULES, state)
    assert observation.legal_moves == (63,)
    assert agent.act(observation) == 63
    assert agent.act(observe(RULES, state._replace(to_move=WHITE))) == PASS


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError, match="even"):
        small_agent(population=5)
    with pytest.raises(ValueError, match="eval_depth"):
        small_agent(eval_depth=0)
    with pytest.raises(ValueError, match="sigma"):
        small_agent(sigma=-1.0)
    with pytest.raises(ValueError, match="rules"):
        small_agent().adapt(Arena(make_env(1), budget=2))
    with pytest.raises(ValueError, match="parameters"):
        weightnet(np.zeros(5), np.zeros((1, 3)), 8)


def test_registry_builds_it_with_the_paper_defaults(monkeypatch):
    monkeypatch.setattr(am, "table_for", positional_table)
    agent = make_agent("adaptive-minimax:population=8", AgentContext(RULES), np.random.default_rng(0))
    assert agent.name == "adaptive-minimax:population=8"
    assert agent.population.shape == (8, parameter_count(8))
    assert (agent.generations, agent.train_depth, agent.eval_depth, agent.sigma) == (20, 3, 5, 0.1)


def test_value_table_switches_to_posnet_when_it_exists(monkeypatch):
    layout = RULES.layout
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *args: None)
    assert np.array_equal(table_for(layout), positional_table(layout))
    monkeypatch.undo()
    fake = types.ModuleType("agents.posnet.network")
    fake.__spec__ = importlib.machinery.ModuleSpec("agents.posnet.network", None)
    fake.posnet_table = lambda layout: np.full(layout.cells, 0.5)
    monkeypatch.setitem(sys.modules, "agents.posnet.network", fake)
    assert np.array_equal(table_for(layout), np.full(64, 0.5))
    agent = AdaptiveMinimaxAgent(AgentContext(RULES), np.random.default_rng(0), population=2)
    assert np.array_equal(agent.tables.features.table, np.full(64, 0.5))
    assert SearchTables(layout).features.table.tolist() == positional_table(layout).reshape(-1).tolist()
