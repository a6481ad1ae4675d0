"""How a model gives its move: free text (``text``), a function call (``tool``) or a structured-output object (``json``).

- ``text`` (the default): the reply is prose ending in ``MOVE: d3``, read by
  :func:`harness.prompting.moves.parse_reply` (tolerant, in stages).
- ``tool``: the request offers one function, :data:`TOOL_NAME` (``play_move``), whose one argument
  is the move (an enum of the legal moves when the prompt lists them) and requires a call
  (``tool_choice: "required"``). Read strictly: no call, a call to another function, arguments
  that are not a JSON object, no ``move`` string in them, or several ``play_move`` calls naming
  different moves are parse errors (an empty reply or a refusal without a call: ``empty_or_refusal``;
  cut off: ``truncated``); a well-formed call with a move that is not legal is an illegal move.
- ``json``: the request asks for ``{"reasoning": ..., "move": ...}`` by JSON Schema
  (``response_format``); the reply's whole text must be that object.

:func:`format_params` gives the request fields of a format; a :class:`MoveReader` reads a reply
(:meth:`MoveReader.read`: the text to record and the move or the failure) and answers a failed
attempt in the conversation (:meth:`MoveReader.followup`: for a tool call, one ``tool`` message per
call, as providers require). The recorded reply of a ``tool`` attempt is the arguments of its
``play_move`` call (else the reply's text), so the parse audit reads every format the same way.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from engine.layout import Layout
from engine.notation import NotationError, format_move, parse_move
from harness.play.decisions import Attempt, FailureKind, Message, ParsedMove, ParseFailure

MOVE_FORMATS = ("text", "tool", "json")
TOOL_NAME = "play_move"
SCHEMA_NAME = "othello_move"
_COORDINATE = re.compile(r"pass|[a-z]\d{1,2}", re.IGNORECASE)
_REFUSAL = re.compile(r"\b(?:i\s+(?:can(?:no|['\u2019])t|won['\u2019]?t|am\s+unable|refuse)|as\s+an\s+ai)\b", re.IGNORECASE)


class MoveFormatError(ValueError):
    """An unknown move format."""


def check_format(move_format: str) -> str:
    """``move_format`` if it is one of :data:`MOVE_FORMATS`, else a :class:`MoveFormatError` naming them."""
    if move_format not in MOVE_FORMATS:
        raise MoveFormatError(f"move format {move_format!r}: choose one of {', '.join(MOVE_FORMATS)}")
    return move_format


def move_schema(legal: Sequence[str] | None, reasoning: bool) -> dict[str, Any]:
    """The JSON Schema of a move object (``legal``: the enum of the move, when the prompt lists the legal moves)."""
    move: dict[str, Any] = {"type": "string", "description": "the move: column letter then row number (d3), or pass"}
    if legal:
        move["enum"] = list(legal)
    properties: dict[str, Any] = {"move": move}
    if reasoning:
        properties = {"reasoning": {"type": ["string", "null"], "description": "brief reasoning (optional)"}, "move": move}
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def format_params(move_format: str, legal: Sequence[str] | None) -> dict[str, Any]:
    """The request fields of a format: none for ``text``; the tool and a required call; the response schema."""
    if check_format(move_format) == "tool":
        function = {"name": TOOL_NAME, "description": "Play your move in the current position.", "parameters": move_schema(legal, False)}
        return {"tools": [{"type": "function", "function": function}], "tool_choice": "required"}
    if move_format == "json":
        schema = {"name": SCHEMA_NAME, "schema": move_schema(legal, True), "strict": True}
        return {"response_format": {"type": "json_schema", "json_schema": schema}}
    return {}


def answer_format(move_format: str, text_answer: str = "line") -> str:
    """The ``move.j2`` answer format of a move format (``text`` keeps the agent's own: ``line`` or ``json``)."""
    return text_answer if check_format(move_format) == "text" else move_format


# ---------------------------------------------------------------- reading


def tool_calls_of(meta: Any) -> list[dict[str, Any]]:
    """The tool calls of a response (``{"id", "name", "arguments"}``), none when it has none."""
    return list(getattr(meta, "tool_calls", None) or [])


def _no_answer(text: str, finish_reason: str | None, wanted: str) -> ParseFailure:
    """Why a reply without the call or object it should be (``wanted``: "a play_move call") gave no move."""
    if finish_reason == "length":
        return ParseFailure(FailureKind.TRUNCATED, f"the reply was cut off (length limit) before {wanted}")
    if not text.strip():
        return ParseFailure(FailureKind.EMPTY_OR_REFUSAL, f"the reply was empty, without {wanted}")
    if _REFUSAL.search(text):
        return ParseFailure(FailureKind.EMPTY_OR_REFUSAL, f"the reply declined to give a move, without {wanted}")
    return ParseFailure(FailureKind.PARSE_ERROR, f"the reply is free text, not {wanted}")


def _move_of(arguments: str, layout: Layout, source: str, where: str) -> ParsedMove | ParseFailure:
    """The move of a JSON object's ``move`` string (an off-board coordinate parses, with move None)."""
    try:
        value = json.loads(arguments)
    except json.JSONDecodeError as error:
        return ParseFailure(FailureKind.PARSE_ERROR, f"{where}: not JSON ({error.msg})")
    if not isinstance(value, dict):
        return ParseFailure(FailureKind.PARSE_ERROR, f"{where}: not a JSON object")
    token = value.get("move")
    if not isinstance(token, str) or not _COORDINATE.fullmatch(token.strip()):
        keys = ", ".join(map(str, value)) or "none"
        return ParseFailure(FailureKind.PARSE_ERROR, f'{where}: no "move" coordinate (keys: {keys})')
    notation = token.strip().lower()
    try:
        move: int | None = parse_move(notation, layout)
    except NotationError:
        move = None
    at = arguments.rfind(token)
    return ParsedMove(notation, move, source, (at, at + len(token)) if at != -1 else None)  # type: ignore[arg-type]


class MoveReader:
    """Reads one format's replies and answers its failed attempts; see the module docstring."""

    def __init__(self, move_format: str = "text") -> None:
        self.move_format = check_format(move_format)

    @property
    def structured(self) -> bool:
        """Whether replies are read by this reader (``tool``, ``json``) rather than the text parser."""
        return self.move_format != "text"

    def read(self, text: str | None, finish_reason: str | None, meta: Any, layout: Layout) -> tuple[str | None, ParsedMove | ParseFailure]:
        """(the reply to record, what was read from it)."""
        if self.move_format == "tool":
            return self._read_tool(text or "", finish_reason, tool_calls_of(meta), layout)
        if self.move_format == "json":
            body = (text or "").strip()
            if not body.startswith("{"):
                return text, _no_answer(body, finish_reason, "a JSON object")
            parsed = _move_of(body, layout, "structured", "the reply")
            if isinstance(parsed, ParsedMove) and parsed.span is not None:
                offset = (text or "").find(body)
                parsed = ParsedMove(parsed.notation, parsed.move, parsed.source, (parsed.span[0] + offset, parsed.span[1] + offset))
            return text, parsed
        raise MoveFormatError("text replies are read by harness.prompting.moves.parse_reply, not a MoveReader")

    def _read_tool(
        self, text: str, finish_reason: str | None, calls: list[dict[str, Any]], layout: Layout
    ) -> tuple[str | None, ParsedMove | ParseFailure]:
        if not calls:
            return text, _no_answer(text, finish_reason, f"a {TOOL_NAME} call")
        plays = [call for call in calls if call.get("name") == TOOL_NAME]
        if not plays:
            names = ", ".join(sorted({str(call.get("name")) for call in calls}))
            return text, ParseFailure(FailureKind.PARSE_ERROR, f"called {names} instead of {TOOL_NAME}")
        readings = [_move_of(str(call.get("arguments") or ""), layout, "tool", f"the {TOOL_NAME} arguments") for call in plays]
        recorded = str(plays[-1].get("arguments") or "")
        failure = next((reading for reading in readings if isinstance(reading, ParseFailure)), None)
        if failure is not None:
            return recorded, failure
        if len({reading.notation for reading in readings}) > 1:  # type: ignore[union-attr]
            named = ", ".join(reading.notation for reading in readings)  # type: ignore[union-attr]
            return recorded, ParseFailure(FailureKind.PARSE_ERROR, f"{len(plays)} {TOOL_NAME} calls name different moves ({named})")
        return recorded, readings[-1]

    def followup(self, attempt: Attempt, feedback: str) -> list[Message]:
        """The messages that answer a failed attempt: the model's reply as it was, then the feedback."""
        calls = tool_calls_of(attempt.meta) if self.move_format == "tool" else []
        if calls:
            content = getattr(attempt.meta, "text", None) or None
            assistant = {"role": "assistant", "content": content, "tool_calls": [_wire_call(call) for call in calls]}
            return [assistant, *({"role": "tool", "tool_call_id": call.get("id") or "", "content": feedback} for call in calls)]
        messages: list[Message] = [{"role": "assistant", "content": attempt.text}] if attempt.text else []
        return [*messages, {"role": "user", "content": feedback}]

    def instruction(self, legal: str) -> str:
        """What the re-ask asks for in this format."""
        example = legal.split(", ")[0]
        if self.move_format == "tool":
            return f'Call {TOOL_NAME} once with one legal move, e.g. {{"move": "{example}"}}.'
        if self.move_format == "json":
            return f'Reply with a JSON object only, e.g. {{"move": "{example}"}}.'
        return f"Reply with one legal move, e.g. MOVE: {example}."


def _wire_call(call: Mapping[str, Any]) -> dict[str, Any]:
    """A recorded tool call as the chat API's assistant message carries it."""
    return {
        "id": call.get("id") or "",
        "type": "function",
        "function": {"name": call.get("name"), "arguments": call.get("arguments") or ""},
    }


def legal_notations(legal_moves: Sequence[int], layout: Layout) -> list[str]:
    """The legal moves as the schema's enum (``d3``, ``pass``)."""
    return [format_move(move, layout) for move in legal_moves]
