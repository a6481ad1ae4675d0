"""The n-tuple networks: architecture, symmetric sampling, the numba kernels against a pure-Python reference, training."""

from __future__ import annotations

import numpy as np
import pytest

from agents.base import AgentContext
from agents.evolution import plus_offspring, plus_selection
from agents.ntuple.agent import NTupleAgent
from agents.ntuple.kernel import codes_of, evaluate, ntuple_scores
from agents.ntuple.negamax import root_values
from agents.ntuple.network import NTupleError, NTupleNetwork, layout_symmetries, load_network, network_shape, save_network, zero_network
from agents.ntuple.train import NTupleTrainConfig, NTupleTrainError, league_score, train_ntuple
from engine.environments import layouts
from engine.layout import standard_layout
from engine.layout_gen import random_layout
from engine.protocol.observation import observe
from engine.rules import Rules
from engine.state import PASS

STANDARD = layouts()[0]


def random_positions(layout, count, seed):
    """States along random games on ``layout`` (either colour to move, finished games skipped)."""
    rules, rng, found = Rules(layout), np.random.default_rng(seed), []
    while len(found) < count:
        state = rules.initial_state()
        while not rules.is_over(state) and len(found) < count:
            moves = rules.legal_moves(state)
            if moves != [PASS]:
                found.append(state)
            state = rules.play(state, moves[int(rng.integers(len(moves)))])
    return rules, found


def reference_value(network: NTupleNetwork, own: int, opponent: int) -> float:
    """The network's sum written out cell by cell, with no numpy indexing tricks."""
    total = 0.0
    for cells, orbit in zip(network.shape.expansions.tolist(), network.shape.orbit.tolist()):
        index = 0
        for j, cell in enumerate(cells):
            code = 2 if own >> cell & 1 else (0 if opponent >> cell & 1 else 1)
            index += code * 3**j
        total += float(network.luts[orbit, index])
    return total


def random_network(layout, n=2, seed=0):
    shape = network_shape(layout, n)
    return NTupleNetwork(layout, shape, np.random.default_rng(seed).normal(size=(shape.orbits, 3**n)))


def kernel_net(network: NTupleNetwork) -> tuple:
    """The network as the kernels take it."""
    return (network.shape.expansions, network.shape.orbit, network.luts)


def kernel_positions(layout, n: int, *, network_seed: int, count: int, positions_seed: int):
    """A random network on ``layout``, the network as the kernels take it, the rules and ``count`` random positions."""
    network = random_network(layout, n, seed=network_seed)
    rules, states = random_positions(layout, count, seed=positions_seed)
    return network, kernel_net(network), rules, states


def board_codes(rules: Rules, state, layout) -> np.ndarray:
    """The kernels' per-cell codes of ``state`` (black and white)."""
    return codes_of(rules.geometry.words(state.black), rules.geometry.words(state.white), layout.cells)


TEST_LAYOUTS = [
    STANDARD,
    layouts()[4],
    layouts()[2],
    random_layout(np.random.default_rng(7), rows=(6, 9), cols=(6, 9), obstacle_density=0.15),
    random_layout(np.random.default_rng(8), rows=7, cols=7, obstacle_density=0.2, symmetric="point"),
]


def test_all_n_on_plain_8x8_has_the_papers_sizes():
    assert (network_shape(STANDARD, 2).orbits, network_shape(STANDARD, 2).weights) == (32, 288)
    assert network_shape(STANDARD, 3).weights == 648
    assert network_shape(STANDARD, 1).weights == 30


def test_tuples_are_straight_runs_of_playable_cells():
    layout = TEST_LAYOUTS[3]
    blocked = {layout.index(cell) for cell in layout.obstacles}
    for cells in network_shape(layout, 3).expansions.tolist():
        assert not blocked & set(cells)
        rows_cols = [divmod(cell, layout.cols) for cell in cells]
        steps = {(b[0] - a[0], b[1] - a[1]) for a, b in zip(rows_cols, rows_cols[1:])}
        assert len(steps) == 1 and max(abs(d) for d in steps.pop()) == 1


def test_symmetry_group_follows_the_obstacles():
    assert len(layout_symmetries(STANDARD)) == 8
    assert len(layout_symmetries(standard_layout(6, 8))) == 4  # not square: no quarter turns
    assert len(layout_symmetries(standard_layout(8, 8, [(0, 1), (1, 0)]))) == 2  # identity and the transpose
    lopsided = standard_layout(8, 8, [(0, 1), (2, 5)])
    assert len(layout_symmetries(lopsided)) == 1


@pytest.mark.parametrize("layout", TEST_LAYOUTS, ids=lambda layout: layout.name or layout.describe())
def test_value_is_invariant_under_the_layouts_symmetries(layout):
    network = random_network(layout, 2, seed=3)
    _, states = random_positions(layout, 15, seed=4)
    for state in states:
        for cell_map in layout_symmetries(layout):
            moved = [sum(1 << int(cell_map[i]) for i in range(layout.cells) if discs >> i & 1) for discs in (state.black, state.white)]
            assert network.value(*moved) == pytest.approx(network.value(state.black, state.white))


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("layout", TEST_LAYOUTS, ids=lambda layout: layout.name or layout.describe())
def test_kernel_evaluation_matches_the_reference_for_both_colours(layout, n):
    network, net, rules, states = kernel_positions(layout, n, network_seed=n, count=25, positions_seed=5)
    for state in states:
        codes = board_codes(rules, state, layout)
        assert evaluate(codes, False, net) == pytest.approx(reference_value(network, state.black, state.white))
        assert evaluate(codes, True, net) == pytest.approx(reference_value(network, state.white, state.black))
        assert network.value(state.white, state.black) == pytest.approx(reference_value(network, state.white, state.black))


