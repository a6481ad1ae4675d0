"""The model-layer tests' stub server: the plugin's (``stub_server``, one per module, reset per test), litellm warmed up once per module."""

from __future__ import annotations

import asyncio

import pytest

from harness.models.client import ModelClient

WARM_UP_KEY = "test-key-not-a-secret"


@pytest.fixture(scope="module")
def litellm_warmed_up(stub_server_module):
    """litellm's first call in a process sets itself up: done once per module, outside the tests."""
    client = ModelClient(stub_server_module.model, api_base=stub_server_module.url, api_key=WARM_UP_KEY, timeout_s=30)
    asyncio.run(client.complete(client.request([{"role": "user", "content": "warm up"}])))


@pytest.fixture
def stub(litellm_warmed_up, stub_server):
    """The plugin's server with no responder: these tests script each reply, the default (ok "d3") answers the rest."""
    stub_server.responder = None
    return stub_server


@pytest.fixture
def slept(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Every wait the client's retries asked for, recorded instead of slept (``client_fakes.record_sleeps``)."""
    from tests.harness.models.client_fakes import record_sleeps

    return record_sleeps(monkeypatch)
