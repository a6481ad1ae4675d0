"""The model client's defaults and the shared-cap refusal's text (survivors of the second `make mutation` run of `client`).

The model is the scripted fake of client_fakes.py; tenacity's waits are recorded, not slept.
"""

from __future__ import annotations

import random

import pytest
from client_fakes import MODEL, FakeModel, ask, failing, fake_client, record_sleeps, server_error

from harness.models.client import ModelClient
from harness.models.errors import SHARED_CAP_REFUSAL, BudgetCapReached, ModelCallError, ProviderError


def test_a_client_runs_32_requests_at_once_by_default():
    client = ModelClient(MODEL, mock=FakeModel())
    assert client.concurrency == 32
    assert repr(client) == f"ModelClient(model={MODEL!r}, concurrency=32)"


def test_a_concurrency_of_one_is_allowed_and_zero_is_refused():
    assert ModelClient(MODEL, mock=FakeModel(), concurrency=1).concurrency == 1
    with pytest.raises(ValueError, match="^concurrency must be at least 1$"):
        ModelClient(MODEL, mock=FakeModel(), concurrency=0)


def test_five_retries_by_default(monkeypatch: pytest.MonkeyPatch):
    record_sleeps(monkeypatch)
    model = FakeModel(*(server_error() for _ in range(6)))  # a seventh attempt would be answered
    failure = failing(fake_client(model), ModelCallError)
    assert len(model.asked) == 6
    assert failure.retries == 5


def test_the_backoff_is_capped_at_30_seconds_by_default(monkeypatch: pytest.MonkeyPatch):
    waits = record_sleeps(monkeypatch)
    model = FakeModel(server_error(), server_error())
    reply = ask(fake_client(model, backoff_base_s=64.0, seed=7))  # every ceiling is the cap
    draws = random.Random(7)
    expected = [draws.uniform(0.0, 30.0), draws.uniform(0.0, 30.0)]
    assert waits == expected
    assert reply.waits_s == expected


def test_a_shared_cap_refusal_is_quoted_from_its_first_mention():
    said = f"limiter: {SHARED_CAP_REFUSAL} ($2.00 of $2.00); {SHARED_CAP_REFUSAL} again"
    client = fake_client(FakeModel(ProviderError(said, kind="bad_request")))
    refusal = failing(client, BudgetCapReached)
    assert str(refusal) == f"{SHARED_CAP_REFUSAL} ($2.00 of $2.00); {SHARED_CAP_REFUSAL} again"
