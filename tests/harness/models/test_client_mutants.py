"""The model client's attempts, waits and accounting, pinned (mutants of `make mutation MODULES=client`).

How long it waits between attempts (Retry-After, capped; else full jitter under a doubling ceiling, from the seeded
generator), which failures are retried and how often, what a reply and a failure record, the running totals, the
adaptive limit and the deadline. The model is a scripted in-process fake (tests/harness/models/client_fakes.py);
backoff waits are recorded, never slept.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

import harness.models.client as client_module
from harness.models.cache import ResponseCache
from harness.models.client import ModelClient
from harness.models.errors import BudgetCapReached, EndpointDown, ProviderError
from harness.models.messages import ModelResponse
from harness.models.replies import MockReply
from tests.harness.models.client_fakes import MODEL, QUESTION, FakeModel, ask, failing, fake_client, server_error

# --- waits between attempts ---------------------------------------------------------------------------------


def jitter(seed: int, ceilings: list[float]) -> list[float]:
    """Full jitter as documented: uniform in [0, ceiling] from a Random seeded with the client's seed."""
    rng = random.Random(seed)
    return [rng.uniform(0.0, ceiling) for ceiling in ceilings]


def test_backoff_doubles_from_its_base_up_to_its_cap_with_seeded_jitter(slept: list[float]) -> None:
    model = FakeModel(*[server_error() for _ in range(5)])
    response = ask(fake_client(model, backoff_base_s=0.5, backoff_max_s=3.0, seed=11))
    expected = jitter(11, [0.5, 1.0, 2.0, 3.0, 3.0])
    assert response.waits_s == pytest.approx(expected) and slept == pytest.approx(expected)
    assert response.retries == 5 and len(model.asked) == 6


def test_default_backoff_is_one_second_doubling_with_seed_zero(slept: list[float]) -> None:
    response = ask(fake_client(FakeModel(*[server_error() for _ in range(5)])))
    assert response.waits_s == pytest.approx(jitter(0, [1.0, 2.0, 4.0, 8.0, 16.0]))


def test_retry_after_is_waited_as_sent_up_to_its_cap_and_draws_no_jitter(slept: list[float]) -> None:
    def throttled(after: float) -> ProviderError:
        return ProviderError("slow down", kind="rate_limit", status_code=429, retry_after=after)

    model = FakeModel(throttled(2.5), throttled(500.0), server_error())
    response = ask(fake_client(model, max_retry_after_s=40.0, backoff_base_s=0.25, seed=3))
    assert response.waits_s == pytest.approx([2.5, 40.0, jitter(3, [1.0])[0]])  # third attempt: ceiling 0.25 * 2**2
    assert slept == pytest.approx(response.waits_s)
    default_cap = ask(fake_client(FakeModel(throttled(500.0))))
    assert default_cap.waits_s == [60.0]


# --- one call: attempts, what is retried, what is recorded ---------------------------------------------------


def test_a_reply_carries_its_key_attempts_and_accounting(slept: list[float]) -> None:
    model = FakeModel(
        server_error("first"),
        ProviderError("second", kind="timeout"),
        MockReply("e6", finish_reason="length", prompt_tokens=7, completion_tokens=4),
    )
    client = fake_client(model, backoff_base_s=0.1)
    request = client.request(QUESTION, temperature=0.5)
    response = asyncio.run(client.complete(request))
    assert (response.text, response.finish_reason, response.prompt_tokens, response.completion_tokens) == ("e6", "length", 7, 4)
    assert (response.cost_usd, response.cost_note, response.model, response.cache_hit) == (0.0, "mock model", MODEL, False)
    assert response.cache_key == request.key() and response.retries == 2 and len(response.waits_s) == 2
    assert response.errors == ["server_error HTTP 503: first", "timeout: second"]
    assert response.latency_s >= 0.0
    assert model.asked == [(QUESTION, {"temperature": 0.5})] * 3
    usage = client.usage
    assert (usage.calls, usage.retries, usage.failed_calls, usage.prompt_tokens, usage.completion_tokens) == (1, 2, 0, 7, 4)
    assert usage.errors_by_kind == {"server_error": 1, "timeout": 1}


def test_usage_adds_up_over_calls() -> None:
    client = fake_client(
        FakeModel(MockReply("d3", prompt_tokens=10, completion_tokens=2), MockReply("c4", prompt_tokens=5, completion_tokens=1))
    )
    ask(client, [{"role": "user", "content": "one"}])
    ask(client, [{"role": "user", "content": "two"}])
    assert (client.usage.calls, client.usage.prompt_tokens, client.usage.completion_tokens) == (2, 15, 3)
    assert client.usage.total_tokens == 18 and client.usage.cost_usd == 0.0


def test_cost_adds_up_over_calls() -> None:
    class Priced(FakeModel):
        pass

    client = fake_client(Priced())
    real_attempt = client._attempt

    async def priced(request: Any) -> ModelResponse:
        return (await real_attempt(request)).model_copy(update={"cost_usd": 0.25})

    client._attempt = priced  # type: ignore[method-assign]
    ask(client, [{"role": "user", "content": "one"}])
    ask(client, [{"role": "user", "content": "two"}])
    assert client.usage.cost_usd == pytest.approx(0.5)


