"""The cwm agent's engine path: the program's returns table, its checks, the choice of path, spot checks, the planners."""

from __future__ import annotations

import asyncio
from fractions import Fraction

import numpy as np
import pytest

from agents.base import AgentContext
from agents.heuristic.simple import RandomAgent
from engine import make_env
from engine.condition import Condition
from engine.environments import Environment
from engine.layout import standard_layout
from engine.layout_gen import random_layouts
from engine.protocol.observation import observe
from harness.cwm.agent import CwmAgent
from harness.cwm.config import CwmConfig
from harness.cwm.engine_path import (
    EnginePlanner,
    PathChooser,
    PhaseTimes,
    UtilityTable,
    count_pairs,
    path_for,
    read_table,
    spot_check,
    table_request,
    utility_table,
)
from harness.cwm.refine import RefineConfig
from harness.models.client import ModelClient
from harness.play.arena import Arena
from harness.play.decisions import MoveDecision
from harness.play.game import from_policy, play_game_sync
from harness.sandbox.client import SandboxWorker
from harness.sandbox.failures import Failure, FailureKind
from harness.sandbox.limits import Limits
from harness.sandbox.reference_program import reference_source

LIMITS = Limits(call_s=20.0, start_s=20.0, memory_bytes=512 << 20)


def _env(layout, k: Fraction, turn_limit: int | None = None) -> Environment:
    return Environment("test", layout, Condition(k, turn_limit, "per_player", "test"))


def _true_table(env: Environment) -> UtilityTable:
    """The table of the environment's own condition, built without a program."""
    pairs = count_pairs(len(table_request(env.rules)["playable"]))
    table = read_table(env.rules, {"returns": [list(env.condition.rewards(b, w)) for b, w in pairs]}, pairs)
    assert isinstance(table, UtilityTable)
    return table


BIG = _env(standard_layout(16, 16), Fraction(3, 5), turn_limit=10)  # 16x16 and a 10-turn blitz: games end with empties
SAMPLED = _env(
    random_layouts(7, 1, rows=(6, 9), cols=(6, 9))[0], Fraction(37, 100)
)  # a random layout and a K none of the 56 environments has


@pytest.mark.parametrize("env", [make_env(14), BIG, SAMPLED], ids=["env14", "16x16-blitz", "random-K0.37"])
def test_the_table_holds_the_programs_returns_at_every_final_count_pair(sandbox_ready, env):
    playable = env.rules.layout.cells - len(env.rules.layout.obstacles)
    k = float(env.condition.k)
    with SandboxWorker(reference_source(k), LIMITS) as worker:
        table = utility_table(worker, env.rules)
    assert isinstance(table, UtilityTable), table
    assert table.pairs == len(count_pairs(playable)) == (playable + 1) * (playable + 2) // 2 - 1
    assert table.symmetric
    low, high = min(k, 0.5), max(k, 0.5)
    for black, white in count_pairs(playable):
        share = black / (black + white)
        expected = (1, -1) if low < share < high else (-1, 1) if low < 1 - share < high else (0, 0)
        assert table.returns(black, white) == expected, (black, white)
        assert table.for_colour(0)[black, white] == expected[0] and table.for_colour(1)[white, black] == expected[1]


BAD_RETURNS = {
    "nan": ("return [float('nan'), 0.0]", {FailureKind.BAD_OUTPUT}),
    "a string": ("return 'black wins'", {FailureKind.CRASH, FailureKind.BAD_OUTPUT}),
    "wrong length": ("return [1.0]", {FailureKind.CRASH, FailureKind.BAD_OUTPUT}),
    "outside [-1, 1]": ("return [2.0, -2.0]", {FailureKind.BAD_OUTPUT}),
    "a bool": ("return [True, False]", {FailureKind.CRASH, FailureKind.BAD_OUTPUT}),
    "a loop at one pair": (
        "b, w = state['board'].count(1), state['board'].count(2)\n    while (b, w) == (7, 3):\n        pass\n    return [0.0, 0.0]",
        {FailureKind.TIMEOUT},
    ),
}


@pytest.mark.parametrize("bad", BAD_RETURNS)
def test_a_bad_returns_table_is_a_classified_failure_and_the_program_path_is_kept(sandbox_ready, bad):
    body, kinds = BAD_RETURNS[bad]
    source = reference_source(0.7).replace("def returns(state: dict[str, Any]) -> list[float]:\n", f"def returns(state):\n    {body}\n", 1)
    assert f"    {body}\n" in source
    env = make_env(14)
    limits = Limits(call_s=3.0, start_s=20.0, memory_bytes=512 << 20)
    with SandboxWorker(source, limits) as worker:
        table = utility_table(worker, env.rules)
        assert isinstance(table, Failure) and table.kind in kinds, table
        chooser = PathChooser(AgentContext(env.rules), CwmConfig(), PhaseTimes())
        chooser.heldout["program"] = 1.0
        refused = chooser.choose(worker, "program", 1, 1.0, 9)
    assert refused is not None and refused.kind in kinds
    assert chooser.engine is None
    assert chooser.record == [{"games_played": 9, "call": 1, "path": "program", "why": chooser.record[0]["why"]}]
    assert chooser.record[0]["why"].startswith("its returns table was refused")


