"""The model client's retries, accounting, fail-fast and key checks, pinned (mutants of `make mutation MODULES=client`).

Every call here goes to an in-process fake model (the client's ``mock=`` argument) or to a fake litellm module put
in place of :func:`harness.models.client.import_litellm`: no server, no network. Backoff waits are recorded, never
slept: ``asyncio.sleep`` (which tenacity awaits between attempts) is replaced by one that only yields.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

import harness.models.client as client_module
from harness.models.cache import CachedFailure, ResponseCache
from harness.models.client import KEYED_PROVIDERS, ModelClient, check_api_key, import_litellm
from harness.models.errors import BudgetCapReached, EndpointDown, ModelCallError, ModelConfigError, ProviderError
from harness.models.messages import ModelResponse
from harness.models.options import ModelOptions
from harness.models.replies import MockReply

MODEL = "openai/fake-model"
QUESTION = [{"role": "user", "content": "Legal moves: d3, c4\nYour move?"}]


class FakeModel:
    """Answers with the scripted outcomes in order (a MockReply, or an exception to raise); records each ask."""

    def __init__(self, *outcomes: MockReply | BaseException, default: MockReply | None = None) -> None:
        self.outcomes = list(outcomes)
        self.default = default or MockReply("d3", prompt_tokens=10, completion_tokens=2)
        self.asked: list[tuple[list[dict[str, Any]], dict[str, Any]]] = []
        self.replayed_calls: list[tuple[list[dict[str, Any]], int]] = []

    async def acomplete(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> MockReply:
        self.asked.append((messages, dict(params)))
        outcome = self.outcomes.pop(0) if self.outcomes else self.default
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome


class ReplayingFakeModel(FakeModel):
    """A fake that, like the offline mocks, is told about calls answered from the cache."""

    def replayed(self, messages: list[dict[str, Any]], attempts: int) -> None:
        self.replayed_calls.append((messages, attempts))


@pytest.fixture
def slept(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The waits tenacity asked for between attempts; none is slept."""
    waits: list[float] = []
    real_sleep = asyncio.sleep

    async def record(seconds: float, *args: Any, **kwargs: Any) -> None:
        waits.append(seconds)
        await real_sleep(0)

    monkeypatch.setattr(asyncio, "sleep", record)
    return waits


def fake_client(model: FakeModel, **options: Any) -> ModelClient:
    options.setdefault("timeout_s", 30.0)
    return ModelClient(MODEL, mock=model, **options)


def ask(client: ModelClient, messages: list[dict[str, Any]] | None = None, **params: Any) -> ModelResponse:
    return asyncio.run(client.complete(client.request(messages or QUESTION, **params)))


def failing(client: ModelClient, error: type[BaseException] = ModelCallError, messages: list[dict[str, Any]] | None = None) -> Any:
    with pytest.raises(error) as caught:
        ask(client, messages)
    return caught.value


def server_error(text: str = "upstream hiccup") -> ProviderError:
    return ProviderError(text, kind="server_error", status_code=503)


# --- import_litellm -------------------------------------------------------------------------------------------


def test_import_litellm_keeps_the_cost_map_local_and_quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    monkeypatch.delenv("LITELLM_LOCAL_MODEL_COST_MAP", raising=False)
    litellm = import_litellm()
    monkeypatch.setattr(litellm, "suppress_debug_info", False)
    assert import_litellm() is litellm
    assert os.environ["LITELLM_LOCAL_MODEL_COST_MAP"].lower() == "true"
    assert litellm.suppress_debug_info is True


