"""The model client through real litellm to a stub server on 127.0.0.1 (never the network)."""

from __future__ import annotations

import asyncio
import json
import os
import threading

import pytest
from pydantic import ValidationError

from harness.testing.stub_server import Hold, StubServer, client_error, held, malformed, ok, rate_limit, server_error, slow, truncated
from tests.python_child import run_python

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from harness.models.cache import CacheFileError, ResponseCache  # noqa: E402
from harness.models.client import ModelClient, check_api_key  # noqa: E402
from harness.models.errors import BudgetCapReached, EndpointDown, ModelCallError, ModelConfigError  # noqa: E402
from harness.models.messages import ModelRequest, cache_key  # noqa: E402

MODEL = "openai/stub-model"
TEST_KEY = "sk-test-not-a-secret"  # given to the client, never read from the env
MESSAGES = [{"role": "system", "content": "You play Othello."}, {"role": "user", "content": "Legal moves: d3, c4\nYour move?"}]


def make_client(stub: StubServer, **options) -> ModelClient:
    options.setdefault("timeout_s", 5.0)
    options.setdefault("backoff_base_s", 0.01)
    options.setdefault("backoff_max_s", 0.05)
    return ModelClient(MODEL, api_base=stub.url, api_key=TEST_KEY, **options)


def run(client: ModelClient, *, messages=MESSAGES, **params):
    return asyncio.run(client.complete(client.request(messages, **params)))


def test_normal_completion_counts_tokens_and_keeps_the_key_secret(stub):
    client = make_client(stub)
    response = run(client, temperature=0.0, max_tokens=8)
    assert (response.text, response.finish_reason) == ("d3", "stop")
    assert (response.prompt_tokens, response.completion_tokens) == (12, 3)
    assert response.retries == 0 and response.errors == [] and not response.cache_hit
    assert response.cost_usd == 0.0 and "cost unknown" in response.cost_note
    assert response.cache_key == cache_key(MODEL, MESSAGES, {"temperature": 0.0, "max_tokens": 8})
    assert client.usage.calls == 1 and client.usage.total_tokens == 15
    (request,) = stub.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["json"]["model"] == "stub-model"
    assert request["json"]["messages"] == MESSAGES
    assert request["json"]["temperature"] == 0.0
    assert request["headers"]["authorization"] == "<redacted>"
    assert TEST_KEY not in response.model_dump_json() and TEST_KEY not in repr(client)


def test_rate_limit_retry_after_is_honoured(stub):
    stub.enqueue(rate_limit(retry_after=0.05), ok("e3"))
    client = make_client(stub)
    response = run(client)
    assert response.text == "e3"
    assert response.retries == 1 and client.usage.retries == 1
    assert response.waits_s == [pytest.approx(0.05)]
    assert response.errors[0].startswith("rate_limit HTTP 429, retry after 0.05 s")
    first, second = stub.requests
    assert second["time"] - first["time"] >= 0.05


def test_retry_after_is_capped(stub):
    stub.enqueue(rate_limit(retry_after=120), ok())
    response = run(make_client(stub, max_retry_after_s=0.02))
    assert response.waits_s == [pytest.approx(0.02)]


def test_server_errors_twice_then_ok(stub):
    stub.enqueue(server_error(500), server_error(503), ok("f5"))
    client = make_client(stub)
    response = run(client)
    assert response.text == "f5" and response.retries == 2 and len(stub.requests) == 3
    assert [e.split(" ")[0] for e in response.errors] == ["server_error", "server_error"]
    assert client.usage.errors_by_kind == {"server_error": 2}


def test_timeout_then_ok(stub):
    stub.enqueue(slow(4.0), ok("c4"))  # an ordinary reply comes far within the timeout, even on a loaded machine
    response = run(make_client(stub, timeout_s=1.0))
    assert response.text == "c4" and response.retries == 1
    assert response.errors[0].startswith("timeout")


@pytest.mark.parametrize(
    ("status", "kind", "error"),
    [
        (400, "bad_request", ModelCallError),
        (401, "auth", EndpointDown),
        (404, "not_found", EndpointDown),
        (422, "bad_request", ModelCallError),
    ],
)
def test_client_errors_are_not_retried(stub, status, kind, error):
    # 401 and 404 also say the endpoint cannot be used: the client stops (tests/harness/models/test_fail_fast.py)
    stub.enqueue(client_error(status))
    client = make_client(stub)
    with pytest.raises(error) as caught:
        run(client)
    assert caught.value.kind == kind
    assert f"HTTP {status}" in str(caught.value)
    assert len(stub.requests) == 1 and client.usage.failed_calls == 1


