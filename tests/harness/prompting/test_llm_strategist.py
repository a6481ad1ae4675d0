"""llm-strategist: strategy parsing, batches of Minimax self-play, fallbacks, and an arena run with mock models."""

import json
import re

import numpy as np
import pytest
from run_checks import assert_replays_and_reruns

from agents.base import AgentContext
from agents.search.features import DEFAULT_WEIGHTS, FEATURES
from engine import make_env
from engine.protocol.belief import Belief
from engine.protocol.observation import observe
from harness.models.client import ModelClient
from harness.models.mock import MOCK_MODELS, STRATEGY_REPLY, MockModel, make_mock
from harness.play.arena import Arena
from harness.prompting.strategist_agent import (
    DEFAULT_STRATEGY,
    LlmStrategistAgent,
    LlmStrategistConfig,
    Strategy,
    StrategyParseError,
    parse_strategy,
    ratio_utility,
)
from harness.records.transcript import TranscriptReader
from harness.runs.llm_run import LlmRunConfig, run_llm

GOOD = (
    '{"belief": {"regime": "minority", "k_low": 0.3, "k_high": 0.45, "confidence": 0.5}, '
    '"target_ratio": 0.4, "weights": {"corners": 20, "discs": -1}}'
)


def replay_legally(game, rules):
    state = rules.initial_state()
    for move in game.moves:
        assert move in rules.legal_moves(state)
        state = rules.play(state, move)
    assert rules.is_over(state)
    assert rules.counts(state) == (game.black_discs, game.white_discs)


# ------------------------------------------------------------------ parsing


def test_valid_strategy_parses():
    strategy = parse_strategy(GOOD)
    assert strategy.belief == Belief(regime="minority", k_low=0.3, k_high=0.45, confidence=0.5)
    assert strategy.target_ratio == 0.4
    assert strategy.full_weights() == DEFAULT_WEIGHTS | {"corners": 20.0, "discs": -1.0}


def test_fenced_and_wrapped_strategies_parse():
    assert parse_strategy(f"Here is my plan:\n```json\n{GOOD}\n```\nGood luck.").target_ratio == 0.4
    assert parse_strategy('{"strategy": ' + GOOD + "}").target_ratio == 0.4
    assert parse_strategy("I think " + GOOD + " is best").target_ratio == 0.4


def test_missing_fields_are_defaulted():
    strategy = parse_strategy('{"target": 0.6}')
    assert strategy.target_ratio == 0.6 and strategy.belief is None
    assert strategy.full_weights() == DEFAULT_WEIGHTS


@pytest.mark.parametrize(
    "text, reason",
    [
        ("", "empty"),
        ("I would play for corners.", "no JSON object"),
        ('{"belief": {"regime": "majority", "k_low": 0.5, "k_high": 0.7, "confidence": 0.5}}', "target_ratio"),
        ('{"target_ratio": 1.5}', "target_ratio"),
        ('{"target_ratio": 0.5, "weights": {"parity": 3}}', "unknown feature(s) parity"),
        ('{"target_ratio": 0.5, "belief": {"regime": "majority", "k_low": 0.9, "k_high": 0.6, "confidence": 0.5}}', "must not exceed"),
        ('{"schema_version": 9, "target_ratio": 0.5}', "schema_version 9"),
    ],
)
def test_invalid_strategies_raise_with_the_reason(text, reason):
    with pytest.raises(StrategyParseError, match=re.escape(reason)):
        parse_strategy(text)


def test_strategy_prompt_lists_exactly_the_schema_fields():
    agent, *_ = agent_for(make_env(21), make_mock("mock/strategist"), 10)
    messages, template_hash = agent.messages(0)
    assert messages[0]["role"] == "system" and template_hash
    prompt = messages[1]["content"]
    assert "No games finished yet." in prompt and "next 10 games" in prompt
    example = next(line for line in prompt.splitlines() if line.startswith('{"schema_version"'))
    named = set(re.findall(r'"(\w+)":', example))
    belief_fields = set(Belief.model_fields) - {"schema_version"}  # the strategy's version covers the belief
    assert named == set(Strategy.model_fields) | belief_fields | set(FEATURES)


def test_ratio_utility_is_zero_at_the_target_share():
    table = ratio_utility(64, 0.55)
    assert table.shape == (65, 65)
    assert table[33, 27] == pytest.approx(0.0) and table[33, 27] > table[40, 24] > table[64, 0]
    assert table[0, 0] == -1.0


def test_mock_strategist_is_registered_and_valid():
    assert "strategist" in MOCK_MODELS
    reply = make_mock("mock/strategist").complete([{"role": "user", "content": "anything"}]).text
    assert reply == STRATEGY_REPLY
    strategy = parse_strategy(reply)
    assert strategy.belief.regime == "majority" and strategy.target_ratio == 0.55


# ------------------------------------------------------------------ the agent


def agent_for(env, model, budget, client_retries=5, **config):
    client = ModelClient("mock/scripted", mock=model, backoff_base_s=0.001, max_retries=client_retries)
    calls, beliefs, strategies = [], [], []
    agent = LlmStrategistAgent(
        AgentContext(env.rules),
        np.random.default_rng(0),
        client,
        budget=budget,
        seed=0,
        config=LlmStrategistConfig(**{"batch": 10, "search_depth": 1, "endgame": 4, "max_retries": 1, **config}),
        on_call=calls.append,
        on_belief=lambda *a: beliefs.append(a),
        on_strategy=lambda *a: strategies.append(a),
    )
    return agent, calls, beliefs, strategies


