"""Batched leaves under virtual loss, and the ``az`` agent's subtree reuse and clock (tiny networks, fast)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.az.agent import AzAgent
from agents.az.net import AzNet, AzNetConfig, evaluator, save_net
from agents.az.search import Tree, simulate
from agents.base import AgentContext
from engine.layout import standard_layout
from engine.protocol.observation import observe
from engine.rules import Rules

torch.set_num_threads(1)


def flat_evaluate(sizes: list[int]):
    """Uniform logits and value 0 for every board, recording each call's batch size."""

    def evaluate(grids):
        sizes.append(len(grids))
        return [np.zeros(grid.size) for grid in grids], np.zeros(len(grids))

    return evaluate


def test_virtual_losses_are_all_taken_back_and_every_descent_counts():
    rules = Rules(standard_layout(8, 8))
    tree, sizes = Tree(rules, rules.initial_state()), []
    simulate([tree], flat_evaluate(sizes), 12, leaves=8)
    assert tree.root.visits.sum() == 11 * 8  # the first step expands the root: one descent
    assert sizes[0] == 1 and max(sizes) > 1 and sum(sizes) <= 1 + 11 * 8  # leaves share a call; a leaf reached twice is valued once
    pending = [tree.root]
    while pending:  # every leaf's value was 0 and no game ended this early: any leftover virtual loss would show
        node = pending.pop()
        assert not node.totals.any()
        pending.extend(node.children.values())


def test_batched_leaves_spread_over_the_moves_like_single_ones(tmp_path):
    rules = Rules(standard_layout(6, 6))
    torch.manual_seed(0)
    evaluate = evaluator(AzNet(AzNetConfig(channels=8, blocks=1)).eval())
    single, batched = Tree(rules, rules.initial_state()), Tree(rules, rules.initial_state())
    simulate([single], evaluate, 57)
    simulate([batched], evaluate, 8, leaves=8)
    assert single.root.visits.sum() == 56 and batched.root.visits.sum() == 56
    assert (batched.root.visits > 0).all()  # virtual loss sends descents to every move, not one path 8 times
    q = batched.root.totals / batched.root.visits
    assert (np.abs(q) <= 1).all()


@pytest.fixture
def tiny_weights(tmp_path):
    torch.manual_seed(1)
    return str(save_net(AzNet(AzNetConfig(channels=8, blocks=1)).eval(), tmp_path / "tiny.pt"))


def test_the_agent_starts_from_the_subtree_of_the_position_reached(tiny_weights):
    rules = Rules(standard_layout(6, 6))
    agent = AzAgent(AgentContext(rules), np.random.default_rng(0), seconds=100, simulations=200, weights=tiny_weights)
    state = rules.initial_state()
    move = agent.act(observe(rules, state))
    child = agent._tree.root.children[move]
    reply = child.moves[int(np.argmax(child.visits))]  # the opponent plays the reply the tree explored most
    expected = int(child.children[reply].visits.sum())
    state = rules.play(rules.play(state, move), reply)
    agent.act(observe(rules, state))
    assert expected > 0 and agent.reused == expected
    agent.act(observe(rules, rules.initial_state()))  # a new game: nothing is reused
    assert agent.reused == 0


def test_bad_clock_or_leaves_get_one_clear_error(tiny_weights):
    context = AgentContext(Rules(standard_layout(6, 6)))
    with pytest.raises(ValueError, match="clock='sun'"):
        AzAgent(context, np.random.default_rng(0), clock="sun", weights=tiny_weights)
    with pytest.raises(ValueError, match="leaves=0"):
        AzAgent(context, np.random.default_rng(0), leaves=0, weights=tiny_weights)