def test_retries_run_out(stub):
    stub.enqueue(server_error(), server_error(), server_error())
    with pytest.raises(ModelCallError) as caught:
        run(make_client(stub, max_retries=2))
    assert caught.value.kind == "server_error" and caught.value.retries == 2
    assert len(caught.value.errors) == 3 and len(stub.requests) == 3


def test_malformed_json_is_classified_and_retried(stub):
    stub.enqueue(malformed())
    with pytest.raises(ModelCallError) as caught:
        run(make_client(stub, max_retries=0))
    assert caught.value.kind == "malformed_response"
    stub.enqueue(malformed(), ok("d3"))
    response = run(make_client(stub))
    assert response.text == "d3" and response.errors[0].startswith("malformed_response")


def test_truncated_reply_surfaces_finish_reason_length(stub):
    stub.enqueue(truncated("I would play"))
    response = run(make_client(stub))
    assert response.finish_reason == "length" and response.text == "I would play"
    assert response.retries == 0


def test_a_request_left_over_from_before_a_reset_does_not_count_after_it(stub):
    # a reply that outlives its test (the client timed out) once lowered the next test's in-flight count
    left_over, second = Hold(), Hold()
    stub.enqueue(held(left_over))  # not answered before the client gives up, however loaded the machine
    with pytest.raises(ModelCallError):
        run(make_client(stub, timeout_s=0.1, max_retries=0))
    stub.reset_counters()
    stub.enqueue(held(second, "c4"))

    def end_the_left_over_while_the_second_is_under_way() -> None:
        if second.arrived.wait(60):
            left_over.release.set()
            left_over.ended.wait(60)
        second.release.set()

    threading.Thread(target=end_the_left_over_while_the_second_is_under_way, daemon=True).start()
    assert run(make_client(stub)).text == "c4"
    assert second.ended.wait(60) and left_over.ended.is_set()
    assert (stub.in_flight, stub.max_in_flight, len(stub.requests)) == (0, 1, 1)


def test_concurrency_limit_holds_and_fills(stub):
    stub.hold_until_in_flight(32)  # no reply until 32 requests are open: the limit is reached or the test fails
    client = make_client(stub, concurrency=32, timeout_s=90)

    async def many():
        requests = [client.request([{"role": "user", "content": f"game {i}"}]) for i in range(64)]
        return await asyncio.gather(*(client.complete(r) for r in requests))

    responses = asyncio.run(many())
    assert len(responses) == 64 and all(r.text == "d3" for r in responses)
    assert len(stub.requests) == 64
    assert stub.max_in_flight == 32  # never above the limit, and the limit is reached
    assert client.max_in_flight == 32


def test_cache_hit_makes_no_call_and_survives_a_restart(stub, tmp_path):
    path = tmp_path / "cache.jsonl"
    client = make_client(stub, cache=ResponseCache(path))
    first = run(client, temperature=0.2)
    second = run(client, temperature=0.2)
    assert len(stub.requests) == 1
    assert not first.cache_hit and second.cache_hit and second.text == first.text
    assert second.cache_key == first.cache_key
    run(client, temperature=0.7)  # other parameters: another key, another call
    assert len(stub.requests) == 2
    reloaded = make_client(stub, cache=ResponseCache(path))
    assert run(reloaded, temperature=0.2).cache_hit and len(stub.requests) == 2
    lines = path.read_text().splitlines()
    assert len(lines) == 2 and TEST_KEY not in path.read_text()
    assert json.loads(lines[0])["key"] == first.cache_key


