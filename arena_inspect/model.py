"""The arena's model calls made through Inspect's model API: chat messages and request fields in, a ModelResponse out.

:class:`InspectModel` is the object the arena's :class:`~harness.models.client.ModelClient` calls in
place of a provider (``acomplete(messages, params)``). Each call becomes one
``Model.generate`` of Inspect's active model (so any provider Inspect supports, with its retries,
limits and cost tracking, and its transcript of every call): the system, user, assistant (with
its tool calls) and tool messages; ``temperature``, ``max_tokens``, ``top_p``, ``seed``,
``reasoning_effort``; the ``play_move`` tool with a required call (Inspect's ``any``); a JSON
Schema ``response_format`` as Inspect's ``response_schema``. The output comes back as the arena's
:class:`~harness.models.messages.ModelResponse`: its text, its tool calls (arguments as JSON text;
arguments Inspect could not parse are kept as the raw text it reports, so the move reader
classifies them), the stop reason (``max_tokens``/``model_length`` as ``length``), usage, reasoning
tokens and reasoning text.

The arena plays in a worker thread with an event loop of its own (its game loop is synchronous
at the top); each generate is handed to the solver's event loop, where Inspect's context lives,
and awaited from the worker's loop.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    ContentReasoning,
    GenerateConfig,
    Model,
    ModelOutput,
    ResponseSchema,
)
from inspect_ai.tool import ToolCall, ToolFunction, ToolInfo, ToolParams
from inspect_ai.util import JSONSchema

from harness.models.messages import ModelResponse

CONFIG_FIELDS = ("temperature", "max_tokens", "top_p", "seed", "reasoning_effort")
LENGTH_REASONS = ("max_tokens", "model_length")


def chat_messages(messages: Sequence[Mapping[str, Any]]) -> list[ChatMessage]:
    """The arena's chat messages as Inspect's."""
    converted: list[ChatMessage] = []
    for message in messages:
        role, content = message.get("role"), message.get("content") or ""
        if role == "system":
            converted.append(ChatMessageSystem(content=content))
        elif role == "assistant":
            calls = [_tool_call(call) for call in message.get("tool_calls") or ()]
            converted.append(ChatMessageAssistant(content=content, tool_calls=calls or None))
        elif role == "tool":
            converted.append(ChatMessageTool(content=content, tool_call_id=message.get("tool_call_id")))
        else:
            converted.append(ChatMessageUser(content=content))
    return converted


def _tool_call(call: Mapping[str, Any]) -> ToolCall:
    function = call.get("function") or {}
    raw = function.get("arguments") or "{}"
    try:
        arguments, error = json.loads(raw), None
    except ValueError as exc:
        arguments, error = {}, f"not JSON: {exc}"
    return ToolCall(id=call.get("id") or "", function=function.get("name") or "", arguments=arguments, parse_error=error)


def request_fields(params: Mapping[str, Any]) -> tuple[list[ToolInfo], Any, GenerateConfig]:
    """(tools, tool choice, config) of a request's parameters."""
    tools = [_tool_info(tool["function"]) for tool in params.get("tools") or ()]
    choice = params.get("tool_choice")
    tool_choice: Any = None
    if tools:
        tool_choice = (
            "any" if choice == "required" else ToolFunction(name=choice["function"]["name"]) if isinstance(choice, dict) else "auto"
        )
    config: dict[str, Any] = {name: params[name] for name in CONFIG_FIELDS if params.get(name) is not None}
    shape = params.get("response_format")
    if isinstance(shape, Mapping) and shape.get("type") == "json_schema":
        schema = shape["json_schema"]
        config["response_schema"] = ResponseSchema(
            name=schema["name"], json_schema=JSONSchema.model_validate(schema["schema"]), strict=schema.get("strict")
        )
    return tools, tool_choice, GenerateConfig(**config)


def _tool_info(function: Mapping[str, Any]) -> ToolInfo:
    return ToolInfo(
        name=function["name"],
        description=function.get("description") or function["name"],
        parameters=ToolParams.model_validate(function["parameters"]),
    )


def model_response(model: str, output: ModelOutput) -> ModelResponse:
    """Inspect's output as the arena's response (cost unknown here: Inspect tracks it in its own log)."""
    choice = output.choices[0] if output.choices else None
    message = choice.message if choice is not None else None
    calls = [
        {"id": call.id, "name": call.function, "arguments": _arguments(call)} for call in (message.tool_calls or []) if message is not None
    ] or None
    reasoning = _reasoning(message)
    reason = choice.stop_reason if choice is not None else None
    usage = output.usage
    return ModelResponse(
        model=model,
        text=output.completion or "",
        finish_reason="length" if reason in LENGTH_REASONS else "tool_calls" if calls else reason,
        prompt_tokens=usage.input_tokens if usage else 0,
        completion_tokens=usage.output_tokens if usage else 0,
        cached_tokens=(usage.input_tokens_cache_read or 0) if usage else 0,
        cost_note="priced by Inspect (its log)",
        tool_calls=calls,
        reasoning=reasoning,
        reasoning_tokens=(usage.reasoning_tokens or 0) if usage else 0,
    )


def _arguments(call: ToolCall) -> str:
    """A call's arguments as JSON text; the model's own text when Inspect could not parse it (a parse error)."""
    if call.parse_error:
        return f"<unparsed arguments: {call.parse_error}>"
    return json.dumps(call.arguments)


def _reasoning(message: ChatMessageAssistant | None) -> str | None:
    if message is None or isinstance(message.content, str):
        return None
    parts = [part.reasoning for part in message.content if isinstance(part, ContentReasoning) and part.reasoning]
    return "\n".join(parts) or None


class InspectModel:
    """The arena client's model: every call one ``generate`` of an Inspect model, on the solver's event loop."""

    def __init__(self, model: Model, loop: asyncio.AbstractEventLoop) -> None:
        self.model, self.loop = model, loop
        self.calls = 0

    async def acomplete(self, messages: Sequence[Mapping[str, Any]], params: Mapping[str, Any] | None = None) -> ModelResponse:
        """One generate (raised errors are the client's to classify and retry)."""
        tools, choice, config = request_fields(params or {})
        self.calls += 1
        call = self.model.generate(chat_messages(messages), tools=tools, tool_choice=choice, config=config)
        output = await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(call, self.loop))
        return model_response(str(self.model), output)
