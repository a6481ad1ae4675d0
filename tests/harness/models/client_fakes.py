"""A scripted in-process model for the model client's tests (test_client_mutants, test_client_failures_mutants).

The client takes it as ``mock=``: every call stays in the process, no server, no network.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from harness.models.client import ModelClient
from harness.models.errors import ModelCallError, ProviderError
from harness.models.messages import ModelResponse
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


def record_sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The waits tenacity asks for between attempts, from now to the test's end; none is slept."""
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
