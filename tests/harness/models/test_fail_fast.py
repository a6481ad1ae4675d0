"""Fail fast: failures that say the endpoint cannot answer stop the client at once; so do N failed calls in a row.

Through real litellm to the stub server on 127.0.0.1 (and to a port with nothing listening),
plus classification of errors litellm wraps (a DNS failure cannot be provoked offline).
"""

from __future__ import annotations

import asyncio
import os
import socket

import pytest

from harness.testing.stub_server import client_error, forbidden, free_port, model_not_found, ok, unauthorized

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from harness.models.cache import CachedFailure, ResponseCache  # noqa: E402
from harness.models.client import ModelClient  # noqa: E402
from harness.models.errors import FATAL_KINDS, EndpointDown, ModelCallError, ProviderError, classify_error  # noqa: E402
from harness.models.options import ModelOptions  # noqa: E402

MODEL = "openai/stub-model"
KEY = "test-key-not-a-secret"
MESSAGES = [{"role": "user", "content": "Legal moves: d3, c4\nYour move?"}]


def client_for(url: str, cache: ResponseCache | None = None, **options) -> ModelClient:
    return ModelClient(
        MODEL,
        api_base=url,
        api_key=KEY,
        cache=cache,
        max_retries=3,
        backoff_base_s=0.001,
        backoff_max_s=0.005,
        options=ModelOptions(timeout=10, **options),
    )


def call(client: ModelClient, messages=MESSAGES):
    return asyncio.run(client.complete(client.request(messages)))


def test_connection_refused_stops_at_the_first_attempt_naming_the_endpoint():
    port = free_port()
    client = client_for(f"http://127.0.0.1:{port}/v1")
    with pytest.raises(EndpointDown) as caught:
        call(client)
    down = caught.value
    assert down.kind == "connection_refused" and f"127.0.0.1:{port}" in str(down) and "connection refused" in str(down)
    assert client.usage.retries == 0  # not retried: nothing listens there
    with pytest.raises(EndpointDown):  # from now on without a request
        call(client, [{"role": "user", "content": "another question"}])


@pytest.mark.parametrize(
    ("behaviour", "status", "words"),
    [(unauthorized, 401, "authentication failed"), (forbidden, 403, "permission denied"), (model_not_found, 404, "not found")],
)
def test_auth_permission_and_not_found_stop_at_once_and_are_not_cached(stub, tmp_path, behaviour, status, words):
    stub.default = behaviour()
    cache = ResponseCache(tmp_path / "cache.jsonl")
    client = client_for(stub.url, cache)
    with pytest.raises(EndpointDown) as caught:
        call(client)
    assert caught.value.status_code == status and words in str(caught.value) and stub.url in str(caught.value)
    assert len(stub.requests) == 1
    with pytest.raises(EndpointDown):
        call(client, [{"role": "user", "content": "another question"}])
    assert len(stub.requests) == 1  # the stopped client sends nothing more
    assert not (tmp_path / "cache.jsonl").exists()  # a resumed run asks again


def test_n_failed_calls_in_a_row_stop_the_client_and_a_reply_resets_the_count(stub, tmp_path):
    client = client_for(stub.url, ResponseCache(tmp_path / "cache.jsonl"), max_consecutive_failures=3)
    questions = iter([{"role": "user", "content": f"question {n}"}] for n in range(20))
    stub.enqueue(client_error(400), client_error(400), ok("d3"), client_error(400), client_error(400), ok("d3"))
    for _ in range(2):
        for _ in range(2):
            with pytest.raises(ModelCallError):
                call(client, next(questions))
        assert call(client, next(questions)).text == "d3"  # a reply: the count starts again
    assert client.consecutive_failures == 0
    stub.default = client_error(400)  # a bad request is not fatal by itself, but three in a row are
    for _ in range(2):
        with pytest.raises(ModelCallError):
            call(client, next(questions))
    with pytest.raises(EndpointDown) as caught:
        call(client, next(questions))
    assert "3 calls in a row failed" in str(caught.value) and "bad_request HTTP 400" in str(caught.value)


def test_resumes_while_down_add_nothing_to_the_cache_and_then_replay_to_a_reply(stub, tmp_path):
    path = tmp_path / "cache.jsonl"
    stub.default = client_error(400)
    key = ModelClient(MODEL).request(MESSAGES).key()

    def failures_cached() -> int:
        cache, count = ResponseCache(path), 0
        while isinstance(cache.lookup(key, count), CachedFailure):
            count += 1
        return count

    for _ in range(3):  # the first run, then two resumes while the endpoint still fails
        client = client_for(stub.url, ResponseCache(path), max_consecutive_failures=3)
        with pytest.raises(EndpointDown):
            for _ in range(5):
                with pytest.raises(ModelCallError):
                    call(client)
        assert failures_cached() == 2  # the failure that stopped it is never cached: no pile-up
    stub.default = ok("e6")
    client = client_for(stub.url, ResponseCache(path), max_consecutive_failures=3)
    for _ in range(2):
        with pytest.raises(ModelCallError, match="replayed from the response cache"):
            call(client)
    assert call(client).text == "e6"


def test_a_parameter_the_model_does_not_take_stops_before_any_request(stub):
    client = ModelClient("openai/o3-mini", api_base=stub.url, api_key=KEY, options=ModelOptions(temperature=0.0))
    with pytest.raises(EndpointDown, match="does not take one of the request's parameters") as caught:
        asyncio.run(client.complete(client.request(MESSAGES)))
    assert caught.value.kind == "unsupported_params" and "drop_params=true" in str(caught.value)
    assert stub.requests == []


class _Wrapped(Exception):
    """An SDK error wrapping the socket error, as litellm -> openai -> httpx do."""


def _wrapping(inner: BaseException, message: str = "litellm.InternalServerError: Connection error.") -> Exception:
    try:
        try:
            raise inner
        except BaseException as error:
            raise _Wrapped(message) from error
    except _Wrapped as outer:
        outer.status_code = 500
        return outer


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (_wrapping(socket.gaierror(-2, "Name or service not known")), "dns"),
        (_wrapping(ConnectionRefusedError(111, "Connect call failed")), "connection_refused"),
        (RuntimeError("Cannot connect to host x:80 [Temporary failure in name resolution]"), "dns"),
        (RuntimeError("litellm.BadRequestError: LLM Provider NOT provided. You passed model=nosuch/x"), "unknown_provider"),
        (ProviderError("no key", kind="auth", status_code=401), "auth"),
    ],
)
def test_endpoint_failures_are_classified_as_fatal_and_not_retried(error, kind):
    info = classify_error(error)
    assert (info.kind, info.retryable) == (kind, False) and info.kind in FATAL_KINDS


def test_a_server_error_is_still_transient():
    info = classify_error(_wrapping(RuntimeError("upstream hiccup"), "stub error 503"))
    assert info.kind not in FATAL_KINDS