def test_cache_file_torn_last_line_is_skipped_and_corrupt_line_named(tmp_path):
    path = tmp_path / "cache.jsonl"
    cache = ResponseCache(path)
    from harness.models.messages import ModelResponse

    cache.put("k1", ModelResponse(model=MODEL, text="d3"))
    with path.open("a") as handle:
        handle.write('{"key": "k2", "resp')  # killed mid-write
    reloaded = ResponseCache(path)
    assert reloaded.skipped_torn_line and "k1" in reloaded and "k2" not in reloaded
    reloaded.put("k3", ModelResponse(model=MODEL, text="e3"))
    assert "k3" in ResponseCache(path)
    path.write_text(
        '{"key": "k1", "response": {"model": "m", "text": "x"}}\nnot json\n{"key": "k3", "response": {"model": "m", "text": "y"}}\n'
    )
    with pytest.raises(CacheFileError, match=r"cache.jsonl:2"):
        ResponseCache(path)


def test_token_cap_stops_before_the_next_call(stub):
    client = make_client(stub, max_tokens_total=20)
    run(client, messages=[{"role": "user", "content": "1"}])  # 15 tokens
    run(client, messages=[{"role": "user", "content": "2"}])  # 30: over the cap now
    with pytest.raises(BudgetCapReached, match="token cap"):
        run(client, messages=[{"role": "user", "content": "3"}])
    assert len(stub.requests) == 2 and client.usage.total_tokens == 30


def test_cost_cap_stops_before_the_next_call(stub):
    import litellm

    saved = dict(litellm.model_cost)  # register_model writes more than one key: all of them are taken back below
    litellm.register_model(
        {"openai/stub-model": {"input_cost_per_token": 0.001, "output_cost_per_token": 0.002, "litellm_provider": "openai", "mode": "chat"}}
    )
    try:
        client = make_client(stub, max_cost_usd=0.03)
        first = run(client, messages=[{"role": "user", "content": "1"}])
        assert first.cost_usd == pytest.approx(0.018) and first.cost_note is None
        run(client, messages=[{"role": "user", "content": "2"}])
        with pytest.raises(BudgetCapReached, match="cost cap"):
            run(client, messages=[{"role": "user", "content": "3"}])
        assert len(stub.requests) == 2
        assert client.usage.cost_usd == pytest.approx(0.036)
    finally:
        litellm.model_cost.clear()
        litellm.model_cost.update(saved)


def test_missing_api_key_is_a_config_error(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelConfigError, match="OPENAI_API_KEY"):
        check_api_key("openai/gpt-4o-mini")
    check_api_key("openai/gpt-4o-mini", api_key=TEST_KEY)  # passed explicitly: fine
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
    check_api_key("openai/gpt-4o-mini")


def test_missing_anthropic_key_and_unknown_models(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ModelConfigError, match="ANTHROPIC_API_KEY"):
        check_api_key("anthropic/claude-3-5-haiku-latest")
    with pytest.raises(ModelConfigError, match="unknown model"):
        check_api_key("no-such-provider-model-xyz")
    with pytest.raises(ModelConfigError, match="mock/first-legal"):
        check_api_key("mock/no-such-mock")
    check_api_key("mock/first-legal")


def test_a_request_refuses_an_api_key_param():
    with pytest.raises(ValidationError, match="ModelClient"):
        ModelRequest(model=MODEL, messages=MESSAGES, params={"api_key": TEST_KEY})


def test_cache_key_is_canonical():
    a = cache_key(MODEL, MESSAGES, {"temperature": 0.0, "max_tokens": 5})
    b = cache_key(MODEL, MESSAGES, {"max_tokens": 5, "temperature": 0.0})
    assert a == b and len(a) == 64
    assert a != cache_key(MODEL, MESSAGES, {"temperature": 0.1, "max_tokens": 5})
    assert a != cache_key("openai/other", MESSAGES, {"temperature": 0.0, "max_tokens": 5})


def test_cache_file_whole_last_record_without_newline_is_kept(tmp_path):
    path = tmp_path / "cache.jsonl"
    path.write_text('{"key": "k1", "response": {"model": "m", "text": "d3"}}')
    cache = ResponseCache(path)
    assert "k1" in cache and not cache.skipped_torn_line
    from harness.models.messages import ModelResponse

    cache.put("k2", ModelResponse(model=MODEL, text="e3"))
    reloaded = ResponseCache(path)
    assert "k1" in reloaded and "k2" in reloaded


def test_importing_the_client_does_not_import_litellm():
    code = (
        "import sys, harness.models.client, harness.models.mock; "
        "c = harness.models.client.ModelClient('mock/first-legal'); "
        "print('litellm' in sys.modules)"
    )
    result = run_python(code)
    assert result.stdout.strip() == "False"
