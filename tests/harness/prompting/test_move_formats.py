"""Moves as function calls and structured-output objects: request fields, strict reading, failures by kind, re-asks."""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace

import pytest

from harness.models.structured import shaped_reply
from harness.play.decisions import FailureKind, ParsedMove, ParseFailure
from harness.prompting.move_formats import TOOL_NAME, MoveFormatError, MoveReader, format_params
from harness.prompting.moves import MoveAsker
from tests.harness.prompting.moves_helpers import LAYOUT, OBS, PROMPT


def _reply(text: str = "", calls: list[dict] | None = None) -> SimpleNamespace:
    return SimpleNamespace(text=text, tool_calls=calls)


def _call(arguments: str, name: str = TOOL_NAME, number: int = 0) -> dict:
    return {"id": f"call_{number}", "name": name, "arguments": arguments}


def _tool(text: str = "", calls: list[dict] | None = None, finish: str | None = "tool_calls"):
    return MoveReader("tool").read(text, finish, _reply(text, calls), LAYOUT)


def test_the_tool_format_offers_one_required_function_with_the_legal_moves_as_its_enum():
    params = format_params("tool", ["d3", "c4"])
    (tool,) = params["tools"]
    assert params["tool_choice"] == "required" and tool["function"]["name"] == TOOL_NAME
    assert tool["function"]["parameters"]["properties"]["move"]["enum"] == ["d3", "c4"]
    assert "enum" not in format_params("tool", None)["tools"][0]["function"]["parameters"]["properties"]["move"]


def test_the_json_format_asks_for_a_move_object_by_json_schema_with_an_optional_reasoning_field():
    shape = format_params("json", ["d3"])["response_format"]
    schema = shape["json_schema"]["schema"]
    assert shape["type"] == "json_schema" and schema["properties"]["move"]["enum"] == ["d3"]
    assert schema["properties"]["reasoning"]["type"] == ["string", "null"] and format_params("text", ["d3"]) == {}
    with pytest.raises(MoveFormatError, match="choose one of text, tool, json"):
        format_params("xml", None)


def test_a_well_formed_call_is_read_and_recorded_as_its_arguments():
    recorded, parsed = _tool(calls=[_call('{"move": "D3"}')])
    assert recorded == '{"move": "D3"}' and isinstance(parsed, ParsedMove)
    assert (parsed.notation, parsed.source, recorded[slice(*parsed.span)]) == ("d3", "tool", "D3")
    assert parsed.move is not None


@pytest.mark.parametrize(
    ("text", "calls", "finish", "kind", "words"),
    [
        ("I would play d3.", None, "stop", FailureKind.PARSE_ERROR, "free text, not a play_move call"),
        ("", None, "stop", FailureKind.EMPTY_OR_REFUSAL, "empty"),
        ("I can't help with that.", None, "stop", FailureKind.EMPTY_OR_REFUSAL, "declined"),
        ("I think", None, "length", FailureKind.TRUNCATED, "cut off"),
        ("", [_call("{}", name="resign")], "tool_calls", FailureKind.PARSE_ERROR, "called resign instead of play_move"),
        ("", [_call('{"move": "d3"')], "tool_calls", FailureKind.PARSE_ERROR, "not JSON"),
        ("", [_call('["d3"]')], "tool_calls", FailureKind.PARSE_ERROR, "not a JSON object"),
        ("", [_call('{"square": "d3"}')], "tool_calls", FailureKind.PARSE_ERROR, 'no "move" coordinate (keys: square)'),
        ("", [_call('{"move": "d3"}'), _call('{"move": "c4"}', number=1)], "tool_calls", FailureKind.PARSE_ERROR, "different moves"),
    ],
)
def test_every_malformed_tool_reply_is_a_failure_of_its_kind(text, calls, finish, kind, words):
    _, parsed = _tool(text, calls, finish)
    assert isinstance(parsed, ParseFailure) and parsed.kind == kind and words in parsed.detail


def test_an_extra_call_to_another_function_beside_play_move_is_ignored_and_two_calls_of_one_move_agree():
    _, parsed = _tool(calls=[_call("{}", name="think"), _call('{"move": "e6"}', number=1)])
    assert isinstance(parsed, ParsedMove) and parsed.notation == "e6"
    _, twice = _tool(calls=[_call('{"move": "e6"}'), _call('{"move": "E6"}', number=1)])
    assert isinstance(twice, ParsedMove) and twice.notation == "e6"


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("I would play d3.", FailureKind.PARSE_ERROR),
        ('{"move": d3}', FailureKind.PARSE_ERROR),
        ('{"square": "d3"}', FailureKind.PARSE_ERROR),
        ('{"move": "d3"}\n{"move": "c4"}', FailureKind.PARSE_ERROR),
        ("", FailureKind.EMPTY_OR_REFUSAL),
    ],
)
def test_a_json_reply_must_be_one_move_object(text, kind):
    _, parsed = MoveReader("json").read(text, "stop", _reply(text), LAYOUT)
    assert isinstance(parsed, ParseFailure) and parsed.kind == kind


def test_a_json_object_is_read_with_its_reasoning_and_its_span():
    text = ' {"reasoning": "corner later", "move": "c4"}'
    recorded, parsed = MoveReader("json").read(text, "stop", _reply(text), LAYOUT)
    assert recorded == text and isinstance(parsed, ParsedMove) and text[slice(*parsed.span)] == "c4"
    assert parsed.source == "structured"


def test_a_failed_call_is_answered_by_one_tool_message_per_call_and_an_illegal_move_is_never_played():
    replies = iter(
        [
            ("", "tool_calls", _reply("", [_call("{}", name="resign")])),
            ("", "tool_calls", _reply("", [_call('{"move": "a1"}', number=1)])),
            ("", "tool_calls", _reply("", [_call('{"move": "d6"}', number=2)])),
        ]
    )
    seen: list[list[dict]] = []

    async def ask(messages):
        seen.append(messages)
        return next(replies)

    decision = asyncio.run(MoveAsker(ask, max_retries=2, reader=MoveReader("tool")).decide(OBS, PROMPT))
    assert decision.move is not None and [a.failure_kind for a in decision.attempts] == [
        FailureKind.PARSE_ERROR,
        FailureKind.ILLEGAL_MOVE,
        None,
    ]
    second = seen[1]
    assert second[1]["tool_calls"][0]["function"]["name"] == "resign" and second[2]["role"] == "tool"
    assert second[2]["tool_call_id"] == "call_0" and "Call play_move once" in second[2]["content"]
    assert decision.move == decision.attempts[-1].parsed.move and decision.attempts[1].parsed.notation == "a1"
    assert "is not legal here" in seen[2][-1]["content"] and seen[2][-1]["tool_call_id"] == "call_1"


def test_an_offline_reply_takes_the_shape_the_request_asks_for():
    tools = format_params("tool", ["d3"])
    assert shaped_reply("MOVE: d3", "stop", tools) == ("", [{"id": "call_0", "name": TOOL_NAME, "arguments": '{"move": "d3"}'}])
    assert shaped_reply("MOVE: d3", "stop", format_params("json", None)) == (json.dumps({"move": "d3"}), None)
    assert shaped_reply("~~##", "stop", tools) == ("~~##", None)  # nothing to call with: a missing call
    assert shaped_reply("my move is d", "length", tools) == ("my move is d", None)
    assert shaped_reply("MOVE: d3", "stop", {}) == ("MOVE: d3", None)