def test_read_table_checks_every_entry():
    env = make_env(5)
    pairs = count_pairs(len(table_request(env.rules)["playable"]))
    good = [[0.0, 0.0]] * len(pairs)
    assert isinstance(read_table(env.rules, {"returns": good}, pairs), UtilityTable)
    for answer in (
        None,
        [],
        {"returns": good[:-1]},
        {"returns": good + [[0.0, 0.0]]},
        {"returns": "no"},
        {"returns": good[:-1] + [[0.0, float("inf")]]},
        {"returns": good[:-1] + [[0.0, float("nan")]]},
        {"returns": good[:-1] + [[-1.5, 0.0]]},
        {"returns": good[:-1] + [["1", 0.0]]},
        {"returns": good[:-1] + [[0.0, 0.0, 0.0]]},
    ):
        assert isinstance(read_table(env.rules, answer, pairs), Failure), answer


@pytest.mark.parametrize(
    ("transitions", "train", "heldout", "path"),
    [
        ("engine", 1.0, 1.0, "engine"),
        ("engine", 1.0, None, "engine"),
        ("engine", None, 1.0, "engine"),
        ("engine", 1.0, 0.999, "program"),
        ("engine", 0.98, 1.0, "program"),
        ("engine", None, None, "program"),
        ("program", 1.0, 1.0, "program"),
    ],
)
def test_the_engine_path_needs_every_transition_test_passed(transitions, train, heldout, path):
    assert path_for(transitions, train, heldout)[0] == path


def test_the_turn_limit_positions_say_the_limit_was_reached():
    request = table_request(BIG.rules)
    assert request["short_placed"] == [10, 10]
    assert table_request(make_env(14).rules)["short_placed"] is None
    assert len(request["playable"]) == 256 and set(request["state"]["board"]) == {0}


WRONG_LATE = """

_apply = apply_action


def apply_action(state, action):
    new = _apply(state, action)
    if sum(1 for v in state["board"] if v in (1, 2)) >= 30:
        new = dict(new, player=state["player"])
    return new
"""


def test_a_spot_check_finds_a_program_wrong_where_its_tests_did_not_look(sandbox_ready):
    env = make_env(14)
    rules = env.rules
    state, rng = rules.initial_state(), np.random.default_rng(3)
    with SandboxWorker(reference_source(0.8), LIMITS) as right, SandboxWorker(reference_source(0.8) + WRONG_LATE, LIMITS) as wrong:
        found = []
        while not rules.is_over(state):
            legal = rules.legal_moves(state)
            move = int(legal[rng.integers(len(legal))])
            observation = observe(rules, state)
            assert spot_check(right, rules, observation, move) is None
            step = spot_check(wrong, rules, observation, move)
            discs = (state.black | state.white).bit_count()
            assert (step is not None) == (discs >= 30), discs
            if step is not None:
                assert step.move == move and step.after == rules.play(state, move)
            found.append(step)
            state = rules.play(state, move)


@pytest.mark.parametrize("planner", ["mcts", "minimax"])
@pytest.mark.parametrize(
    "env", [make_env(19), SAMPLED, _env(random_layouts(11, 1, rows=(6, 9), cols=(6, 9))[0], Fraction(-1, 100), turn_limit=8)]
)
def test_the_kernels_on_a_true_table_beat_random(planner, env):
    engine = EnginePlanner(AgentContext(env.rules), _true_table(env), planner, 2, 1.4)
    wins = 0
    for game in range(8):
        rng = np.random.default_rng(game)

        def mine(observation, rng=rng):
            return MoveDecision(engine.move(observation, 100, rng), False, [])

        opponent = from_policy(RandomAgent(AgentContext(env.rules), np.random.default_rng([5, game])))
        verified, _ = play_game_sync(env.rules, env.condition, *((mine, opponent) if game % 2 == 0 else (opponent, mine)))
        wins += verified.record.rewards[game % 2] == 1
    assert wins >= 6, (planner, wins)


def _agent(model: str, env: Environment, budget: int) -> CwmAgent:
    config = CwmConfig(explore_games=10, heldout_transitions=60, max_calls=3, refine=RefineConfig(limits=LIMITS))
    return CwmAgent(AgentContext(env.rules), np.random.default_rng(0), ModelClient(model), budget=budget, seed=4, config=config)


@pytest.mark.parametrize(("model", "path"), [("mock/coder", "engine"), ("mock/coder-no-diagonals", "program")])
def test_a_program_with_wrong_transitions_plans_on_the_program(sandbox_ready, model, path):
    env = make_env(14)
    agent = _agent(model, env, 14)
    try:
        asyncio.run(agent.adapt_async(Arena(env, budget=14)))
        counts = agent.counts()
    finally:
        agent.close()
    assert counts["path"] == path and counts["paths"], counts
    if path == "program":
        assert all(entry["path"] == "program" and "failed transition tests" in entry["why"] for entry in counts["paths"])
        assert counts["utility_table"] is None
    else:
        assert counts["utility_table"].startswith("2144 final count pairs (65x65)")
        assert counts["spot_checks"] > 0 and counts["model_errors"] == 0
    assert set(counts["seconds"]) >= {"synthesis", "held-out tests", "planning"}
