"""The sweep-wide dollar cap: the shared limiter refuses calls once a provider's spending reaches it (mock price)."""

from __future__ import annotations

import asyncio

import pytest

from harness.models.client import ModelClient
from harness.models.errors import SHARED_CAP_REFUSAL, BudgetCapReached
from harness.sweep.limiter import Limiter, LimitingProxy
from harness.sweep.spec import ProviderLimits
from harness.testing.stub_server import StubServer

KEY = "test-key-not-a-secret"


def test_calls_past_the_cap_are_refused_as_a_budget_stop(stub_server: StubServer) -> None:
    stub_server.responder = None
    limiter = Limiter(ProviderLimits(max_cost_usd=1.25), price=lambda model, prompt, completion: 0.25)  # exact in binary
    proxy = LimitingProxy(stub_server.url, limiter)
    client = ModelClient(stub_server.model, api_base=proxy.api_base(stub_server.url), api_key=KEY, timeout_s=30, max_retries=2)
    outcomes: list[str] = []

    async def calls() -> None:
        for index in range(7):
            try:
                reply = await client.complete(client.request([{"role": "user", "content": f"move {index}"}]))
                outcomes.append(reply.text)
            except BudgetCapReached as cap:
                outcomes.append(str(cap))

    try:
        asyncio.run(calls())
    finally:
        proxy.stop()
    assert len(stub_server.requests) == 5  # the refused calls never reached the provider
    assert outcomes[:5] == ["d3"] * 5 and all(o.startswith(SHARED_CAP_REFUSAL) and "$1.25" in o for o in outcomes[5:])
    assert limiter.spent_usd == 1.25 and limiter.refused == 2
    assert client.usage.failed_calls == 0 and client.usage.calls == 5  # a cap, not a failure; nothing retried


def test_unpriced_models_cost_nothing_and_replies_are_priced_from_their_usage() -> None:
    limiter = Limiter(ProviderLimits(max_cost_usd=1.0), price=lambda model, prompt, completion: prompt * 1e-3 + completion * 2e-3)
    reply = b'{"model": "m", "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}}'
    assert limiter.reply_cost(reply) == (110, pytest.approx(0.12))
    assert Limiter(ProviderLimits()).reply_cost(b'{"model": "no-such-model-anywhere", "usage": {"prompt_tokens": 5}}') == (5, 0.0)
    assert limiter.reply_cost(b"not json") == (0, 0.0)


def test_a_model_cell_stopped_by_the_shared_cap_keeps_its_records_and_says_capped(stub_server: StubServer, tmp_path) -> None:
    from harness.records.transcript import TranscriptReader
    from harness.sweep.cells import run_cell
    from harness.sweep.spec import parse_sweep
    from harness.testing.stub_server import LegalMoves

    stub_server.responder = LegalMoves(0)
    sweep = parse_sweep(
        {
            "envs": [47],
            "seeds": [0],
            "budget": 6,
            "games": 1,
            "referee": False,  # 10-turn games
            "limits": {"openai": {"max_cost_usd": 10.0}},
            "models": [{"model": stub_server.model, "options": {"concurrency": 1, "model_options": {"api_base": stub_server.url}}}],
        }
    )
    limiter = Limiter(sweep.file.limits["openai"], price=lambda model, prompt, completion: 0.25)
    proxy = LimitingProxy(stub_server.url, limiter)
    try:
        outcome = run_cell(sweep.cells[0], tmp_path, {"openai": proxy.api_base(stub_server.url)})
    finally:
        proxy.stop()
    assert outcome.status == "capped" and "cap" in (outcome.error or ""), outcome
    assert len(stub_server.requests) == 40 and limiter.refused >= 1
    run_dir = next((tmp_path / "cells").iterdir())
    games = TranscriptReader(run_dir).games()
    calls = (run_dir / "calls.jsonl").read_text().splitlines()
    # the games finished before the cap stay recorded (with their calls); the one in progress is not
    assert 1 <= len(games) < 6 and len(calls) <= 40, (len(games), len(calls))
