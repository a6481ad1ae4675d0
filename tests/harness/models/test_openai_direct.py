"""The OpenAI-compatible path straight over aiohttp: when it is taken, and that it reads a server as litellm does."""

from __future__ import annotations

import asyncio

import pytest

from harness.models.client import ModelClient
from harness.models.errors import ModelCallError
from harness.models.openai_direct import DISABLE_VARIABLE, direct_path
from harness.testing.stub_server import ok, rate_limit, truncated

KEY = "sk-test-not-a-secret"
BASE = "http://127.0.0.1:9/v1"
PRICED = {"gpt-4o-mini": {}, "openai/registered": {}}


@pytest.mark.parametrize(
    ("model", "base", "params", "direct"),
    [
        ("openai/stub-model", BASE, {"temperature": 0.0, "max_tokens": 8, "timeout": 5}, True),
        ("openai/gpt-4o-mini", BASE, {}, False),  # litellm knows it: its pricing and parameter rules
        ("openai/registered", BASE, {}, False),  # registered in litellm's table under its full name
        ("openai/stub-model", None, {}, False),  # no API base: the provider's own endpoint, through litellm
        ("anthropic/claude-x", BASE, {}, False),
        ("openai/stub-model", BASE, {"drop_params": True}, False),  # a litellm-only argument
    ],
)
def test_which_requests_take_the_direct_path(model, base, params, direct, monkeypatch):
    monkeypatch.delenv(DISABLE_VARIABLE, raising=False)
    assert direct_path(model, base, params, PRICED) is direct
    monkeypatch.setenv(DISABLE_VARIABLE, "1")
    assert direct_path(model, base, params, PRICED) is False


def _ask(server, via_litellm: bool, monkeypatch, *behaviours):
    if via_litellm:
        monkeypatch.setenv(DISABLE_VARIABLE, "1")
    else:
        monkeypatch.delenv(DISABLE_VARIABLE, raising=False)
    server.reset()
    server.enqueue(*behaviours)
    client = ModelClient(
        server.model, api_base=server.url, api_key=KEY, timeout_s=10, max_retries=1, backoff_base_s=0.01, backoff_max_s=0.02
    )
    request = client.request(
        [{"role": "system", "content": "rules"}, {"role": "user", "content": "Legal moves: d3"}], temperature=0.0, max_tokens=8
    )
    try:
        return asyncio.run(client.complete(request)), server.requests
    except ModelCallError as failure:
        return failure, server.requests


@pytest.mark.parametrize(
    "behaviours", [(ok("c4"),), (truncated("I think"),), (rate_limit(0.05), ok("e6"))], ids=["ok", "truncated", "429-then-ok"]
)
def test_both_paths_send_and_read_alike(stub_server, monkeypatch, behaviours):
    stub_server.responder = None
    stub_server.cached_tokens = 5
    try:
        direct, direct_requests = _ask(stub_server, False, monkeypatch, *behaviours)
        litellm, litellm_requests = _ask(stub_server, True, monkeypatch, *behaviours)
    finally:
        stub_server.cached_tokens = 0
    fields = ("text", "finish_reason", "prompt_tokens", "completion_tokens", "cached_tokens", "retries")
    assert [getattr(direct, f) for f in fields] == [getattr(litellm, f) for f in fields]
    assert direct.cached_tokens == 5 and "cost unknown" in direct.cost_note
    assert [e.split(":")[0] for e in direct.errors] == [e.split(":")[0] for e in litellm.errors]
    assert direct.waits_s == litellm.waits_s  # the Retry-After, read from the headers on both paths
    sent = [(r["path"], r["json"]["model"], r["json"]["messages"], r["params"]) for r in direct_requests]
    assert sent == [(r["path"], r["json"]["model"], r["json"]["messages"], r["params"]) for r in litellm_requests]
    assert direct_requests[0]["headers"]["authorization"] == "<redacted>"