def test_import_litellm_leaves_a_value_already_set(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import_litellm()
    assert os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"


# --- check_api_key and _missing_keys, against a fake litellm --------------------------------------------------


def fake_litellm(
    monkeypatch: pytest.MonkeyPatch,
    *,
    provider: str = "groq",
    report: Any = None,
    validate: Callable[..., Any] | None = None,
    with_validate: bool = True,
) -> SimpleNamespace:
    """A litellm stand-in: ``get_llm_provider`` records its arguments and answers ``provider``."""
    calls: list[dict[str, Any]] = []

    def get_llm_provider(**kwargs: Any) -> tuple[str, str, None, None]:
        calls.append(kwargs)
        return kwargs["model"], provider, None, None

    def validate_environment(**kwargs: Any) -> Any:
        calls.append({"validate": kwargs})
        return report

    fake = SimpleNamespace(get_llm_provider=get_llm_provider, calls=calls, suppress_debug_info=True)
    if with_validate:
        fake.validate_environment = validate or validate_environment
    monkeypatch.setattr(client_module, "import_litellm", lambda: fake)
    return fake


def test_check_api_key_asks_litellm_for_the_provider_with_the_api_base(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = fake_litellm(monkeypatch, provider="custom_openai")
    check_api_key("llama-3", api_base="http://localhost:8000/v1")
    assert fake.calls == [{"model": "llama-3", "api_base": "http://localhost:8000/v1"}]  # not keyed: no validation


def test_check_api_key_names_every_variable_litellm_reports_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_litellm(monkeypatch, provider="groq", report={"keys_in_environment": False, "missing_keys": ["A_KEY", "B_KEY"]})
    monkeypatch.setenv("GROQ_API_KEY", "set")  # the table would say nothing is missing: litellm's report decides
    with pytest.raises(ModelConfigError) as caught:
        check_api_key("groq/llama")
    assert str(caught.value) == (
        "model 'groq/llama' needs A_KEY, B_KEY set in the environment (export it before running; it is never written to the run's files)"
    )


def test_check_api_key_falls_back_on_the_provider_table(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_litellm(monkeypatch, provider="mistral", with_validate=False)
    monkeypatch.delenv("MISTRAL_API_KEY", raising=False)
    with pytest.raises(ModelConfigError, match=r"^model 'mistral/small' needs MISTRAL_API_KEY set in the environment"):
        check_api_key("mistral/small")
    check_api_key("mistral/small", api_key="given")  # a key passed: nothing to check


def test_missing_keys_takes_litellm_report(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GROQ_API_KEY", "set")
    fake = fake_litellm(monkeypatch, report={"keys_in_environment": False, "missing_keys": ["A_KEY", "B_KEY"]})
    assert client_module._missing_keys(fake, "groq/llama", "groq") == ["A_KEY", "B_KEY"]
    assert fake.calls == [{"validate": {"model": "groq/llama"}}]


def test_missing_keys_without_names_in_the_report_names_the_provider_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GROQ_API_KEY", "set")
    for report in ({"keys_in_environment": False}, {"keys_in_environment": False, "missing_keys": []}):
        fake = fake_litellm(monkeypatch, report=report)
        assert client_module._missing_keys(fake, "groq/llama", "groq") == ["GROQ_API_KEY"]


def test_missing_keys_trusts_a_report_that_says_nothing_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GROQ_API_KEY", raising=False)  # the table would name it: the report decides
    for report in ({}, {"keys_in_environment": True, "missing_keys": ["IGNORED"]}):
        fake = fake_litellm(monkeypatch, report=report)
        assert client_module._missing_keys(fake, "groq/llama", "groq") == []


@pytest.mark.parametrize("broken", ["no validate", "raises", "not a dict"])
def test_missing_keys_falls_back_on_the_environment(monkeypatch: pytest.MonkeyPatch, broken: str) -> None:
    def raising(**kwargs: Any) -> Any:
        raise RuntimeError("validate_environment failed")

    fake = fake_litellm(monkeypatch, with_validate=broken != "no validate", report=None, validate=raising if broken == "raises" else None)
    monkeypatch.delenv("GROQ_API_KEY", raising=False)
    assert client_module._missing_keys(fake, "groq/llama", "groq") == ["GROQ_API_KEY"]
    monkeypatch.setenv("GROQ_API_KEY", "set")
    assert client_module._missing_keys(fake, "groq/llama", "groq") == []
    assert KEYED_PROVIDERS["groq"] == "GROQ_API_KEY"


# --- ModelClient.__init__ and check -------------------------------------------------------------------------


def test_concurrency_below_one_is_refused_in_words() -> None:
    with pytest.raises(ValueError, match=r"^concurrency must be at least 1$"):
        ModelClient("mock/first-legal", concurrency=0)


def test_litellm_is_imported_at_construction_only_for_a_real_model(monkeypatch: pytest.MonkeyPatch) -> None:
    imports: list[str] = []
    monkeypatch.setattr(client_module, "import_litellm", lambda: imports.append("litellm"))
    ModelClient(MODEL, mock=FakeModel())
    ModelClient("mock/first-legal")
    assert imports == []
    fresh = ModelClient(MODEL, api_base="http://127.0.0.1:9/v1")
    assert imports == ["litellm"] and (fresh.in_flight, fresh.max_in_flight) == (0, 0)


def test_an_offline_model_gets_the_client_seed() -> None:
    from harness.models.mock import make_offline_model

    prompt = [{"role": "user", "content": "Legal moves: a1, b2, c3, d4, e5, f6, g7, h8\nYour move?"}]
    texts: dict[int, list[str]] = {}
    for seed in (0, 5):
        client = ModelClient("mock/random-legal", seed=seed)
        model = make_offline_model("mock/random-legal", seed=seed)
        texts[seed] = [ask(client, prompt, n=i).text for i in range(8)]
        assert texts[seed] == [model.complete(prompt, {"n": i}).text for i in range(8)]
    assert texts[0] != texts[5]
    default = ModelClient("mock/random-legal")
    assert [ask(default, prompt, n=i).text for i in range(8)] == texts[0]  # the default seed is 0


def test_check_calls_check_api_key_with_the_client_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    checked: list[tuple[Any, ...]] = []
    monkeypatch.setattr(client_module, "check_api_key", lambda model, **kw: checked.append((model, kw)))
    monkeypatch.setattr(client_module, "import_litellm", lambda: None)
    ModelClient(MODEL, api_base="http://127.0.0.1:9/v1", api_key="k").check()
    ModelClient(MODEL, mock=FakeModel()).check()  # offline: nothing to check
    assert checked == [(MODEL, {"api_key": "k", "api_base": "http://127.0.0.1:9/v1"})]


def test_check_refuses_a_model_without_its_key(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_litellm(monkeypatch, provider="mistral", with_validate=False)
    monkeypatch.delenv("MISTRAL_API_KEY", raising=False)
    with pytest.raises(ModelConfigError, match="MISTRAL_API_KEY"):
        ModelClient("mistral/small").check()
    ModelClient("mistral/small", api_key="given").check()


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


def test_the_deadline_adds_a_grace_for_litellm_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client_module, "import_litellm", lambda: None)
    assert ModelClient(MODEL, timeout_s=10.0)._deadline_s() == 15.0  # half the timeout
    assert ModelClient(MODEL, timeout_s=2.0)._deadline_s() == 4.0  # at least 2 s
    assert fake_client(FakeModel(), timeout_s=10.0)._deadline_s() == 10.0


# --- the request as litellm or the direct path gets it ----------------------------------------------------------


def litellm_recorder(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []

    async def acompletion(**kwargs: Any) -> str:
        sent.append(kwargs)
        return "raw"

    fake = SimpleNamespace(model_cost={}, acompletion=acompletion, suppress_debug_info=True)
    monkeypatch.setattr(client_module, "import_litellm", lambda: fake)
    monkeypatch.setattr(client_module, "direct_path", lambda *args: False)
    monkeypatch.setattr(
        client_module, "response_from_litellm", lambda litellm, model, raw: ModelResponse(model=model, text=f"{raw} via {litellm is fake}")
    )
    return sent


def test_litellm_gets_the_params_our_timeout_no_sdk_retries_the_base_and_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    sent = litellm_recorder(monkeypatch)
    system = [{"role": "system", "content": "You play Othello."}, *QUESTION]
    client = ModelClient("anthropic/claude-x", api_base="http://127.0.0.1:9", api_key="k", timeout_s=7.0)
    assert ask(client, system, temperature=0.2).text == "raw via True"
    assert sent[0]["model"] == "anthropic/claude-x"
    assert sent[0]["messages"][0]["content"][0]["cache_control"] == {"type": "ephemeral"}  # the hint is sent
    assert {k: v for k, v in sent[0].items() if k not in ("model", "messages")} == {
        "temperature": 0.2,
        "timeout": 7.0,
        "max_retries": 0,
        "api_base": "http://127.0.0.1:9",
        "api_key": "k",
    }
    bare = ModelClient(MODEL, timeout_s=7.0)
    ask(bare, timeout=3)
    assert {k: v for k, v in sent[1].items() if k not in ("model", "messages")} == {"timeout": 3, "max_retries": 0}
    assert sent[1]["messages"] == QUESTION


def test_the_direct_path_gets_the_base_the_key_and_the_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    litellm_recorder(monkeypatch)
    asked: list[tuple[Any, ...]] = []
    decided: list[tuple[Any, ...]] = []

    async def complete_direct(*args: Any) -> ModelResponse:
        asked.append(args)
        return ModelResponse(model=args[0], text="direct")

    monkeypatch.setattr(client_module, "complete_direct", complete_direct)
    monkeypatch.setattr(client_module, "direct_path", lambda *args: decided.append(args) or True)
    client = ModelClient(MODEL, api_base="http://127.0.0.1:9/v1", api_key="k", timeout_s=7.0)
    assert ask(client, temperature=0.1).text == "direct"
    assert decided == [(MODEL, "http://127.0.0.1:9/v1", {"temperature": 0.1}, {})]
    assert asked == [(MODEL, "http://127.0.0.1:9/v1", QUESTION, {"temperature": 0.1}, "k", 7.0)]
    ask(ModelClient(MODEL, timeout_s=7.0))
    assert asked[1][1] == "" and asked[1][4] is None
