"""The scripted mock model, alone and behind the model client (no litellm, no network)."""

from __future__ import annotations

import asyncio

import pytest

from harness.models.client import ModelClient
from harness.models.errors import ModelCallError, ModelConfigError, ProviderError
from harness.models.mock import (
    FAILURE_KINDS,
    MOCK_MODELS,
    REFUSAL_TEXT,
    MockExhausted,
    MockModel,
    UnknownMockModel,
    first_legal,
    legal_moves_in,
    make_mock,
)


def user(text: str) -> list[dict]:
    return [{"role": "system", "content": "Legal moves: a1"}, {"role": "user", "content": text}]


def test_fixed_replies_then_exhausted():
    mock = MockModel(replies=["d3", "e3"])
    assert [mock.complete(user("?")).text for _ in range(2)] == ["d3", "e3"]
    with pytest.raises(MockExhausted, match="ran out of scripted replies after 2"):
        mock.complete(user("?"))


def test_exhaustion_is_loud_through_the_client():
    client = ModelClient("mock/scripted", mock=MockModel(replies=["d3"]))
    assert asyncio.run(client.complete(client.request(user("a")))).text == "d3"
    with pytest.raises(MockExhausted):
        asyncio.run(client.complete(client.request(user("b"))))


def test_first_legal_reads_the_legal_moves_line():
    prompt = "Board:\n  a b c d\n1 . . X O\nLegal moves: D3, e3, f4\nReply with one move."
    assert legal_moves_in(prompt) == ["d3", "e3", "f4"]
    assert make_mock("mock/first-legal").complete(user(prompt)).text == "d3"


def test_first_legal_falls_back_on_move_tokens_and_pass():
    assert first_legal(user("You may play c4 or f5."), None) == "c4"
    assert first_legal(user("Legal moves: pass"), None) == "pass"
    assert first_legal(user("No moves here."), None) == "pass"
    parts = [{"role": "user", "content": [{"type": "text", "text": "Legal moves: h8, a1"}]}]
    assert first_legal(parts, None) == "h8"


def test_first_legal_uses_the_last_user_message():
    messages = [
        {"role": "user", "content": "Legal moves: a1"},
        {"role": "assistant", "content": "a1"},
        {"role": "user", "content": "a1 is illegal. Legal moves: b2, c3"},
    ]
    assert first_legal(messages, None) == "b2"


def test_random_legal_is_seeded_and_legal():
    prompt = user("Legal moves: a1, b2, c3, d4, e5")
    draws = [[make_mock("random-legal", seed=7).complete(prompt).text for _ in range(1)] for _ in range(2)]
    assert draws[0] == draws[1]
    mock = make_mock("random-legal", seed=3)
    replies = {mock.complete(prompt).text for _ in range(50)}
    assert replies <= {"a1", "b2", "c3", "d4", "e5"} and len(replies) > 1


@pytest.mark.parametrize("kind", ["rate_limit", "server_error", "timeout", "malformed_response"])
def test_raised_failures(kind):
    mock = MockModel(reply_fn=first_legal, schedule=[kind, None], retry_after=0.25)
    with pytest.raises(ProviderError) as caught:
        mock.complete(user("Legal moves: d3"))
    assert caught.value.kind == kind and caught.value.retryable
    if kind == "rate_limit":
        assert caught.value.retry_after == 0.25 and caught.value.status_code == 429
    assert mock.complete(user("Legal moves: d3")).text == "d3"
    assert mock.failures == {kind: 1}


@pytest.mark.parametrize(
    ("kind", "text", "reason"),
    [("empty", "", "stop"), ("refusal", REFUSAL_TEXT, "stop"), ("truncated", None, "length"), ("garbage", None, "stop")],
)
def test_reply_failures(kind, text, reason):
    reply = MockModel(reply_fn=first_legal, schedule={0: kind}).complete(user("Legal moves: d3"))
    assert reply.finish_reason == reason
    if text is not None:
        assert reply.text == text
    assert "d3" not in reply.text


def test_failure_probability_is_seeded():
    def outcomes(seed):
        mock = MockModel(reply_fn=first_legal, failure_rate=0.3, seed=seed)
        result = []
        for _ in range(200):
            try:
                reply = mock.complete(user("Legal moves: d3"))
                result.append(reply.finish_reason if reply.text != "d3" else "ok")
            except ProviderError as exc:
                result.append(exc.kind)
        return result

    first = outcomes(1)
    assert first == outcomes(1)
    failed = sum(1 for outcome in first if outcome != "ok")
    assert 30 <= failed <= 90


