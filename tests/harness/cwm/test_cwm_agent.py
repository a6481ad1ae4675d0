"""The cwm agent with mock/coder: adapts on one environment of each condition family; its code's K interval holds K."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pytest

from agents.base import AgentContext
from agents.interval.belief import KInterval
from engine import Environment, make_env
from harness.bench.cwm import games_against_random
from harness.cwm.agent import CwmAgent
from harness.cwm.config import CwmConfig
from harness.cwm.refine import RefineConfig
from harness.models.client import ModelClient
from harness.models.coder import feasible_k, program_for, simplest_k
from harness.play.arena import Arena
from harness.sandbox.command import bubblewrap_problem
from harness.sandbox.limits import Limits

LAYOUT = 5  # Random Board 2 (6x8, obstacles): the smallest benchmark board, so a test takes seconds
FAMILIES = {"K>1": 0, "0.5<K<1": 2, "0<K<0.5": 4, "K<0": 1, "blitz": 7}  # condition indices
BUDGET = 24


def _agent(env, mode: str, calls: list, beliefs: list) -> CwmAgent:
    config = CwmConfig(
        explore_games=12,
        heldout_transitions=60,
        max_calls=5,
        simulations=8,
        refine=RefineConfig(mode=mode, limits=Limits(call_s=30.0, start_s=20.0, cpu_s=3600)),
    )
    return CwmAgent(
        AgentContext(env.rules),
        np.random.default_rng(0),
        ModelClient("mock/coder"),
        budget=BUDGET,
        seed=3,
        config=config,
        on_call=calls.append,
        on_belief=lambda *args: beliefs.append(args),
    )


@dataclass(frozen=True)
class Adapted:
    """What an adaptation left, read right after it (before any freeze or evaluation game)."""

    env: Environment
    agent: CwmAgent
    remaining: int
    calls: list
    beliefs: list
    interval: KInterval | None
    all_passed: bool
    synth_calls: int
    steps: list
    regime: str
    counts: dict


def _adapt(family: str) -> Adapted:
    env = make_env(7 * FAMILIES[family] + LAYOUT)
    calls, beliefs = [], []
    agent = _agent(env, "tree" if FAMILIES[family] % 2 == 0 else "conversation", calls, beliefs)
    arena = Arena(env, budget=BUDGET)
    try:
        asyncio.run(agent.adapt_async(arena))
        return Adapted(
            env,
            agent,
            arena.remaining,
            list(calls),
            list(beliefs),
            agent.interval,
            agent.best is not None and agent.best.score.all_passed,
            agent.synth.calls,
            copy.deepcopy(agent.steps),
            agent.belief().regime,
            dict(agent.counts()),
        )
    except BaseException:
        agent.close()
        raise


@pytest.fixture(scope="module")
def majority_adapted() -> Iterator[Adapted]:
    """The K>1 family's adaptation (tree mode), shared by its checks and the frozen agent's games."""
    problem = bubblewrap_problem()
    if problem is not None:
        pytest.skip(f"bubblewrap cannot run here ({problem}): install the Debian package bubblewrap, as root")
    adapted = _adapt("K>1")
    yield adapted
    adapted.agent.close()


@pytest.mark.long
@pytest.mark.parametrize("family", FAMILIES)
def test_cwm_adapts_and_its_reward_code_holds_the_true_k(sandbox_ready, request, family):
    adapted = request.getfixturevalue("majority_adapted") if family == "K>1" else _adapt(family)
    try:
        env, calls = adapted.env, adapted.calls
        assert adapted.remaining == 0
        assert adapted.interval is not None and adapted.interval.contains(env.condition.k), adapted.counts
        assert adapted.all_passed
        assert 1 <= len(calls) == adapted.synth_calls <= 5 and all(c["failure_kind"] is None for c in calls[-1:])
        assert adapted.steps and adapted.steps[-1]["train_h"] == 1.0 and adapted.steps[-1]["test_transition"] == 1.0
        assert adapted.steps[-1]["failing_tests"] == []  # what arena view shows beside each program version
        assert all(step["train_h"] < 1.0 for step in adapted.steps if step["failing_tests"])
        assert adapted.beliefs and adapted.beliefs[-1][1] is not None
        assert adapted.regime == ("majority" if env.condition.k > Fraction(1, 2) else "minority")
        assert adapted.counts["model_errors"] == 0
    finally:
        if family != "K>1":
            adapted.agent.close()


@pytest.mark.long
def test_frozen_cwm_mostly_beats_random_on_a_majority_board(majority_adapted):
    agent = majority_adapted.agent
    agent.freeze()
    wins, _ = games_against_random(agent, majority_adapted.env, 6, seed=0)
    assert wins >= 5


def test_mock_coder_guesses_a_majority_first_then_the_simplest_k_the_evidence_allows():
    synthesis = program_for("Finished games so far:\n- final discs black 30, white 2: returns [0, 0] (1 game)")
    assert "more discs wins" in synthesis and "K = " not in synthesis
    refine = (
        "Failing tests:\n- final discs black 30, white 2: expected returns [0,0], your program returned [1,-1]\n"
        "- final discs black 20, white 10: returns [1, -1] (2 games)"
    )
    assert 'K = Fraction("4/5")' in program_for(refine)  # K in (2/3, 15/16]: 0.8 is the simplest decimal
    assert simplest_k(KInterval(Fraction(1, 2))) == Fraction("1.01")
    assert simplest_k(KInterval(upper=Fraction(1, 5))) == Fraction("-0.01")
    assert simplest_k(feasible_k([(10, 30, 1), (8, 32, 0)])) == Fraction(1, 5)  # K in [1/5, 1/4)
    assert feasible_k([(30, 10, 1), (31, 9, 0), (29, 11, 0)]) is None  # no threshold explains them
