"""The run estimate (harness.runs.estimate) against the calls and prompt tokens a mock run really made."""

from __future__ import annotations

import json

import pytest

from harness.runs.estimate import estimate_run
from harness.runs.llm_config import LlmRunConfig
from harness.runs.llm_run import run_llm


def measured(run_dir):
    calls = [json.loads(line) for line in (run_dir / "calls.jsonl").read_text().splitlines() if line.strip()]
    return len(calls), sum(call.get("tokens_in") or 0 for call in calls)


@pytest.mark.parametrize(("agent", "model", "extra"), [
    ("llm-policy", "mock/first-legal", {}),
    ("llm-strategist", "mock/strategist", {"batch": 5}),
])
def test_the_estimate_is_within_20_percent_of_a_mock_runs_calls_and_prompt_tokens(tmp_path, agent, model, extra):
    config = LlmRunConfig(agent=agent, model=model, env=0, budget=20, eval_games=4, referee=False, **extra)
    calls, tokens_in = measured(run_llm(config, out=tmp_path, run_id="mock"))
    estimate = estimate_run(config)
    assert calls > 0 and tokens_in > 0
    assert abs(estimate.calls - calls) <= 0.2 * calls, (estimate.calls, calls)
    assert abs(estimate.prompt_tokens - tokens_in) <= 0.2 * tokens_in, (estimate.prompt_tokens, tokens_in)
    assert estimate.cost_usd == 0.0  # mocks are free


def test_a_priced_model_gets_dollars_from_litellms_local_table_and_an_unpriced_one_none():
    priced = estimate_run(LlmRunConfig(agent="llm-strategist", model="openai/gpt-4o-mini", env=0, budget=200, eval_games=4))
    assert priced.cost_usd is not None and priced.cost_usd > 0
    assert priced.calls == len(range(0, 200, 50)) + 2  # a strategy per batch, plus the checkpoints 10 and 200
    assert "$" in priced.line() and f"{priced.calls:,} model calls" in priced.line()
    unpriced = estimate_run(LlmRunConfig(agent="llm-strategist", model="openai/no-such-model-xyz", env=0, budget=200,
                                         eval_games=4))
    assert unpriced.cost_usd is None and "unpriced" in unpriced.line()


def test_policy_calls_scale_with_the_budget_and_wall_time_with_the_latency():
    small = estimate_run(LlmRunConfig(model="mock/first-legal", env=4, budget=10, eval_games=2), latency_s=1.0)
    large = estimate_run(LlmRunConfig(model="mock/first-legal", env=4, budget=100, eval_games=2), latency_s=2.0)
    assert large.kinds[0].calls == pytest.approx(10 * small.kinds[0].calls, rel=0.01)
    assert large.wall_s > 2 * small.wall_s
