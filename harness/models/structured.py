"""An offline model's text reply in the shape a request asked for: a function call, or a structured-output object.

The offline models (``mock/...``, scripts) answer in text. A request that offers tools
(``tools``, a move as a function call) gets the reply's last coordinate (or ``pass``) as a call
to the first offered function with ``{"move": ...}``; a request with a JSON Schema
``response_format`` gets ``{"move": ...}`` as its text. A reply with no coordinate (empty, garbage,
a refusal, a cut-off reply) stays text without a call: the failure a careless model makes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from harness.models.messages import ModelResponse
from harness.models.replies import MockReply

_MOVE = re.compile(r"(?<![a-z0-9])(pass|[a-z]\d{1,2})(?![a-z0-9])", re.IGNORECASE)


def offered_function(params: Mapping[str, Any]) -> str | None:
    """The name of the first function a request offers, None when it offers none."""
    for tool in params.get("tools") or ():
        name = (tool.get("function") or {}).get("name") if isinstance(tool, Mapping) else None
        if name:
            return str(name)
    return None


def wants_json(params: Mapping[str, Any]) -> bool:
    """Whether a request asks for a structured-output object (a JSON Schema or JSON object response format)."""
    shape = params.get("response_format")
    return isinstance(shape, Mapping) and shape.get("type") in ("json_schema", "json_object")


def shaped_reply(text: str, finish_reason: str | None, params: Mapping[str, Any]) -> tuple[str, list[dict[str, Any]] | None]:
    """(text, tool calls) of an offline reply for a request's shape (module docstring); text unchanged for plain requests."""
    function, structured = offered_function(params), wants_json(params)
    if function is None and not structured:
        return text, None
    found = _MOVE.findall(text or "") if finish_reason != "length" else []
    if not found:
        return text, None
    arguments = json.dumps({"move": found[-1].lower()})
    if function is not None:
        return "", [{"id": "call_0", "name": function, "arguments": arguments}]
    return arguments, None


def offline_response(model: str, reply: MockReply | ModelResponse, params: Mapping[str, Any]) -> ModelResponse:
    """An offline model's reply as a :class:`ModelResponse`, in the shape the request asked for (unpriced); a model
    object that answers with a whole :class:`ModelResponse` (a bridge to another model API) is taken as it is."""
    if isinstance(reply, ModelResponse):
        return reply.model_copy(update={"model": model})
    text, calls = shaped_reply(reply.text, reply.finish_reason, params)
    return ModelResponse(
        model=model,
        text=text,
        tool_calls=calls,
        finish_reason="tool_calls" if calls else reply.finish_reason,
        prompt_tokens=reply.prompt_tokens,
        completion_tokens=reply.completion_tokens,
        cost_usd=0.0,
        cost_note="mock model",
    )
