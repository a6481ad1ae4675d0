"""The stub server's answers in the form a request asks for, with the faults of calls and objects."""

from __future__ import annotations

import json

import pytest

from harness.prompting.move_formats import format_params
from harness.testing.faults import FAULT_KINDS, STRUCTURED_KINDS, FaultSpec, FaultSpecError
from harness.testing.stub_replies import assistant_message

TOOL = {"messages": [], **format_params("tool", ["d3", "c4"])}
JSON = {"messages": [], **format_params("json", ["d3", "c4"])}


def _calls(message):
    return [(call["function"]["name"], call["function"]["arguments"]) for call in message.get("tool_calls") or ()]


def test_a_tool_request_gets_a_call_and_a_json_request_an_object_and_plain_text_stays_as_it_is():
    message, reason = assistant_message(TOOL, "MOVE: d3")
    assert reason == "tool_calls" and _calls(message) == [("play_move", '{"move": "d3"}')] and message["content"] is None
    assert assistant_message(JSON, "d3") == ({"role": "assistant", "content": '{"move": "d3"}'}, "stop")
    assert assistant_message({"messages": []}, "I play d3\nMOVE: d3") == ({"role": "assistant", "content": "I play d3\nMOVE: d3"}, "stop")
    assert assistant_message(TOOL, "I think", "length") == ({"role": "assistant", "content": "I think"}, "length")


@pytest.mark.parametrize(
    ("shape", "calls", "content"),
    [
        ("no_call", [], "Looking at the board, I would play d3 here."),
        ("other_function", [("resign", "{}")], None),
        ("bad_arguments", [("play_move", '{"move": "d3')], None),
        ("wrong_key", [("play_move", '{"square": "d3"}')], None),
        ("extra_call", [("play_move", '{"move": "d3"}'), ("play_move", '{"move": "c4"}')], None),
    ],
)
def test_each_fault_of_a_call(shape, calls, content):
    message, _ = assistant_message(TOOL, "d3", "stop", shape, "c4")
    assert _calls(message) == calls and message["content"] == content


def test_the_faults_of_an_object_and_a_careless_text_reply():
    assert assistant_message(JSON, "d3", "stop", "bad_arguments")[0]["content"] == '{"move": d3}'
    assert json.loads(assistant_message(JSON, "d3", "stop", "wrong_key")[0]["content"]) == {"square": "d3"}
    assert assistant_message({"messages": []}, "d3", "stop", "extra_call", "c4")[0]["content"] == "MOVE: d3\nMOVE: c4"


def test_all_spreads_a_rate_over_every_kind_and_an_unknown_kind_names_the_known_ones():
    spec = FaultSpec.parse("0.18:all")
    assert [kind for kind, _ in spec.rates] == [*FAULT_KINDS, *STRUCTURED_KINDS] and abs(spec.total - 0.18) < 1e-9
    assert [kind for kind, _ in FaultSpec.parse("0.2").rates] == list(FAULT_KINDS)  # a bare rate: as before
    with pytest.raises(FaultSpecError, match="no_call, other_function, bad_arguments, noise, wrong_key, extra_call"):
        FaultSpec.parse("0.2:sulk")
