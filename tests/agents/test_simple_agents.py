"""Random, Greedy and Corner in constructed positions and on random positions of every layout."""

from __future__ import annotations

import numpy as np
import pytest

from agents.base import AgentContext
from agents.heuristic.positional import corner_cells
from agents.heuristic.simple import CornerAgent, GreedyAgent, RandomAgent
from engine import PASS, make_env
from engine.environments import layouts
from engine.protocol.observation import observe
from engine.rules import Rules
from engine.state import BLACK, State
from harness.registry.specs import make_agent

STANDARD, NO_CORNERS = 0, 1

GREEDY_POSITION = """
. . . . . . . .
. . . . . . . .
. . . . . . . .
B W W W . . . .
. . . . . . . .
. . . . . . . .
. W B . . . . .
. . . . . . . .
"""
CORNER_POSITION = """
. W B . B W W .
. . . . . . . .
. . . . . . . .
B W W W . . . .
. . . . . . . .
. . . . . . . .
. . . . . . . .
. . . . . . . .
"""
NO_CORNERS_POSITION = """
# . W B . . . #
. . . . . . . .
. . . . . . . .
B W W W . . . .
. . . . . . . .
. . . . . . . .
. . . . . . . .
# . . . . . . #
"""


def agent(spec: str, rules: Rules, seed: int = 0):
    return make_agent(spec, AgentContext(rules), np.random.default_rng(seed))


def flip_counts(rules: Rules, state: State) -> dict[int, int]:
    return {move: rules.flips(state, move).bit_count() for move in rules.legal_moves(state)}


def test_the_registered_classes():
    rules = make_env(0).rules
    assert isinstance(agent("random", rules), RandomAgent)
    assert isinstance(agent("greedy", rules), GreedyAgent)
    assert isinstance(agent("corner", rules), CornerAgent)


def test_greedy_takes_the_move_that_flips_most(make_position):
    rules = make_env(STANDARD).rules
    state = make_position(rules, GREEDY_POSITION)
    assert flip_counts(rules, state) == {rules.layout.index((3, 4)): 3, rules.layout.index((6, 0)): 1}
    for seed in range(10):
        assert agent("greedy", rules, seed).act(observe(rules, state)) == rules.layout.index((3, 4))


@pytest.mark.parametrize("layout_index", range(7))
def test_greedy_maximises_flips_on_random_positions(layout_index, random_positions):
    rules = make_env(layout_index).rules
    greedy = agent("greedy", rules, layout_index)
    for state in random_positions(rules, 30, seed=layout_index):
        counts = flip_counts(rules, state)
        assert counts[greedy.act(observe(rules, state))] == max(counts.values())


def test_greedy_breaks_ties_with_its_generator():
    rules = make_env(STANDARD).rules
    obs = observe(rules, rules.initial_state())  # four symmetric openings, one flip each
    chosen = {agent("greedy", rules, seed).act(obs) for seed in range(40)}
    assert chosen == set(obs.legal_moves)
    assert agent("greedy", rules, 5).act(obs) == agent("greedy", rules, 5).act(obs)


def test_corner_takes_a_corner_over_more_flips(make_position):
    rules = make_env(STANDARD).rules
    state = make_position(rules, CORNER_POSITION)
    counts = flip_counts(rules, state)
    index = rules.layout.index
    assert counts[index((0, 0))] == 1 and counts[index((0, 7))] == 2 and counts[index((3, 4))] == 3
    for seed in range(10):
        assert agent("corner", rules, seed).act(observe(rules, state)) == index((0, 7))  # the corner flipping most
        assert agent("greedy", rules, seed).act(observe(rules, state)) == index((3, 4))


def test_corner_knows_the_obstacle_corners_of_no_corners(make_position):
    rules = make_env(NO_CORNERS).rules
    assert (0, 1) in corner_cells(rules.layout)
    state = make_position(rules, NO_CORNERS_POSITION)
    assert flip_counts(rules, state)[rules.layout.index((0, 1))] == 1
    for seed in range(10):
        assert agent("corner", rules, seed).act(observe(rules, state)) == rules.layout.index((0, 1))


def test_corner_plays_greedy_without_a_corner(make_position):
    rules = make_env(STANDARD).rules
    state = make_position(rules, GREEDY_POSITION)
    assert agent("corner", rules).act(observe(rules, state)) == rules.layout.index((3, 4))


@pytest.mark.parametrize("layout_index", range(7))
def test_corner_takes_a_corner_whenever_one_is_legal(layout_index, random_positions):
    rules = make_env(layout_index).rules
    corner_agent = agent("corner", rules, layout_index)
    corners = {rules.layout.index(cell) for cell in corner_cells(rules.layout)}
    for state in random_positions(rules, 40, seed=100 + layout_index):
        legal = set(rules.legal_moves(state))
        move = corner_agent.act(observe(rules, state))
        assert move in legal
        if legal & corners:
            assert move in corners
        else:
            counts = flip_counts(rules, state)
            assert counts[move] == max(counts.values())


def test_random_plays_every_legal_move_and_repeats_with_its_seed():
    rules = make_env(STANDARD).rules
    obs = observe(rules, rules.initial_state())
    assert {agent("random", rules, seed).act(obs) for seed in range(40)} == set(obs.legal_moves)
    first = agent("random", rules, 3)
    second = agent("random", rules, 3)
    assert [first.act(obs) for _ in range(10)] == [second.act(obs) for _ in range(10)]


@pytest.mark.parametrize("spec", ["random", "greedy", "corner", "positional"])
def test_a_forced_pass_is_answered_with_pass(spec, make_position):
    rules = make_env(STANDARD).rules
    state = make_position(rules, "W B . . . . . .\n" + ". . . . . . . .\n" * 7, BLACK)
    obs = observe(rules, state)
    assert obs.must_pass
    assert agent(spec, rules).act(obs) == PASS


def test_layouts_have_corners():
    for layout in layouts():
        assert corner_cells(layout), layout.name
