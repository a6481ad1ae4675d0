"""The AlphaZero-style network, its PUCT search, a training step, checkpoints and the ``az`` agent (small and fast)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import torch

from agents.az.agent import AzAgent
from agents.az.net import AzNet, AzNetConfig, AzWeightsError, encode, evaluator, load_net, predict, save_net
from agents.az.search import Tree, add_root_noise, expand_roots, simulate
from agents.az.train import AzTrainConfig, AzTrainError, self_play, train_az, train_batch
from agents.base import AgentContext
from engine.environments import layouts
from engine.layout import standard_layout
from engine.layout_gen import random_layout
from engine.protocol.observation import observe
from engine.rules import Rules
from engine.state import PASS

TINY = AzNetConfig(channels=8, blocks=1)
torch.set_num_threads(1)  # as the agent and the trainer do: tiny convolutions gain nothing from a thread pool


@pytest.fixture
def tiny_net() -> AzNet:
    torch.manual_seed(0)
    net = AzNet(TINY)
    with torch.no_grad():  # non-trivial batch-norm statistics, so padding mistakes would show
        for module in net.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                module.running_mean.uniform_(-0.5, 0.5)
                module.running_var.uniform_(0.5, 2.0)
    return net.eval()


def test_outputs_fit_any_board_and_padding_changes_nothing(tiny_net):
    small = Rules(standard_layout(6, 8, [(0, 0), (2, 5), (5, 7)]))
    large = Rules(layouts()[4])  # Random Board 1, 12x10 with obstacles
    grids = [small.grid(small.initial_state()), large.grid(large.initial_state())]
    logits, values = predict(tiny_net, [encode(grid) for grid in grids])
    assert [len(row) for row in logits] == [48, 120] and values.shape == (2,)
    assert np.all(np.abs(values) <= 1)
    alone_logits, alone_values = predict(tiny_net, [encode(grids[0])])
    np.testing.assert_allclose(alone_logits[0], logits[0], atol=1e-5)  # padded to 12x10 in the batch
    np.testing.assert_allclose(alone_values, values[:1], atol=1e-5)


def test_planes_mark_obstacles_as_on_board_but_not_empty():
    rules = Rules(standard_layout(6, 6, [(0, 0)]))
    planes = encode(rules.grid(rules.initial_state()))
    assert planes.shape == (4, 6, 6)
    assert planes[2, 0, 0] == 0 and planes[3, 0, 0] == 1 and planes[:2, 0, 0].sum() == 0
    assert planes[:3].sum(axis=0)[1:, 1:].min() == 1  # every other cell: own, opponent or empty


def test_puct_visits_only_legal_moves_on_an_obstacle_layout(tiny_net):
    rules = Rules(random_layout(np.random.default_rng(3), rows=8, cols=8, obstacle_density=4 / 64))
    state = rules.initial_state()
    tree = Tree(rules, state)
    evaluate = evaluator(tiny_net)
    expand_roots([tree], evaluate)
    add_root_noise(tree, np.random.default_rng(0))
    simulate([tree], evaluate, 60)
    assert tree.root.moves == rules.legal_moves(state)
    assert tree.root.visits.sum() == 60
    legal = set(rules.legal_moves(state))
    policy = tree.policy()
    assert set(np.flatnonzero(policy)) <= legal and policy.sum() == pytest.approx(1)
    for move, child in tree.root.children.items():
        assert move in legal
        assert child.state == rules.play(state, move)
        for grandchild_move in child.children:
            assert grandchild_move in rules.legal_moves(child.state)


def test_a_finished_game_is_scored_not_evaluated(tiny_net):
    rules = Rules(standard_layout(4, 4))
    state = rules.initial_state()
    while rules.legal_moves(state):
        state = rules.play(state, rules.legal_moves(state)[0])
    tree = Tree(rules, state)
    assert tree.root.outcome in (-1.0, 0.0, 1.0) and tree.root.moves == []
    simulate([tree], lambda grids: pytest.fail("a finished game needs no network"), 3)


def test_training_steps_lower_the_loss_on_one_batch():
    torch.manual_seed(1)
    net = AzNet(TINY)
    rng = np.random.default_rng(0)
    samples, games = self_play(net.eval(), AzTrainConfig(games=2, simulations=4, channels=8, blocks=1), rng)
    assert games == 2 and samples
    assert all(s.policy[~s.legal].sum() == 0 and s.outcome in (-1.0, 0.0, 1.0) for s in samples)
    batch = samples[:32]
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)
    fixed = np.random.default_rng(5)
    first = sum(train_batch(net, optimizer, batch, np.random.default_rng(5)))
    for _ in range(15):
        train_batch(net, optimizer, batch, fixed)
    assert sum(train_batch(net, optimizer, batch, np.random.default_rng(5))) < first


def test_checkpoint_resume_and_weights_file(tmp_path):
    config = AzTrainConfig(rounds=1, games=1, simulations=2, steps=1, batch=4, channels=8, blocks=1, seconds=0)
    _, reports = train_az(config, tmp_path)
    assert [r.round for r in reports] == [1] and (tmp_path / "checkpoint.pt").is_file()
    _, more = train_az(AzTrainConfig(**{**config.__dict__, "rounds": 2}), tmp_path, resume=True)
    assert [r.round for r in more] == [2]
    with pytest.raises(AzTrainError, match="no checkpoint.pt"):
        train_az(config, tmp_path / "empty", resume=True)
    assert isinstance(load_net(tmp_path / "checkpoint.pt"), AzNet)


def test_bad_weights_get_one_clear_error(tmp_path):
    with pytest.raises(AzWeightsError, match="no az weights"):
        load_net(tmp_path / "missing.pt")
    bad = tmp_path / "bad.pt"
    bad.write_text("not a checkpoint")
    with pytest.raises(AzWeightsError, match="not an az checkpoint"):
        load_net(bad)


def test_agent_plays_a_legal_game_on_a_random_layout(tmp_path):
    weights = save_net(AzNet(TINY).eval(), tmp_path / "tiny.pt")
    rules = Rules(random_layout(np.random.default_rng(11), rows=(6, 9), cols=(6, 9), obstacle_density=(0.05, 0.15)))
    agent = AzAgent(AgentContext(rules), np.random.default_rng(0), simulations=6, weights=str(weights))
    rng = np.random.default_rng(1)
    state, searched = rules.initial_state(), 0
    while rules.legal_moves(state):
        observation = observe(rules, state)
        if state.to_move == 0:
            move = agent.act(observation)
            searched += len([m for m in observation.legal_moves if m != PASS]) > 1
            if len(observation.legal_moves) > 1:
                assert set(agent.last_visits) == set(observation.legal_moves)
        else:
            move = int(rng.choice(observation.legal_moves))
        assert move in observation.legal_moves
        state = rules.play(state, move)
    assert searched > 0


def test_the_agent_module_does_not_import_torch():
    code = "import sys, agents.az.agent; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
