"""The model client's response cache, fail fast and caps, pinned (mutants of `make mutation MODULES=client`).

What a cache hit returns and counts, a cached failure replayed whole, what is cached after a failure; a fatal
failure or the limit of failures in a row stopping the client (the message naming the cause, the attempts and the
last error), a call under way when another finds the endpoint down; the caps at their exact values, checked
before a call's first attempt only. The model is a scripted in-process fake (tests/harness/models/client_fakes.py).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from harness.models.cache import CachedFailure, ResponseCache
from harness.models.client import ModelClient
from harness.models.errors import BudgetCapReached, EndpointDown, ModelCallError, ProviderError
from harness.models.messages import ModelResponse
from harness.models.options import ModelOptions
from harness.models.replies import MockReply
from tests.harness.models.client_fakes import MODEL, QUESTION, FakeModel, ReplayingFakeModel, ask, failing, fake_client, server_error

# --- the response cache ------------------------------------------------------------------------------------


def test_a_cache_hit_is_free_and_says_so(slept: list[float]) -> None:
    model = ReplayingFakeModel()
    cache = ResponseCache()
    client = fake_client(model, cache=cache)
    request = client.request(QUESTION)
    cache.put(
        request.key(),
        ModelResponse(
            model=MODEL,
            text="f5",
            retries=2,
            waits_s=[0.5, 1.0],
            errors=["x", "y"],
            cost_usd=0.02,
            cost_note=None,
            cache_key="stale",
            latency_s=9.0,
        ),
    )
    client.consecutive_failures = 3
    hit = asyncio.run(client.complete(request))
    assert (hit.text, hit.cache_hit, hit.cache_key, hit.retries, hit.waits_s, hit.errors) == ("f5", True, request.key(), 0, [], [])
    assert (hit.cost_usd, hit.cost_note) == (0.0, "cache hit") and hit.latency_s != 9.0
    assert client.consecutive_failures == 0 and client.usage.cache_hits == 1
    assert model.replayed_calls == [(QUESTION, 3)] and model.asked == []  # counted as the 3 asks it took, none made
    assert ask(client).cache_hit and client.usage.cache_hits == 2  # a reply answers every later occurrence too
    assert model.asked == []


def test_a_cached_failure_is_replayed_as_it_happened() -> None:
    model = ReplayingFakeModel()
    cache = ResponseCache()
    client = fake_client(model, cache=cache)
    key = client.request(QUESTION).key()
    for _ in range(2):
        cache.put(
            key,
            CachedFailure(
                message="m: call failed after 2 attempt(s): rate_limit HTTP 429: slow",
                kind="rate_limit",
                status_code=429,
                errors=["rate_limit HTTP 429: slow"] * 2,
                retries=1,
            ),
        )
    for replays in (1, 2):
        failure = failing(client)
        assert str(failure) == "m: call failed after 2 attempt(s): rate_limit HTTP 429: slow (replayed from the response cache)"
        assert (failure.kind, failure.status_code, failure.errors, failure.retries) == (
            "rate_limit",
            429,
            ["rate_limit HTTP 429: slow"] * 2,
            1,
        )
        assert client.usage.cache_hits == replays and client.consecutive_failures == replays
    assert model.replayed_calls == [(QUESTION, 2), (QUESTION, 2)] and model.asked == []


def test_a_failure_is_cached_whole_and_a_reply_is_cached(slept: list[float]) -> None:
    cache = ResponseCache()
    model = FakeModel(server_error("a"), ProviderError("bad", kind="bad_request", status_code=400), MockReply("g7"))
    client = fake_client(model, cache=cache)
    key = client.request(QUESTION).key()
    failure = failing(client)
    stored = cache.lookup(key, 0)
    assert isinstance(stored, CachedFailure)
    assert (stored.message, stored.kind, stored.status_code, stored.retries) == (str(failure), "bad_request", 400, 1)
    assert stored.errors == ["server_error HTTP 503: a", "bad_request HTTP 400: bad"]
    assert client.consecutive_failures == 1
    assert ask(client).text == "g7" and client.consecutive_failures == 0
    reply = cache.lookup(key, 1)
    assert isinstance(reply, ModelResponse) and reply.text == "g7"


# --- fail fast ----------------------------------------------------------------------------------------------


def test_a_fatal_failure_stops_the_client_quoting_the_reply() -> None:
    cache = ResponseCache()
    model = FakeModel(ProviderError("key rejected: try another: now", kind="auth", status_code=401))
    client = fake_client(model, cache=cache)
    down = failing(client, EndpointDown)
    assert down.cause == (
        "authentication failed: check the API key in the provider's environment variable and its "
        "permissions (HTTP 401); it said: key rejected: try another: now"
    )
    assert (down.kind, down.status_code, down.endpoint) == ("auth", 401, f"{MODEL} (offline)")
    assert client.down is not None and client.consecutive_failures == 1 and len(cache) == 0  # not cached
    again = failing(client, EndpointDown, [{"role": "user", "content": "another"}])
    assert (again.cause, again.kind, again.status_code) == (down.cause, "auth", 401) and len(model.asked) == 1


def test_the_limit_of_failed_calls_in_a_row_stops_the_client(slept: list[float]) -> None:
    model = FakeModel(default=MockReply("unused"))
    model.outcomes = [
        server_error("s1"),
        ProviderError("b1", kind="bad_request", status_code=400),
        ProviderError("b2", kind="bad_request", status_code=400),
        server_error("s2"),
        server_error("s3"),
        server_error("s4"),
    ]
    client = fake_client(model, max_retries=2, options=ModelOptions(max_consecutive_failures=2))
    assert failing(client, ModelCallError, [{"role": "user", "content": "1"}]).kind == "bad_request"
    assert client.down is None and client.consecutive_failures == 1
    down = failing(client, EndpointDown, [{"role": "user", "content": "2"}])
    assert down.cause == ("2 calls in a row failed for good (limit 2); the last, after 1 attempt(s): bad_request HTTP 400: b2")
    assert (down.kind, down.status_code) == ("bad_request", 400) and client.consecutive_failures == 2
    assert client.usage.failed_calls == 2


def test_the_limit_message_counts_the_attempts_of_the_last_call(slept: list[float]) -> None:
    model = FakeModel(server_error("s1"), server_error("s2"), server_error("s3"))
    client = fake_client(model, max_retries=2, options=ModelOptions(max_consecutive_failures=1))
    down = failing(client, EndpointDown)
    assert down.cause == "1 calls in a row failed for good (limit 1); the last, after 3 attempt(s): server_error HTTP 503: s3"


def test_a_call_under_way_when_another_finds_the_endpoint_down_stops_too() -> None:
    async def scenario() -> tuple[BaseException | ModelResponse, ...]:
        slow_started, dead_found = asyncio.Event(), asyncio.Event()

        class Gated(FakeModel):
            async def acomplete(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> MockReply:
                if messages[0]["content"] == "slow":
                    slow_started.set()
                    await dead_found.wait()
                    raise ProviderError("bad", kind="bad_request", status_code=400)
                await slow_started.wait()
                try:
                    raise ProviderError("who are you", kind="auth", status_code=401)
                finally:
                    asyncio.get_running_loop().call_soon(dead_found.set)

        cache = ResponseCache()
        client = fake_client(Gated(), cache=cache)
        calls = [client.complete(client.request([{"role": "user", "content": text}])) for text in ("slow", "fatal")]
        results = await asyncio.wait_for(asyncio.gather(*calls, return_exceptions=True), 30)
        assert len(cache) == 0 and client.consecutive_failures == 1
        return tuple(results)

    slow, fatal = asyncio.run(scenario())
    assert isinstance(fatal, EndpointDown) and isinstance(slow, EndpointDown)
    assert slow.cause == fatal.cause and slow.kind == "auth"


# --- caps, and what is checked before the first attempt only ---------------------------------------------------


def test_a_cap_reached_exactly_refuses_the_next_call() -> None:
    model = FakeModel(MockReply("d3", prompt_tokens=9, completion_tokens=3))
    client = fake_client(model, max_tokens_total=12)
    ask(client, [{"role": "user", "content": "1"}])
    with pytest.raises(BudgetCapReached, match=r"^token cap reached: 12 used of 12$"):
        ask(client, [{"role": "user", "content": "2"}])
    priced = fake_client(FakeModel(), max_cost_usd=0.03)
    priced.usage.cost_usd = 0.03
    with pytest.raises(BudgetCapReached, match=r"^cost cap reached: \$0\.0300 spent of \$0\.0300$"):
        ask(priced)
    assert len(model.asked) == 1


def test_caps_and_a_dead_endpoint_are_checked_before_the_first_attempt_only(slept: list[float]) -> None:
    client: ModelClient

    def over_the_cap_meanwhile() -> ProviderError:
        client.usage.prompt_tokens = 1_000  # another call used the budget while this one waited to retry
        client.down = EndpointDown("e", "found down meanwhile", kind="dns")
        return server_error()

    class Meanwhile(FakeModel):
        async def acomplete(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> MockReply:
            if not self.asked:
                self.asked.append((messages, params))
                raise over_the_cap_meanwhile()
            return await super().acomplete(messages, params)

    client = fake_client(Meanwhile(), max_tokens_total=100)
    assert ask(client).text == "d3"  # its retry goes ahead: it was admitted before the cap was reached
    with pytest.raises(EndpointDown):
        ask(client, [{"role": "user", "content": "next"}])
