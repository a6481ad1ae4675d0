"""Adaptive concurrency (AIMD under --concurrency, Retry-After per request) and cached prompt tokens at the cached rate.

The stub server answers over real HTTP through litellm; it records each request's arrival time
(monotonic) and, for an injected fault, its kind, so a request's retry can be matched to the
429 it answered and the wait between them read from the server's own clock.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from harness.models.client import ModelClient, import_litellm
from harness.models.concurrency import AdaptiveLimit
from harness.models.openai_direct import response_from_litellm
from harness.models.options import ModelOptions
from harness.testing.faults import FaultSpec
from harness.testing.stub_server import STUB_MODEL, StubServer, ok, rate_limit

RETRY_AFTER_S = 0.2


def _drive(limit: AdaptiveLimit, outcomes: list[str]) -> None:
    async def main() -> None:
        for outcome in outcomes:
            async with limit.slot() as slot:
                slot.throttled, slot.succeeded = outcome == "429", outcome == "ok"

    asyncio.run(main())


def test_the_limit_halves_once_per_window_and_grows_back_to_the_ceiling() -> None:
    limit = AdaptiveLimit(32)
    _drive(limit, ["429"])
    assert limit.limit == 16 and limit.decreases == 1
    stale = limit.decreases  # an attempt granted before the last decrease does not lower it again

    async def late_throttle() -> None:
        async with limit.slot() as slot:
            slot.epoch, slot.throttled = stale - 1, True

    asyncio.run(late_throttle())
    assert limit.limit == 16
    _drive(limit, ["429"] * 10)
    assert limit.limit == 1 and limit.lowest == 1  # never below the floor
    _drive(limit, ["ok"] * 2000)
    assert limit.limit == 32 and limit.allowed == 32  # never above the ceiling
    with pytest.raises(ValueError, match="floor"):
        AdaptiveLimit(0)


def _client(server: StubServer, concurrency: int) -> ModelClient:
    return ModelClient(
        STUB_MODEL,
        options=ModelOptions(api_base=server.url, timeout=20.0),
        concurrency=concurrency,
        max_retries=12,
        backoff_base_s=0.01,
        max_retry_after_s=120.0,
    )


def _ask(client: ModelClient, number: int) -> Any:
    return client.complete(client.request([{"role": "user", "content": f"request {number}"}]))


def test_429s_lower_the_limit_which_recovers_and_no_retry_comes_before_its_retry_after(stub_server: StubServer) -> None:
    stub_server.faults = FaultSpec.parse("rate_limit=0.3", seed=4)
    stub_server.retry_after = RETRY_AFTER_S
    client = _client(stub_server, concurrency=16)

    async def main() -> list[Any]:
        return await asyncio.gather(*(_ask(client, n) for n in range(160)))

    replies = asyncio.run(main())
    assert len(replies) == 160 and all(reply.text for reply in replies)  # every call answered in the end
    assert stub_server.faults_met.get("rate_limit", 0) > 25
    assert client.limit.lowest < 16 / 2  # dropped
    assert client.limit.limit > client.limit.lowest  # and recovered
    limits = [16.0 if reply.concurrency is None else reply.concurrency for reply in replies]  # None: at the ceiling
    assert min(limits) < 16 and max(limits) > min(limits)
    by_request: dict[str, list[dict[str, Any]]] = {}
    for record in stub_server.requests:
        by_request.setdefault(json.dumps(record["json"]["messages"]), []).append(record)
    retried = 0
    for attempts in by_request.values():
        for first, second in zip(attempts, attempts[1:]):
            assert first.get("fault") == "rate_limit"  # only a throttled request is sent again
            assert second["time"] - first["time"] >= RETRY_AFTER_S, "a retry came before its Retry-After"
            retried += 1
    assert retried == stub_server.faults_met["rate_limit"]


def test_a_long_retry_after_on_one_request_does_not_hold_up_the_others(stub_server: StubServer) -> None:
    stub_server.enqueue(rate_limit(retry_after=90.0))  # the first request is told to come back in 90 s
    client = _client(stub_server, concurrency=4)

    async def main() -> tuple[bool, int]:
        throttled = asyncio.ensure_future(_ask(client, 0))
        while not stub_server.requests:  # the throttled request has reached the server
            await asyncio.sleep(0.001)
        others = await asyncio.gather(*(_ask(client, n) for n in range(1, 21)))
        waiting = not throttled.done()
        throttled.cancel()
        await asyncio.gather(throttled, return_exceptions=True)
        return waiting, len(others)

    waiting, answered = asyncio.run(main())
    assert waiting and answered == 20  # twenty calls answered while the throttled one still waits out its 90 s


def test_cached_prompt_tokens_are_priced_at_the_cached_rate() -> None:
    litellm = import_litellm()
    prices = litellm.model_cost["gpt-4o-mini"]
    assert prices["cache_read_input_token_cost"] < prices["input_cost_per_token"]
    raw = litellm.ModelResponse(
        model="gpt-4o-mini",
        choices=[{"message": {"role": "assistant", "content": "MOVE: d3"}, "finish_reason": "stop", "index": 0}],
        usage={"prompt_tokens": 1000, "completion_tokens": 100, "total_tokens": 1100, "prompt_tokens_details": {"cached_tokens": 800}},
    )
    response = response_from_litellm(litellm, "openai/gpt-4o-mini", raw)
    expected = 200 * prices["input_cost_per_token"] + 800 * prices["cache_read_input_token_cost"] + 100 * prices["output_cost_per_token"]
    assert response.cached_tokens == 800
    assert response.cost_usd == pytest.approx(expected, rel=1e-9)
    uncached = 1000 * prices["input_cost_per_token"] + 100 * prices["output_cost_per_token"]
    assert response.cost_usd < uncached


def test_the_stub_reports_cached_tokens_and_the_client_records_them(stub_server: StubServer) -> None:
    stub_server.cached_tokens = 8
    stub_server.enqueue(ok("MOVE: d3"))
    try:
        client = _client(stub_server, concurrency=1)
        response = asyncio.run(_ask(client, 0))
    finally:
        stub_server.cached_tokens = 0
    assert (response.prompt_tokens, response.cached_tokens) == (12, 8)


def test_anthropic_models_get_a_cache_hint_on_the_system_message() -> None:
    from harness.models.prompt_cache import with_cache_hints

    messages = [{"role": "system", "content": "rules"}, {"role": "user", "content": "move"}]
    marked = with_cache_hints("anthropic/claude-3-5-haiku-20241022", messages)
    assert marked[0]["content"][0]["cache_control"] == {"type": "ephemeral"} and marked[1] == messages[1]
    assert with_cache_hints("openai/gpt-4o-mini", messages) is messages
