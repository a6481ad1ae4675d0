"""Replies with function calls and reasoning, as both model paths read them: tool calls kept as written, reasoning
text, reasoning tokens priced at the model's reasoning rate (its output rate when it has none)."""

from __future__ import annotations

import json
from types import SimpleNamespace

from harness.models.openai_direct import _response, reasoning_cost, response_from_litellm


def test_the_direct_path_reads_tool_calls_reasoning_and_reasoning_tokens():
    body = {
        "choices": [
            {
                "finish_reason": "tool_calls",
                "message": {
                    "content": None,
                    "reasoning_content": "corners first",
                    "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "play_move", "arguments": '{"move": "d3"'}}],
                },
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 30, "completion_tokens_details": {"reasoning_tokens": 25}},
    }
    response = _response("openai/stub", json.dumps(body).encode())
    assert response.tool_calls == [{"id": "c1", "name": "play_move", "arguments": '{"move": "d3"'}]  # as written, not JSON
    assert (response.text, response.reasoning, response.reasoning_tokens) == ("", "corners first", 25)


def test_litellms_reply_is_read_alike_and_its_reasoning_tokens_priced_at_the_reasoning_rate():
    call = SimpleNamespace(id="c1", function=SimpleNamespace(name="play_move", arguments='{"move": "e6"}'))
    message = SimpleNamespace(content="", tool_calls=[call], reasoning_content="the edge is safe")
    usage = SimpleNamespace(prompt_tokens=5, completion_tokens=40, completion_tokens_details=SimpleNamespace(reasoning_tokens=32))
    raw = SimpleNamespace(choices=[SimpleNamespace(message=message, finish_reason="tool_calls")], usage=usage)
    prices = {"m-reasoner": {"output_cost_per_token": 1e-5, "output_cost_per_reasoning_token": 2e-5}}
    litellm = SimpleNamespace(model_cost=prices, completion_cost=lambda completion_response: 0.001)
    response = response_from_litellm(litellm, "openai/m-reasoner", raw)
    assert response.tool_calls == [{"id": "c1", "name": "play_move", "arguments": '{"move": "e6"}'}]
    assert (response.reasoning, response.reasoning_tokens, response.cost_usd) == ("the edge is safe", 32, 0.001)
    assert response.reasoning_cost_usd == 32 * 2e-5
    assert reasoning_cost({"m": {"output_cost_per_token": 3e-6}}, "m", 10) == 3e-5 and reasoning_cost({}, "x", 10) == 0.0
