"""``cwm:model=M``: the code-world-model agent built from a spec writes its program before its first move."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from agents.base import AgentContext
from agents.spec import AgentSpecError
from engine import make_env
from harness.play.game import play_game
from harness.records.entries import CallEntry
from harness.registry.specs import make_agent

ENV = make_env(5)  # K > 1 on the 6x8 board: the prior of mock/coder (a plain majority) is right here


@pytest.mark.parametrize("planner", ["mcts", "minimax"])
def test_a_cwm_spec_writes_its_program_from_the_rules_then_plans_on_it(sandbox_ready, planner):
    calls: list[dict] = []
    agent = make_agent(
        f"cwm:model=mock/coder,simulations=16,depth=2,planner={planner}",
        AgentContext(ENV.rules, record_call=calls.append),
        np.random.default_rng(1),
    )
    try:
        wins = 0
        for game in range(4):
            opponent = make_agent("random", AgentContext(ENV.rules), np.random.default_rng(game))
            players = (agent, opponent) if game % 2 == 0 else (opponent, agent)
            wins += play_game(ENV.rules, ENV.condition, *players).rewards[game % 2] == 1
        assert len(calls) == 1 and calls[0]["failure_kind"] is None and "def returns" in calls[0]["reply"]
        CallEntry.model_validate({"call_index": 0, **calls[0]})  # what a transcript writer accepts
        assert agent.best is not None and agent.best.score.all_passed  # every random-play transition test
        assert agent.counts()["model_errors"] == 0 and agent.counts()["plan_failures"] == 0
        assert wins >= 2  # at least Random's share (the strength figures are arena bench cwm's, on adapted agents)
    finally:
        agent.close()


def test_a_cwm_spec_needs_a_model():
    with pytest.raises(AgentSpecError, match="model"):
        make_agent("cwm", AgentContext(ENV.rules), np.random.default_rng(0))


def test_a_frozen_deep_copy_plays_on_the_shared_program(sandbox_ready):
    """The referee evaluates a deep copy of an adapted agent (bench paper's checkpoints): a cwm agent must survive it."""
    agent = make_agent("cwm:model=mock/coder,simulations=8", AgentContext(ENV.rules), np.random.default_rng(3))
    try:
        opponent = make_agent("random", AgentContext(ENV.rules), np.random.default_rng(0))
        play_game(ENV.rules, ENV.condition, agent, opponent)  # writes the program
        duplicate = copy.deepcopy(agent)
        duplicate.freeze()
        record = play_game(ENV.rules, ENV.condition, opponent, duplicate)
        assert record.black + record.white > 0 and duplicate.worker is agent.worker and agent.synth.calls == 1
        assert duplicate.counts()["plan_failures"] == 0 and agent.worker is not None and agent.worker.pid is not None
    finally:
        agent.close()


def test_an_adapted_cwm_spec_plays_with_the_program_its_adaptation_chose(sandbox_ready):
    """Given a budget (bench paper), the agent adapts; its frozen copy must not write a prompt-only program (a majority
    rule: mock/coder's prior) at its first move and play against the condition it found (here K < 0, a minority)."""
    import asyncio

    from harness.play.arena import Arena

    env = make_env(12)  # K = -0.01 on the 6x8 board
    calls: list[dict] = []
    agent = make_agent("cwm:model=mock/coder,simulations=64", AgentContext(env.rules, record_call=calls.append), np.random.default_rng(2))
    agent.budget = 24
    try:
        asyncio.run(agent.adapt_async(Arena(env, budget=24)))
        adapted = agent.best.source
        assert agent.interval is not None and agent.interval.contains(env.condition.k)
        frozen = copy.deepcopy(agent)
        frozen.freeze()
        wins = 0
        for game in range(4):
            opponent = make_agent("random", AgentContext(env.rules), np.random.default_rng(game))
            players = (frozen, opponent) if game % 2 == 0 else (opponent, frozen)
            wins += play_game(env.rules, env.condition, *players).rewards[game % 2] == 1
        assert frozen.best.source == adapted and len(calls) == agent.synth.calls  # no program written after adapting
        assert wins >= 3
    finally:
        agent.close()