def test_retries_stop_after_max_retries_and_the_failure_says_so(slept: list[float]) -> None:
    model = FakeModel(server_error("a"), server_error("b"), server_error("c"), MockReply("never"))
    client = fake_client(model, max_retries=2, backoff_base_s=0.1)
    failure = failing(client)
    assert len(model.asked) == 3
    assert str(failure) == f"{MODEL}: call failed after 3 attempt(s): server_error HTTP 503: c"
    assert (failure.kind, failure.status_code, failure.retries) == ("server_error", 503, 2)
    assert failure.errors == ["server_error HTTP 503: a", "server_error HTTP 503: b", "server_error HTTP 503: c"]
    assert isinstance(failure.__cause__, ProviderError) and str(failure.__cause__) == "c"
    assert (client.usage.failed_calls, client.usage.retries, client.usage.calls) == (1, 2, 0)


def test_no_retries_means_one_attempt(slept: list[float]) -> None:
    model = FakeModel(server_error())
    failure = failing(fake_client(model, max_retries=0))
    assert len(model.asked) == 1 and failure.retries == 0 and slept == []


def test_a_client_error_is_not_retried(slept: list[float]) -> None:
    model = FakeModel(ProviderError("bad field", kind="bad_request", status_code=400))
    client = fake_client(model)
    failure = failing(client)
    assert len(model.asked) == 1 and failure.retries == 0 and client.usage.retries == 0
    assert str(failure) == f"{MODEL}: call failed after 1 attempt(s): bad_request HTTP 400: bad field"


@pytest.mark.parametrize("error", [EndpointDown("e", "gone", kind="dns"), BudgetCapReached("cap")])
def test_a_cap_or_a_dead_endpoint_from_inside_an_attempt_is_neither_retried_nor_wrapped(error: Exception) -> None:
    model = FakeModel(error)
    client = fake_client(model)
    assert failing(client, type(error)) is error
    assert len(model.asked) == 1 and client.usage.failed_calls == 0 and client.consecutive_failures == 0


def test_a_script_that_ran_out_fails_loudly_as_itself() -> None:
    from harness.models.replies import MockExhausted

    client = fake_client(FakeModel(MockExhausted("no more replies")))
    failing(client, MockExhausted)
    assert client.usage.failed_calls == 0


def test_a_shared_cap_refusal_is_a_cap_not_a_failure() -> None:
    from harness.models.errors import SHARED_CAP_REFUSAL

    client = fake_client(FakeModel(ProviderError(f"limiter: {SHARED_CAP_REFUSAL} ($2.00 of $2.00)", kind="bad_request")))
    refusal = failing(client, BudgetCapReached)
    assert str(refusal) == f"{SHARED_CAP_REFUSAL} ($2.00 of $2.00)"
    assert refusal.__cause__ is None and refusal.__suppress_context__
    assert client.usage.failed_calls == 0 and client.consecutive_failures == 0


def test_a_request_for_another_model_is_refused_naming_both() -> None:
    client = fake_client(FakeModel())
    other = client.request(QUESTION).model_copy(update={"model": "openai/other"})
    with pytest.raises(ValueError, match=r"^request for 'openai/other' sent to a client of 'openai/fake-model'$"):
        asyncio.run(client.complete(other))


class Clock:
    """A perf_counter that moves on by ``step`` each time it is read."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 100.0, step

    def perf_counter(self) -> float:
        self.now += self.step
        return self.now


def test_latency_is_the_time_from_the_call_to_its_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client_module, "time", Clock(0.75))
    client = fake_client(FakeModel(), cache=ResponseCache())
    assert ask(client).latency_s == pytest.approx(0.75)  # read when the call starts and when it ends
    assert ask(client).latency_s == pytest.approx(0.75)  # the cache hit: its own time, not the stored one


# --- concurrency, the adaptive limit and the deadline ----------------------------------------------------------


def test_in_flight_counts_attempts_on_the_wire() -> None:
    seen: list[int] = []
    client: ModelClient

    class Watching(FakeModel):
        async def acomplete(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> MockReply:
            seen.append(client.in_flight)
            return await super().acomplete(messages, params)

    client = fake_client(Watching(server_error()), backoff_base_s=0.0)
    ask(client)
    assert seen == [1, 1] and client.in_flight == 0 and client.max_in_flight == 1


def test_a_throttled_attempt_lowers_the_limit_and_a_reply_raises_it(slept: list[float]) -> None:
    model = FakeModel(
        ProviderError("slow down", kind="rate_limit", status_code=429),
        MockReply("d3"),
        server_error(),
        MockReply("c4"),
        ProviderError("late", kind="timeout"),
        MockReply("e3"),
    )
    client = fake_client(model, concurrency=3, backoff_base_s=0.0)
    assert ask(client, [{"role": "user", "content": "1"}]).concurrency == 2.17  # 3 halved to 1.5, then + 1 / 1.5
    assert client.limit.limit == pytest.approx(1.5 + 1 / 1.5)
    assert ask(client, [{"role": "user", "content": "2"}]).concurrency == 2.63  # a 5xx is no throttle: + 1 / 2.1667
    assert ask(client, [{"role": "user", "content": "3"}]).concurrency is not None  # a timeout halves it again
    assert client.limit.decreases == 2
    at_ceiling = fake_client(FakeModel(server_error()), concurrency=2, backoff_base_s=0.0)
    assert ask(at_ceiling).concurrency is None


def test_an_attempt_past_its_deadline_is_a_timeout(slept: list[float]) -> None:
    class Hanging(FakeModel):
        async def acomplete(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> MockReply:
            self.asked.append((messages, params))
            if len(self.asked) == 1:
                await asyncio.Event().wait()  # never answers
            return self.default

    client = fake_client(Hanging(), timeout_s=0.01, backoff_base_s=0.0)
    response = asyncio.run(asyncio.wait_for(client.complete(client.request(QUESTION)), 60))  # a hang guard
    assert response.errors[0].startswith("timeout") and response.retries == 1
