"""MCTS-N: the numba search against a slow reference, constructed positions, the privileged grant.

The reference below is an obviously-correct Python UCT written on ``Rules`` with
the kernel's random streams (xorshift64* for expansion, ``random_playout`` for
rollouts) and its own backup written per colour rather than per depth parity;
the kernel must reproduce its visit counts and values exactly.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from agents.base import AgentContext
from agents.search.mcts import GRANT_REASON, MctsAgent, MissingSimulatorGrant, search
from engine import Condition, Environment, Rules, make_env, standard_layout
from engine.playouts import random_playout
from engine.protocol.observation import observe
from engine.protocol.policy import RandomPolicy
from engine.state import BLACK, PASS, WHITE, State
from harness.play.arena import Arena
from harness.play.game import play_game
from harness.play.grants import EvaluationGrants, evaluation_simulator
from harness.registry.specs import make_agent, parse_spec
from harness.tournaments.match import run_match

MASK64 = (1 << 64) - 1
K_MAJORITY, K_MINORITY = "1.01", "-0.01"
FOUR_BY_FOUR = standard_layout(4, 4, name="4x4")


def env_on(layout, k: str, turn_limit: int | None = None) -> Environment:
    return Environment(0, layout, Condition(k, turn_limit))


def table_of(env: Environment) -> np.ndarray:
    return evaluation_simulator(env, "test").reward_table()


def mcts_agent(env: Environment, seed: int = 0, **params) -> MctsAgent:
    return MctsAgent(AgentContext(env.rules, EvaluationGrants(env).grant_simulator), np.random.default_rng(seed), **params)


# --- the slow reference ------------------------------------------------------------------


class RefNode:
    def __init__(self, rules: Rules, state: State, parent: RefNode | None, move: int) -> None:
        self.state, self.parent, self.move = state, parent, move
        self.children: list[RefNode] = []
        self.visits, self.value = 0, 0.0
        self.untried = rules.legal_mask(state)
        self.must_pass = self.untried == 0 and not rules.is_over(state)


def xorshift(seed: int) -> tuple[int, int]:
    seed ^= seed >> 12
    seed ^= (seed << 25) & MASK64
    seed ^= seed >> 27
    return seed, ((seed * 0x2545F4914F6CDD1D) & MASK64) >> 32


def reference_search(rules, condition, state, n, c, rollout_turns, paper_compat, seed):
    root = RefNode(rules, state, None, PASS)
    for _ in range(n):
        node = root
        while not node.untried and not node.must_pass and node.children:
            node = max(node.children, key=lambda ch: ch.value / ch.visits + c * math.sqrt(math.log(node.visits) / ch.visits))
        if node.must_pass:
            node.must_pass = False
            node.children.append(RefNode(rules, rules.play(node.state, PASS), node, PASS))
            node = node.children[-1]
        elif node.untried:
            seed, bits = xorshift(seed)
            count = node.untried.bit_count()
            cells = [i for i in range(rules.layout.cells) if node.untried >> i & 1]
            move = cells[(bits * count) >> 32]
            node.untried &= ~(1 << move)
            node.children.append(RefNode(rules, rules.play(node.state, move), node, move))
            node = node.children[-1]
        mine, theirs, seed = random_playout(rules, node.state, seed, rollout_turns)
        leaf_colour = node.state.to_move
        winner = leaf_colour if condition.wins(mine, theirs) else 1 - leaf_colour if condition.wins(theirs, mine) else None
        while node is not None:
            node.visits += 1
            judge = root.state.to_move if paper_compat or node.parent is None else node.parent.state.to_move
            node.value += 0.5 if winner is None else float(winner == judge)
            node = node.parent
    return root


REFERENCE_CASES = [  # (env id, simulations, rollout turns, paper_compat, positions)
    (0, 60, 30, False, 3),
    (0, 60, 30, True, 3),
    (4, 50, 30, False, 2),
    (7, 60, -1, False, 2),
    (5, 60, 0, True, 2),
    (6, 40, 30, False, 2),
    (44, 60, 30, False, 2),
    (51, 60, 5, True, 2),
    (21, 60, 30, False, 2),
]


@pytest.mark.parametrize(("env_id", "n", "rollout_turns", "paper_compat", "count"), REFERENCE_CASES)
def test_kernel_matches_the_reference(random_positions, env_id, n, rollout_turns, paper_compat, count):
    env = make_env(env_id)
    table = table_of(env)
    for index, state in enumerate([env.rules.initial_state(), *random_positions(env.rules, count, env_id)]):
        seed = 1000 + index
        got = search(env.rules, table, state, n, 1.4, rollout_turns, paper_compat, seed)
        root = reference_search(env.rules, env.condition, state, n, 1.4, rollout_turns, paper_compat, seed)
        assert got.moves == tuple(child.move for child in root.children)
        assert got.visits == tuple(child.visits for child in root.children)
        assert got.values == pytest.approx([child.value / child.visits for child in root.children], abs=1e-12)


# White to move must pass; black then has one placement (d4), which ends the game.
WHITE_PASSES = """
    B B B B
    B B B B
    B B B W
    B B B .