def test_bad_configuration():
    with pytest.raises(ValueError, match="either replies or reply_fn"):
        MockModel()
    with pytest.raises(ValueError, match="unknown failure kinds"):
        MockModel(replies=["d3"], schedule=["meteor"])
    assert set(FAILURE_KINDS) >= {"rate_limit", "truncated", "refusal"}


def test_unknown_mock_name_lists_the_valid_ones():
    with pytest.raises(UnknownMockModel) as caught:
        make_mock("mock/nope")
    assert isinstance(caught.value, ModelConfigError)
    for name in MOCK_MODELS:
        assert f"mock/{name}" in str(caught.value)
    with pytest.raises(ModelConfigError):
        ModelClient("mock/nope")


def test_client_retries_injected_failures_and_counts_them():
    mock = MockModel(reply_fn=first_legal, schedule=["rate_limit", "server_error", "timeout", None], retry_after=0.01)
    client = ModelClient("mock/scripted", mock=mock, backoff_base_s=0.001)
    response = asyncio.run(client.complete(client.request(user("Legal moves: e6"))))
    assert response.text == "e6" and response.retries == 3
    assert [e.split(" ")[0].rstrip(":") for e in response.errors] == ["rate_limit", "server_error", "timeout"]
    assert response.cost_note == "mock model" and response.prompt_tokens > 0
    assert client.usage.errors_by_kind == {"rate_limit": 1, "server_error": 1, "timeout": 1}


def test_client_gives_up_after_max_retries_on_the_mock():
    mock = MockModel(reply_fn=first_legal, schedule=["server_error"] * 3)
    client = ModelClient("mock/scripted", mock=mock, max_retries=2, backoff_base_s=0.001)
    with pytest.raises(ModelCallError) as caught:
        asyncio.run(client.complete(client.request(user("Legal moves: e6"))))
    assert caught.value.kind == "server_error" and mock.calls == 3


def test_mock_through_the_client_keeps_32_calls_in_flight():
    client = ModelClient("mock/first-legal", concurrency=32)
    client._mock.latency_s = 0.05

    async def many():
        requests = [client.request(user(f"Legal moves: d{i % 8 + 1}")) for i in range(96)]
        return await asyncio.gather(*(client.complete(r) for r in requests))

    responses = asyncio.run(many())
    assert [r.text for r in responses] == [f"d{i % 8 + 1}" for i in range(96)]
    assert client.max_in_flight == 32


def test_a_resumed_client_draws_the_calls_after_a_cached_failure_as_the_original_run_did(tmp_path):
    """A request that failed for good and is asked again: after a resume the cache answers the failure, and the
    mock's draws for the ask after it (reply and scheduled failures) are those of the uninterrupted run."""
    import asyncio

    from harness.models.cache import ResponseCache
    from harness.models.client import ModelClient
    from harness.models.errors import ModelCallError
    from harness.models.mock import MockModel, random_legal

    messages = [{"role": "user", "content": "Your legal moves: a1, b2, c3, d4, e5, f6, g7, h8"}]
    schedule = {0: "server_error", 1: "server_error", 2: "server_error", 4: "garbage"}

    def client(path):
        mock = MockModel(reply_fn=random_legal, schedule=schedule, seed=7, name="m")
        return ModelClient("mock/m", mock=mock, cache=ResponseCache(path), max_retries=2, backoff_base_s=0.0, backoff_max_s=0.0)

    async def ask_twice(model_client):
        request = model_client.request(messages)
        try:
            await model_client.complete(request)  # calls 0-2: fails for good (3 attempts), recorded as a failure
        except ModelCallError as failure:
            first = failure.kind
        second = await model_client.complete(request)  # call 3 in the original run
        return first, second.text

    original = asyncio.run(ask_twice(client(tmp_path / "a.jsonl")))
    cut = tmp_path / "b.jsonl"
    cut.write_text((tmp_path / "a.jsonl").read_text().splitlines()[0] + "\n")  # stopped after the failure
    resumed = asyncio.run(ask_twice(client(cut)))
    assert original[0] == resumed[0] == "server_error"
    assert resumed[1] == original[1] and original[1] in messages[0]["content"]
