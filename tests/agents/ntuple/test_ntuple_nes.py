"""NES training of n-tuple networks, starting from given weights, and the agent's ``weights=FILE`` parameter."""

from __future__ import annotations

import numpy as np
import pytest

from agents.base import AgentContext
from agents.ntuple.nes import nes_ascent, unit_rms
from agents.ntuple.network import NTupleError, network_shape, save_network, zero_network
from agents.ntuple.train import NTupleTrainConfig, NTupleTrainError, league_score, train_ntuple
from engine.environments import layouts
from engine.layout_gen import random_layout
from engine.rules import Rules
from harness.registry.specs import make_agent

SMALL = layouts()[5]  # 6x8 with obstacles


def test_nes_climbs_a_noisy_smooth_function():
    target = unit_rms(np.arange(1.0, 9.0))
    rng = np.random.default_rng(0)

    def score(theta, games, seed):  # cosine to the target plus game-like noise
        noise = np.random.default_rng(seed).normal(scale=0.05)
        return float(theta @ target / (np.linalg.norm(theta) * np.linalg.norm(target))) + noise

    checks = []
    best, value, steps = nes_ascent(
        -target, score, 16, 1, 0.3, 0.1, rng, lambda step: step < 60, lambda step, theta: checks.append(score(theta, 1, 7)) or checks[-1]
    )
    assert steps == 60 and len(checks) == 7
    assert value == max(checks) and value > 0.9 and checks[0] < -0.9
    assert np.sqrt(np.mean(best**2)) == pytest.approx(1.0)


def test_nes_training_from_given_weights_keeps_the_shape_and_reports_checks():
    shape = network_shape(SMALL, 2)
    start = np.random.default_rng(4).normal(size=(shape.orbits, 9))
    config = NTupleTrainConfig(method="nes", generations=10, nes_pairs=2, nes_games=1, eval_games=20, seed=2, init=start)
    result = train_ntuple(SMALL, config)
    assert result.network.luts.shape == (shape.orbits, 9)
    assert [point.games for point in result.curve] == [0, 10 * 4 * 2]
    assert result.score == max(point.score for point in result.curve)


def test_initial_weights_of_another_shape_are_refused():
    with pytest.raises(NTupleTrainError, match="do not fit"):
        train_ntuple(SMALL, NTupleTrainConfig(method="nes", generations=1, init=np.zeros((3, 9))))


def test_weights_parameter_plays_any_layout_with_a_trained_file(tmp_path):
    layout = random_layout(np.random.default_rng(9), rows=7, cols=9, obstacle_density=0.1)
    trained = train_ntuple(layout, NTupleTrainConfig(method="td", games=300, eval_every=300, eval_games=20, seed=1))
    path = save_network(trained.network, tmp_path / "mine.npz")
    rules = Rules(layout)
    agent = make_agent(f"ntuple:weights={path}", AgentContext(rules), np.random.default_rng(0))
    assert np.allclose(agent.network.luts, trained.network.luts, atol=1e-6)  # type: ignore[attr-defined]
    assert league_score(trained.network, 5) >= 0  # the file's network is playable on its layout
    with pytest.raises(NTupleError, match="another layout"):
        make_agent(f"ntuple:weights={path}", AgentContext(Rules(layouts()[0])), np.random.default_rng(0))
    with pytest.raises(NTupleError, match="no such file"):
        make_agent(f"ntuple:weights={tmp_path / 'none.npz'}", AgentContext(rules), np.random.default_rng(0))
    with pytest.raises(NTupleError, match="arena train ntuple"):
        make_agent("ntuple", AgentContext(rules), np.random.default_rng(0))
    assert zero_network(layout).luts.shape == trained.network.luts.shape