"""


def test_a_forced_pass_is_a_node_with_one_child(make_position):
    rules = Rules(FOUR_BY_FOUR)
    state = make_position(rules, WHITE_PASSES, WHITE)
    assert rules.legal_moves(state) == [PASS]
    env = env_on(FOUR_BY_FOUR, K_MAJORITY)
    result = search(rules, table_of(env), state, 20, seed=3)
    assert result.moves == (PASS,) and result.visits == (20,)
    root = reference_search(rules, env.condition, state, 20, 1.4, 30, False, 3)
    assert [child.move for child in root.children] == [PASS]
    assert [child.move for child in root.children[0].children] == [15]


# --- the agent ---------------------------------------------------------------------------


@pytest.mark.parametrize("env_id", [*range(7), *range(42, 56)])
def test_plays_only_legal_moves_on_every_layout_including_blitz(env_id):
    env = make_env(env_id)
    agent = mcts_agent(env, seed=env_id, n=12)
    opponent = RandomPolicy(np.random.default_rng(env_id))
    black, white = (agent, opponent) if env_id % 2 == 0 else (opponent, agent)
    record = play_game(env.rules, env.condition, black, white)  # raises on an illegal proposal
    if env.condition.turn_limit:
        assert max(record.moves.count(m) for m in set(record.moves) - {PASS}) == 1
        assert len([m for m in record.moves if m != PASS]) <= 2 * env.condition.turn_limit


@pytest.mark.parametrize("env_id", range(7))
def test_root_visits_sum_to_n(env_id):
    env = make_env(env_id)
    agent = mcts_agent(env, n=37)
    state = env.rules.initial_state()
    move = agent.act(observe(env.rules, state))
    result = agent.last_search
    assert sum(result.visits) == 37 and set(result.moves) == set(env.rules.legal_moves(state))
    assert move in result.most_visited()


# A 4x4 position, black to move: c1 (index 2) ends the game at 6-7, a win under K < 0 and
# a loss under K > 1; b3 (index 9) loses under K < 0 and wins under K > 1.
FINAL_CHOICE = """
    W W . B
    W W W W
    W . B B
    . W . B
"""
# Black to move: a4 (index 12) ends the game at 10-3 (a win under K > 1, a loss under K < 0);
# the other two moves lose under K > 1 and draw under K < 0 with best play.
FINAL_MAJORITY = """
    B B B B
    W . B .
    B W . W
    . B B W
"""


@pytest.mark.parametrize(
    ("text", "k", "best"),
    [(FINAL_CHOICE, K_MINORITY, 2), (FINAL_CHOICE, K_MAJORITY, 9), (FINAL_MAJORITY, K_MAJORITY, 12), (FINAL_MAJORITY, K_MINORITY, None)],
)
@pytest.mark.parametrize("paper_compat", [False, True])
def test_takes_the_winning_move_and_avoids_the_losing_final_move(make_position, text, k, best, paper_compat):
    env = env_on(FOUR_BY_FOUR, k)
    state = make_position(env.rules, text)._replace(placed_black=10, placed_white=10)
    losing = 12 if best is None else None
    for seed in range(5):
        agent = mcts_agent(env, seed, n=60, paper_compat=paper_compat)
        move = agent.act(observe(env.rules, state))
        assert move == best if best is not None else move != losing


# A 4x4 position, white to move. Correct values: a2 (index 4) draws with best play, b4 (13) loses
# (black then has a winning reply). The root player's view everywhere (paper_compat) also counts
# on black's *losing* reply after b4, so it rates b4 as a win and plays it.
MODES = """
    B B B W
    . B B W
    . W B W
    . . B .
