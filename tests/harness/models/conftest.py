"""The model-layer tests' stub server: one per test module (litellm warmed up once), counters reset per test."""

from __future__ import annotations

import asyncio

import pytest
from stub_server import StubServer, ok

from harness.models.client import ModelClient

WARM_UP_MODEL = "openai/stub-model"
WARM_UP_KEY = "test-key-not-a-secret"


@pytest.fixture(scope="module")
def server():
    with StubServer() as stub:
        # litellm's first call in a process sets itself up; do it outside the tests.
        client = ModelClient(WARM_UP_MODEL, api_base=stub.url, api_key=WARM_UP_KEY, timeout_s=30)
        asyncio.run(client.complete(client.request([{"role": "user", "content": "warm up"}])))
        yield stub


@pytest.fixture
def stub(server):
    server.reset_counters()
    server.default = ok()
    yield server
    server.reset_counters()
    server.default = ok()