@pytest.mark.parametrize("layout", TEST_LAYOUTS[:4], ids=lambda layout: layout.name or layout.describe())
def test_one_ply_scores_are_the_reference_values_of_the_afterstates(layout):
    network, net, rules, states = kernel_positions(layout, 2, network_seed=11, count=12, positions_seed=6)
    g = rules.geometry
    for state in states:
        codes = board_codes(rules, state, layout)
        before = codes.copy()
        values, moves = np.empty(layout.cells), np.empty(layout.cells, dtype=np.int64)
        count = ntuple_scores(
            codes,
            g.words(state.own),
            g.words(state.opponent),
            g.words(rules.legal_mask(state)),
            state.to_move == 1,
            net,
            g.kernel_args,
            values,
            moves,
        )
        assert np.array_equal(codes, before)  # every trial move is undone
        expected = {}
        for move in rules.legal_moves(state):
            after = rules.play(state, move)
            expected[move] = reference_value(network, after.opponent, after.own)  # the mover's view
        assert {int(moves[k]): pytest.approx(values[k]) for k in range(count)} == expected
        depth_one = root_values(
            codes, g.words(state.own), g.words(state.opponent), state.to_move == 1, 1, net, g.kernel_args, moves, values
        )
        assert {int(moves[k]): pytest.approx(values[k]) for k in range(depth_one)} == expected


def test_search_at_depth_two_is_the_minimum_over_replies():
    layout = layouts()[5]
    network, net, rules, states = kernel_positions(layout, 2, network_seed=12, count=6, positions_seed=9)
    g = rules.geometry
    for state in states:
        codes = board_codes(rules, state, layout)
        values, moves = np.empty(layout.cells), np.empty(layout.cells, dtype=np.int64)
        count = root_values(codes, g.words(state.own), g.words(state.opponent), state.to_move == 1, 2, net, g.kernel_args, moves, values)
        for k in range(count):
            after = rules.play(state, int(moves[k]))
            replies = rules.legal_moves(after)
            if not replies or replies == [PASS]:
                continue  # finished games and passes are scored by the outcome / the next ply
            worst = min(-reference_value(network, (r := rules.play(after, reply)).opponent, r.own) for reply in replies)
            assert values[k] == pytest.approx(worst)


def test_agent_plays_the_best_move_and_breaks_ties_at_random():
    rules = Rules(STANDARD)
    zero = NTupleAgent(AgentContext(rules), np.random.default_rng(0), network=zero_network(STANDARD))
    observation = observe(rules, rules.initial_state())
    assert {zero.act(observation) for _ in range(40)} == set(observation.legal_moves)  # all tie at 0
    network = random_network(STANDARD, 2, seed=1)
    agent = NTupleAgent(AgentContext(rules), np.random.default_rng(0), network=network)
    _, states = random_positions(STANDARD, 8, seed=2)
    observation = observe(rules, states[-1])
    values = agent.move_values(observation)
    assert len(set(values.values())) > 1
    assert agent.act(observation) == max(values, key=values.__getitem__)
    searcher = NTupleAgent(AgentContext(rules), np.random.default_rng(0), depth=2, network=network)
    assert set(searcher.move_values(observation)) == set(observation.legal_moves)


def test_weights_round_trip_and_refuse_another_layout(tmp_path):
    network = random_network(STANDARD, 2, seed=2)
    path = save_network(network, tmp_path / "net.npz", method="test")
    loaded = load_network(STANDARD, path)
    assert np.allclose(loaded.luts, network.luts, atol=1e-5)
    with pytest.raises(NTupleError, match="another layout"):
        load_network(layouts()[1], path)
    with pytest.raises(NTupleError, match="arena train ntuple"):
        load_network(standard_layout(5, 7))


def test_td_training_lifts_the_league_score_of_a_small_board():
    layout = layouts()[5]  # 6x8 with obstacles
    before = league_score(zero_network(layout), 200, seed=1)
    result = train_ntuple(layout, NTupleTrainConfig(method="td", games=3000, eval_every=1000, eval_games=100, seed=1))
    after = league_score(result.network, 200, seed=1)
    assert after > before + 0.2
    assert [point.games for point in result.curve] == [0, 1000, 2000, 3000]


def test_es_keeps_its_parents_and_selects_the_fittest():
    rng = np.random.default_rng(0)
    parents = rng.normal(size=(3, 5))
    population = plus_offspring(parents, 6, 1.0, rng)
    assert population.shape == (9, 5) and np.array_equal(population[:3], parents)
    assert not np.allclose(population[3:], parents[np.arange(6) % 3])
    fitness = np.array([0.1, 0.9, 0.5, 0.9, 0.2, 0.0, 0.3, 0.95, 0.4])
    kept, kept_fitness = plus_selection(population, fitness, 3)
    assert np.array_equal(kept, population[[7, 1, 3]]) and list(kept_fitness) == [0.95, 0.9, 0.9]


def test_es_training_runs_generations_and_reports_the_best():
    result = train_ntuple(layouts()[5], NTupleTrainConfig(method="es", generations=2, es_games=2, seed=3))
    assert len(result.curve) == 2 and result.games == 2 * 100 * 2 * 2
    assert result.network.luts.shape == (network_shape(layouts()[5], 2).orbits, 9)


@pytest.mark.parametrize("bad", [{"method": "sgd"}, {"opponent": "human"}, {"alpha": -1.0}, {"n": 0}, {"epsilon": 2.0}])
def test_bad_training_settings_are_named(bad):
    with pytest.raises(NTupleTrainError, match=next(iter(bad))):
        NTupleTrainConfig(**bad)