def test_garbage_reply_keeps_the_previous_strategy_and_is_counted():
    env = make_env(21)
    other = GOOD
    # batch 0: garbage twice (1 retry) -> default; batch 10: valid on the retry; batch 20: garbage -> keeps batch 10's
    model = MockModel(replies=["no idea", "still {not json", "~~", STRATEGY_REPLY, "hmm", "??", other], name="script")
    agent, calls, beliefs, strategies = agent_for(env, model, 40)
    arena = Arena(env, 40)
    agent.adapt(arena)
    assert arena.games_played == 40 and model.calls == 7 and len(calls) == 7
    assert agent.strategy_failures == 2
    assert [c["attempt"] for c in calls] == [0, 1, 0, 1, 0, 1, 0]
    assert [c["failure_kind"] for c in calls] == ["strategy_error"] * 3 + [None] + ["strategy_error"] * 2 + [None]
    assert "could not be used" in calls[1]["messages"][-1]["content"]  # the re-ask carries the reason
    assert [s[0] for s in strategies] == [0, 10, 20, 30]
    assert strategies[0][1] == DEFAULT_STRATEGY and not strategies[0][3] and strategies[0][2]
    assert strategies[1][1].target_ratio == 0.55 and strategies[1][3]
    assert strategies[2][1].target_ratio == 0.55 and not strategies[2][3]  # the previous one kept
    assert strategies[3][1].target_ratio == 0.4
    assert [(b[0], b[1] is None) for b in beliefs] == [(0, True), (10, False), (20, True), (30, False)]
    for record in arena.ledger.records:
        state = env.rules.initial_state()
        for move in record.moves:
            assert move in env.rules.legal_moves(state)
            state = env.rules.play(state, move)
        assert env.rules.is_over(state) and env.rules.counts(state) == (record.black, record.white)


def test_failed_calls_fall_back_and_frozen_act_uses_the_last_strategy():
    env = make_env(21)
    model = MockModel(replies=[STRATEGY_REPLY], schedule=["server_error"] * 50, name="down")
    agent, calls, beliefs, _ = agent_for(env, model, 5, client_retries=0, batch=5)
    agent.adapt(Arena(env, 5))
    assert agent.strategy_failures == 1 and agent.strategy == DEFAULT_STRATEGY
    assert len(calls) == 2 and all(c["verdict"] == "call_failed" for c in calls) and beliefs[0][1] is None
    agent.freeze()
    state = env.rules.initial_state()
    assert agent.act(observe(env.rules, state)) in env.rules.legal_moves(state)


# ------------------------------------------------------------------ the run


def test_200_game_run_makes_one_call_per_batch_and_checkpoint(tmp_path, monkeypatch):
    # batches of 50; the default checkpoints within the budget, 10 and 200, add a plan after 10 and after 200 games
    config = LlmRunConfig(
        agent="llm-strategist",
        model="mock/strategist",
        env=21,
        budget=200,
        eval_games=2,
        opponents=("random",),
        batch=50,
        search_depth=1,
        endgame=4,
    )
    run_dir = run_llm(config, out=tmp_path, run_id="r")
    reader = TranscriptReader(run_dir)
    calls, games = reader.calls(), reader.games()
    assert len(calls) == 6 and all(c.game_index is None and c.failure_kind is None for c in calls)
    assert [g.game_index for g in games if g.phase == "adapt"] == list(range(200))
    assert [g.agent_colour for g in games if g.phase == "eval"] == ["black", "white"]
    rules = make_env(21).rules
    for game in games:
        replay_legally(game, rules)
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["calls"] == 6 and metrics["strategies"] == 6 and metrics["strategy_failures"] == 0
    assert [b["checkpoint"] for b in metrics["beliefs"]] == [0, 10, 50, 100, 150, 200]
    assert all(b["score"]["contains_k"] for b in metrics["beliefs"])  # env 21: K = 3/5, the mock says [0.5, 0.8]
    assert metrics["evaluation"]["random"]["games"] == 2
    lines = [json.loads(line) for line in (run_dir / "strategies.jsonl").read_text().splitlines()]
    assert [line["batch_start"] for line in lines] == [0, 10, 50, 100, 150, 200]
    prompts = [c.messages[-1]["content"] for c in calls]
    assert "plays the next 10 games" in prompts[0] and "plays the next 40 games" in prompts[1]
    assert all(line["strategy"]["target_ratio"] == 0.55 for line in lines)
    assert (run_dir / "report.md").read_text().startswith("# llm-strategist")
    assert_replays_and_reruns(run_dir, tmp_path, monkeypatch, 202)


def test_cli_accepts_the_strategist(tmp_path):
    from typer.testing import CliRunner

    from harness.cli.main import app

    result = CliRunner().invoke(
        app,
        [
            "run",
            "--agent",
            "llm-strategist",
            "--model",
            "mock/strategist",
            "--env",
            "21",
            "--budget",
            "4",
            "--batch",
            "2",
            "--search-depth",
            "1",
            "--eval-games",
            "1",
            "--out",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 0, result.output
    run_dir = next(tmp_path.iterdir())
    assert len(TranscriptReader(run_dir).calls()) == 2
