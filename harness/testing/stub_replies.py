"""The stub server's assistant message: free text, a function call or a structured-output object, as the request asks.

A request that offers tools gets its move as a call to the first offered function
(``{"move": ...}``, ``finish_reason`` ``tool_calls``); one with a JSON Schema
``response_format`` gets ``{"move": ...}`` as its text; any other gets the text as it is.
``shape`` puts a fault (:mod:`harness.testing.faults`) into the answer, in the request's
form: ``no_call``, ``other_function``, ``bad_arguments`` (for a plain text request these
answer normally: they are faults of the structured forms), ``noise``, ``wrong_key``,
``extra_call`` (``other`` is the second, different move of an ``extra_call``).
"""

from __future__ import annotations

import json
import re
from typing import Any

from harness.models.structured import offered_function, wants_json

OTHER_FUNCTION = "resign"
_MOVE = re.compile(r"(?<![a-z0-9])(pass|[a-z]\d{1,2})(?![a-z0-9])", re.IGNORECASE)


def assistant_message(
    request: dict[str, Any], text: str, reason: str = "stop", shape: str = "move", other: str = "pass"
) -> tuple[dict[str, Any], str]:
    """(the assistant message, its finish reason) answering ``request`` with the move of ``text`` (its last coordinate)
    in the form the request and ``shape`` ask; a plain request answered normally, or a cut-off reply, gets ``text``."""
    function, form = offered_function(request), "json" if wants_json(request) else "text"
    found = _MOVE.findall(text or "")
    if (function is None and form == "text" and shape == "move") or reason == "length" or not found:
        return {"role": "assistant", "content": text}, reason  # as it is; or nothing to call with (garbage, empty)
    move = found[-1].lower()
    if function is not None:
        return _tool_message(function, move, shape, other)
    return {"role": "assistant", "content": _content(form, move, shape, other)}, "stop"


def _call(name: str, arguments: str, number: int = 0) -> dict[str, Any]:
    return {"id": f"call_{number}", "type": "function", "function": {"name": name, "arguments": arguments}}


def _tool_message(function: str, move: str, shape: str, other: str) -> tuple[dict[str, Any], str]:
    if shape in ("no_call", "noise"):
        return {"role": "assistant", "content": f"Looking at the board, I would play {move} here."}, "stop"
    calls = {
        "other_function": [_call(OTHER_FUNCTION, "{}")],
        "bad_arguments": [_call(function, '{"move": "' + move)],
        "wrong_key": [_call(function, json.dumps({"square": move}))],
        "extra_call": [_call(function, json.dumps({"move": move})), _call(function, json.dumps({"move": other}), 1)],
    }.get(shape, [_call(function, json.dumps({"move": move}))])
    return {"role": "assistant", "content": None, "tool_calls": calls}, "tool_calls"


def _content(form: str, move: str, shape: str, other: str) -> str:
    if form == "json":
        return {
            "no_call": f"I would play {move}.",
            "noise": f"Looking at the board, I would play {move} here.",
            "bad_arguments": '{"move": ' + move + "}",
            "wrong_key": json.dumps({"square": move}),
            "extra_call": json.dumps({"move": move}) + "\n" + json.dumps({"move": other}),
        }.get(shape, json.dumps({"move": move}))
    return {
        "noise": f"Looking at the board, {move} and {other} both flip discs; I would rather not say which.",
        "wrong_key": json.dumps({"square": move}),
        "extra_call": f"MOVE: {move}\nMOVE: {other}",
    }.get(shape, move)
