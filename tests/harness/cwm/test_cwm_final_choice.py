"""The cwm agent's choice among its best programs (bad-sample rejection), and minimax as its planner."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from agents.base import AgentContext
from engine import make_env
from harness.bench.cwm import games_against_random
from harness.cwm.agent import CwmAgent
from harness.cwm.config import CwmConfig
from harness.cwm.finalists import RejectionConfig, finalists
from harness.cwm.refine import Candidate, RefineConfig
from harness.cwm.tests_from_games import Score
from harness.models.client import ModelClient
from harness.models.mock import MockModel
from harness.play.arena import Arena
from harness.sandbox.limits import Limits
from harness.sandbox.reference_program import reference_source

ENV = 7 * 2 + 5  # K = 4/5 on the 6x8 board
LIMITS = Limits(call_s=30.0, start_s=20.0, cpu_s=3600)
SOUND = reference_source(0.8)
MINORITY = reference_source(-0.01)  # a wrong rule: fails the decisive outcomes of a K = 4/5 board
# Right on everything the tests reach, broken in play: its legal_actions fails after 4,000 calls (a bug deep in a
# game that no logged step shows; the tests make a few hundred calls, a game of MCTS thousands).
DEEP_BUG = (
    SOUND
    + """

_CALLS = [0]
_checked_legal_actions = legal_actions


def legal_actions(state):
    _CALLS[0] += 1
    if _CALLS[0] > 4000:
        raise RuntimeError("a bug deep in play")
    return _checked_legal_actions(state)
"""
)


def _fenced(source: str) -> str:
    return f"Here is the program.\n```python\n{source}```\n"


def _candidate(source: str | None, passed: int, call: int) -> Candidate:
    return Candidate(source, Score(passed / 10, passed / 10, passed, 10), call)


def test_finalists_are_distinct_programs_near_the_best_best_first():
    best = _candidate("a", 10, 3)
    tested = [_candidate("b", 9, 1), _candidate(None, 10, 2), best, _candidate("a", 10, 4), _candidate("c", 10, 5), _candidate("d", 5, 6)]
    assert [c.source for c in finalists(best, tested, 3)] == ["a", "c"]  # exact ties only; "a" once, the earliest
    assert [c.call for c in finalists(best, tested, 3, tolerance=0.1)] == [3, 5, 1]
    assert [c.source for c in finalists(best, tested, 2, tolerance=1.0)] == ["a", "c"]  # at most the limit


@pytest.mark.parametrize(
    ("field", "value"), [("candidates", -1), ("games_per_pair", 0), ("simulations", 0), ("margin", 1.5), ("tolerance", -0.1)]
)
def test_bad_rejection_settings_are_named(field, value):
    with pytest.raises(ValueError, match=field):
        RejectionConfig(**{field: value})


def test_a_program_that_passes_every_test_but_breaks_in_play_is_rejected(sandbox_ready):
    env = make_env(ENV)
    model = MockModel(replies=[_fenced(MINORITY), _fenced(DEEP_BUG)])
    config = CwmConfig(
        explore_games=6,
        explore_random=6,
        heldout_transitions=60,
        max_calls=3,
        simulations=8,
        refine=RefineConfig(mode="tree", calls_per_episode=2, limits=LIMITS),
        rejection=RejectionConfig(candidates=3, tolerance=1.0, simulations=8),
    )
    calls: list[dict] = []
    agent = CwmAgent(
        AgentContext(env.rules),
        np.random.default_rng(0),
        ModelClient("mock/scripted", mock=model),
        budget=6,
        seed=5,
        config=config,
        on_call=calls.append,
    )
    try:
        asyncio.run(agent.adapt_async(Arena(env, budget=6)))
        by_call = {c.call: c for c in agent.synth.tested}
        assert by_call[2].source == DEEP_BUG and by_call[2].score.all_passed  # the tests cannot tell
        assert not by_call[1].score.all_passed
        assert len(agent.rejections) == 1, agent.rejections
        rejection = agent.rejections[0]
        assert rejection["calls"] == [2, 1] and rejection["kept"] == [1] and rejection["chosen"] == 1
        assert rejection["mean_payoffs"][0] < rejection["mean_payoffs"][1]
        assert agent.best is not None and agent.best.source == MINORITY
        assert agent.counts()["rejected"] == 1 and len(calls) == 2
    finally:
        agent.close()


def test_minimax_on_the_program_plays_and_beats_random(sandbox_ready):
    env = make_env(5)  # K > 1 on the 6x8 board: a plain majority
    config = CwmConfig(
        explore_games=8,
        explore_random=8,
        heldout_transitions=60,
        max_calls=3,
        planner="minimax",
        depth=2,
        max_nodes=2_000,
        refine=RefineConfig(limits=LIMITS),
    )
    agent = CwmAgent(AgentContext(env.rules), np.random.default_rng(0), ModelClient("mock/coder"), budget=9, seed=2, config=config)
    try:
        asyncio.run(agent.adapt_async(Arena(env, budget=9)))
        agent.freeze()
        wins, _ = games_against_random(agent, env, 4, seed=0)
        assert agent.counts()["plan_failures"] == 0 and agent.counts()["model_errors"] == 0
        assert wins >= 3
    finally:
        agent.close()


def test_an_unknown_planner_is_named():
    with pytest.raises(ValueError, match="planner 'uct'"):
        CwmConfig(planner="uct")
