"""Model agents built from specs (``llm-policy:model=M``, ``llm-strategist:model=M``): frozen players whose calls are recorded."""

from __future__ import annotations

import numpy as np
import pytest

from agents.base import AgentContext
from agents.spec import AgentSpecError
from engine import make_env
from engine.state import PASS
from harness.play.game import play_game
from harness.records.entries import CallEntry
from harness.registry.specs import canonical_spec, make_agent

ENV = make_env(3)


def _built(spec: str, calls: list[dict], seed: int = 1):
    return make_agent(spec, AgentContext(ENV.rules, record_call=calls.append), np.random.default_rng(seed))


def _decision_plies(moves: tuple[int, ...], colour: int) -> list[int]:
    """The plies at which ``colour`` chose a move (forced passes are not choices), by re-playing the game."""
    state, plies = ENV.rules.initial_state(), []
    for ply, move in enumerate(moves):
        if state.to_move == colour and move != PASS:
            plies.append(ply)
        state = ENV.rules.play(state, move)
    return plies


@pytest.mark.parametrize("model", ["mock/first-legal", "mock/flaky-random-legal"])
@pytest.mark.parametrize("black", [True, False])
def test_llm_policy_from_a_spec_plays_every_move_and_records_each_call_at_its_ply(model, black):
    calls: list[dict] = []
    agent = _built(f"llm-policy:model={model},hint=none", calls)
    opponent = make_agent("greedy", AgentContext(ENV.rules), np.random.default_rng(2))
    players = (agent, opponent) if black else (opponent, agent)
    record = play_game(ENV.rules, ENV.condition, *players)
    colour = 0 if black else 1
    plies = _decision_plies(record.moves, colour)
    recorded = [call["ply"] for call in calls if call["attempt"] == 0]
    assert recorded == plies  # one first attempt per decision, at the ply the game loop played it
    assert len(calls) >= len(plies)
    for number, call in enumerate(calls):
        CallEntry.model_validate({"call_index": number, **call})  # what a transcript writer accepts
    if model == "mock/flaky-random-legal":
        assert any(call["verdict"] == "call_failed" or call["failure_kind"] for call in calls)
    assert agent.name == canonical_spec(f"llm-policy:model={model},hint=none")


def test_llm_strategist_from_a_spec_writes_one_strategy_before_its_first_move():
    calls: list[dict] = []
    agent = _built("llm-strategist:model=mock/reasoner,depth=1,endgame=4", calls)
    opponent = make_agent("random", AgentContext(ENV.rules), np.random.default_rng(2))
    play_game(ENV.rules, ENV.condition, agent, opponent)
    assert len(calls) == 1 and calls[0]["reply"] and calls[0]["failure_kind"] is None
    assert agent.strategy is not None and agent.strategy_failures == 0


def test_a_spec_without_a_model_or_without_its_key_is_a_clear_spec_error(monkeypatch):
    with pytest.raises(AgentSpecError, match="name its model in the spec .*arena run --agent llm-policy --model"):
        _built("llm-policy", [])
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(AgentSpecError, match="llm-strategist:model=openai/gpt-4o-mini: .*OPENAI_API_KEY"):
        _built("llm-strategist:model=openai/gpt-4o-mini", [])
    with pytest.raises(AgentSpecError, match="unknown mock model"):
        _built("llm-policy:model=mock/no-such-model", [])
    with pytest.raises(AgentSpecError, match="hint='loud': choose one of none, ratio, family"):
        _built("llm-policy:model=mock/first-legal,hint=loud", [])