"""


def modes_state(make_position, rules):
    return make_position(rules, MODES, WHITE)._replace(placed_black=4, placed_white=3)


def test_backup_modes_differ_as_documented(make_position):
    env = env_on(FOUR_BY_FOUR, K_MAJORITY)
    state = modes_state(make_position, env.rules)
    table = table_of(env)
    correct = [search(env.rules, table, state, 1000, paper_compat=False, seed=s) for s in range(1, 6)]
    compat = [search(env.rules, table, state, 1000, paper_compat=True, seed=s) for s in range(1, 6)]
    for result in correct:
        values = dict(zip(result.moves, result.values))
        assert result.most_visited() == [4]
        assert values[13] < 0.25 and 0.35 < values[4] < 0.6  # heading to the minimax values 0 and 0.5
    for result in compat:
        values = dict(zip(result.moves, result.values))
        assert result.most_visited() == [13]
        assert values[13] > 0.8  # the opponent is assumed to play for the root player


@pytest.mark.parametrize(("k", "value"), [("1.01", 1.0), ("0.9", 1.0), ("0.7", 0.5), ("-0.01", 0.0)])
@pytest.mark.parametrize("paper_compat", [False, True])
def test_values_are_win_rates_with_draws_worth_half(k, value, paper_compat):
    # Scored where they stand (rollout_turns=0), black's four first moves all give 4 discs to 1:
    # rho 0.8 wins for K > 1 and K = 0.9, draws for K = 0.7 (neither 0.8 nor 0.2 lies in
    # (0.5, 0.7)), loses for K < 0.
    env = env_on(make_env(0).layout, k)
    result = search(env.rules, table_of(env), env.rules.initial_state(), 4, rollout_turns=0, paper_compat=paper_compat, seed=5)
    assert result.visits == (1, 1, 1, 1) and result.values == (value,) * 4


def test_the_grant_is_recorded_as_privileged():
    env = make_env(0)
    arena = Arena(env, budget=1, privileged=True)
    agent = MctsAgent(AgentContext(env.rules, arena.grant_simulator), np.random.default_rng(0), n=10)
    usage = arena.privileged_uses
    assert usage.grants == (GRANT_REASON,) and usage.privileged
    assert usage.table_calls == 1 and usage.uses == 1
    agent.act(observe(env.rules, env.rules.initial_state()))
    assert arena.privileged_uses == usage, "moves use the table taken at construction, nothing more"
    grants = EvaluationGrants(env)
    mcts_agent_with = MctsAgent(AgentContext(env.rules, grants.grant_simulator), np.random.default_rng(0))
    assert grants.usage.grants == (GRANT_REASON,) and grants.usage.table_calls == 1
    assert mcts_agent_with.simulator.usage == grants.usage
    assert MctsAgent.privileged and parse_spec("mcts")[0].privileged


def test_without_a_grant_it_refuses_clearly():
    env = make_env(0)
    with pytest.raises(MissingSimulatorGrant, match="mcts is privileged: it needs a simulator grant"):
        MctsAgent(AgentContext(env.rules), np.random.default_rng(0))
    with pytest.raises(MissingSimulatorGrant, match="needs a simulator grant"):
        MctsAgent(AgentContext(env.rules, lambda reason: None), np.random.default_rng(0))
    other = EvaluationGrants(make_env(1)).grant_simulator
    with pytest.raises(ValueError, match="other rules"):
        MctsAgent(AgentContext(env.rules, other), np.random.default_rng(0))


@pytest.mark.parametrize(
    ("params", "message"), [({"n": 0}, "mcts:n=0"), ({"c": -1.0}, "mcts:c=-1.0"), ({"rollout_turns": -2}, "rollout_turns=-2")]
)
def test_bad_parameters_are_refused(params, message):
    with pytest.raises(ValueError, match=message):
        mcts_agent(make_env(0), **params)


def test_spec_builds_the_agent():
    env = make_env(3)
    agent = make_agent(
        "mcts:n=30,c=1.0,rollout_turns=10,paper_compat=true",
        AgentContext(env.rules, EvaluationGrants(env).grant_simulator),
        np.random.default_rng(0),
    )
    assert isinstance(agent, MctsAgent)
    assert (agent.n, agent.c, agent.rollout_turns, agent.paper_compat) == (30, 1.0, 10, True)
    assert agent.name == "mcts:n=30,c=1.0,rollout_turns=10,paper_compat=true"


def test_deterministic_given_the_seed():
    env = make_env(5)

    def factory(rng):
        return MctsAgent(AgentContext(env.rules, EvaluationGrants(env).grant_simulator), rng, n=20)

    first = run_match(env, factory, lambda rng: RandomPolicy(rng), games=2, seed=11)
    again = run_match(env, factory, lambda rng: RandomPolicy(rng), games=2, seed=11)
    other = run_match(env, factory, lambda rng: RandomPolicy(rng), games=2, seed=12)
    assert first.records == again.records
    assert first.records != other.records


def test_ties_at_the_root_are_broken_by_the_agent_generator():
    env = make_env(0)
    state = env.rules.initial_state()
    # One simulation per root move: four moves tied at one visit, chosen by the generator.
    picks = Counter(mcts_agent(env, seed, n=4).act(observe(env.rules, state)) for seed in range(40))
    assert set(picks) == set(env.rules.legal_moves(state))


def test_single_move_and_forced_pass_need_no_search(make_position):
    env = env_on(FOUR_BY_FOUR, K_MAJORITY)
    agent = mcts_agent(env, n=5)
    must_pass = make_position(env.rules, WHITE_PASSES, WHITE)
    assert agent.act(observe(env.rules, must_pass)) == PASS and agent.last_search is None
    single = must_pass._replace(to_move=BLACK)
    assert env.rules.legal_moves(single) == [15]
    assert agent.act(observe(env.rules, single)) == 15 and agent.last_search is None
