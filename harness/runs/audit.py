"""The parse audit: every recorded model reply re-read by an independent, strict reader (``arena audit RUN...``).

The harness's reply parser (:mod:`harness.prompting.moves`) is tolerant: it takes
the last JSON ``move``, else the last answer-like line anywhere in the reply, else
a coordinate on the last line. A tolerant parser can quietly take a move the model
did not answer with, and a harness can play a move that no reply named; results
built on such moves are wrong without anyone seeing it. This module shares no code
with that parser. Its reading of a reply:

- **The final answer** is the move of the reply's only JSON object with a ``move``
  key, else the one coordinate (or ``pass``) on the last non-empty line (code
  fences ignored). Two JSON answers, a last line with no coordinate or with
  several: no final answer.
- **Answer lines** are lines that are a move and nothing else (``d3``, ``**D3**``)
  or an answer label and a move (``MOVE: d3``, ``Final answer - d3``, ``I play d3``).

Each model call of a move decision (a call with a ``ply``) that the record says a
move was read from is checked, and each ply of a recorded game against its calls.
The findings:

- ``not_final_answer``: the recorded move is not the reply's final answer (it was
  taken from an earlier line, from prose, or the reply has no final answer), or the
  recorded place (``parse_span``) is outside the final answer.
- ``several_answers``: the reply gives conflicting answers: two JSON move objects,
  or answer lines (and the final answer) naming different moves.
- ``prompt_echo``: the reply repeats the legal-move list of the prompt it answers
  (two or more moves, in the prompt's order): a move read from it is an echo.
- ``unrecorded_substitution``: a record's move that the reply does not name, with no
  failure recorded; or a played move that differs from the move its accepted reply
  named (or, with no accepted reply, that no failure explains).

Calls without a move read (failures the record counts) and calls outside moves
(beliefs, strategies, code) are not findings. :func:`harness_version` is the short
hash of the prompt templates and the parser's source that results should carry.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine import make_env
from engine.notation import format_move
from harness.prompting.renderer import DEFAULT_PROMPTS_DIR
from harness.records.provenance import harness_version
from harness.records.transcript import CALLS_FILE, GAMES_FILE, TranscriptError
from harness.runs.replay import llm_config, run_kind

FINDING_KINDS = ("not_final_answer", "several_answers", "prompt_echo", "unrecorded_substitution")
EXCERPT_CHARS = 70

# A coordinate (one letter, one or two digits) or "pass", not inside a longer word or number.
_COORD = re.compile(r"(?<![A-Za-z0-9])(?:pass|[A-Za-z][0-9]{1,2})(?![A-Za-z0-9])", re.IGNORECASE)
_DECORATION = " \t*_`>#\"'.,;:!()[]-"
_LABEL = re.compile(
    r"^(?:(?:my|the)\s+)?(?:final\s+)?(?:answer|move|choice|chosen\s+move|best\s+move|decision)\s*(?:is|[:=\-\u2013\u2014])?$"
    r"|^i\s+(?:play|choose|pick|will\s+play)$",
    re.IGNORECASE,
)
_LEGAL_LINE = re.compile(r"legal\s+moves?\b[^:\n]*:(?P<moves>[^\n]*)", re.IGNORECASE)


# ------------------------------------------------------------------------------ the strict reader

@dataclass(frozen=True)
class StrictReading:
    """What the strict reader makes of one reply."""

    final: str | None  # the final answer (lower case), None when there is none
    region: tuple[int, int] | None  # where the final answer lies: its JSON object or its last line
    json_answers: tuple[str, ...]  # the move of every JSON object with a move key, in order
    answer_lines: tuple[str, ...]  # the move of every answer line, in order
    problem: str | None  # why there is no final answer


def coordinates(text: str) -> list[str]:
    """Every coordinate or ``pass`` in ``text``, lower case, in order."""
    return [token.lower() for token in _COORD.findall(text)]


def _json_objects(text: str) -> list[tuple[dict[str, Any], int, int]]:
    decoder, found, at = json.JSONDecoder(), [], text.find("{")
    while at != -1:
        try:
            value, end = decoder.raw_decode(text, at)
        except ValueError:
            at = text.find("{", at + 1)
            continue
        if isinstance(value, dict):
            found.append((value, at, end))
        at = text.find("{", end)
    return found


def _json_move(value: dict[str, Any]) -> str | None:
    for key, item in value.items():
        if str(key).strip().lower() == "move":
            return str(item).strip().lower() if item is not None else ""
    return None


def _line_spans(text: str) -> list[tuple[int, int]]:
    spans, at = [], 0
    for raw in text.splitlines(keepends=True):
        content = raw.rstrip("\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
        spans.append((at, at + len(content)))
        at += len(raw)
    return spans


def _answer_line(line: str) -> str | None:
    """The move of an answer line (a move alone, or an answer label and a move), else None."""
    tokens = list(_COORD.finditer(line))
    if len(tokens) != 1:
        return None
    before = line[:tokens[0].start()].strip(_DECORATION)
    after = line[tokens[0].end():].strip(_DECORATION)
    if after or (before and not _LABEL.match(before)):
        return None
    return tokens[0].group(0).lower()


def strict_read(reply: str) -> StrictReading:
    """The strict reading of a reply (see the module docstring)."""
    objects = [(move, start, end) for value, start, end in _json_objects(reply) if (move := _json_move(value)) is not None]
    json_answers = tuple(move for move, _, _ in objects)
    lines = [(start, end) for start, end in _line_spans(reply) if reply[start:end].strip(" \t`")]
    answer_lines = tuple(move for start, end in lines if (move := _answer_line(reply[start:end])) is not None)
    if len(objects) > 1:
        return StrictReading(None, None, json_answers, answer_lines, f"{len(objects)} JSON objects with a move")
    if objects:
        move, start, end = objects[0]
        valid = len(coordinates(move)) == 1 and coordinates(move)[0] == move
        return StrictReading(move if valid else None, (start, end), json_answers, answer_lines,
                             None if valid else f"the JSON move {move!r} is not a coordinate")
    if not lines:
        return StrictReading(None, None, json_answers, answer_lines, "the reply is empty")
    start, end = lines[-1]
    tokens = coordinates(reply[start:end])
    if len(tokens) == 1:
        return StrictReading(tokens[0], (start, end), json_answers, answer_lines, None)
    what = "no move" if not tokens else f"{len(tokens)} moves ({', '.join(tokens)})"
    return StrictReading(None, None, json_answers, answer_lines, f"the last line names {what}")


def prompt_legal_list(messages: Sequence[dict[str, Any]]) -> list[str]:
    """The legal moves listed in the last user message a reply answers (``Legal moves: ...``), else []."""
    for message in reversed(messages):
        if message.get("role") == "user":
            lines = _LEGAL_LINE.findall(str(message.get("content") or ""))
            return coordinates(lines[-1]) if lines else []
    return []


def _contains_run(tokens: Sequence[str], run: Sequence[str]) -> bool:
    return any(list(tokens[i:i + len(run)]) == list(run) for i in range(len(tokens) - len(run) + 1))


# ------------------------------------------------------------------------------ auditing records

@dataclass(frozen=True)
class AuditFinding:
    call_index: int | None
    game: str  # "adapt game 3", "env 4 pairing 0 game 1"
    ply: int | None
    kind: str
    message: str
    excerpt: str

    def describe(self) -> str:
        call = f"call {self.call_index}" if self.call_index is not None else "game record"
        ply = f", ply {self.ply}" if self.ply is not None else ""
        return f"{call} ({self.game}{ply}): {self.kind}: {self.message}" + (f" | {self.excerpt}" if self.excerpt else "")


@dataclass
class AuditReport:
    run_dir: Path
    kind: str  # "llm" or "tournament"
    calls: int = 0  # move calls with a move read, checked
    findings: list[AuditFinding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.findings

    def summary(self) -> str:
        head = f"{self.run_dir}: {self.calls} replies audited, {len(self.findings)} finding(s)"
        return "\n".join([head, *(f"  {finding.describe()}" for finding in self.findings)])


def excerpt(text: str, around: tuple[int, int] | None = None) -> str:
    """A short one-line excerpt of ``text`` (around a span when given)."""
    if around is not None:
        start = max(0, around[0] - EXCERPT_CHARS // 2)
        text = text[start:start + EXCERPT_CHARS]
    flat = " ".join(text.split())
    return json.dumps(flat if len(flat) <= EXCERPT_CHARS else flat[:EXCERPT_CHARS - 3] + "...", ensure_ascii=False)


def audit_call(call: dict[str, Any], game: str) -> list[AuditFinding]:
    """The findings on one call record (a dict of ``calls.jsonl``); none for calls that read no move."""
    reply, recorded = call.get("reply"), call.get("parsed_move")
    if call.get("ply") is None or not isinstance(reply, str) or not recorded:
        return []
    recorded = str(recorded).lower()
    index, ply = call.get("call_index"), call.get("ply")

    def finding(kind: str, message: str, around: tuple[int, int] | None = None) -> AuditFinding:
        return AuditFinding(index, game, ply, kind, message, excerpt(reply, around))

    reading, found = strict_read(reply), []
    named = coordinates(reply)
    if recorded not in named:
        if not call.get("failure_kind"):
            found.append(finding("unrecorded_substitution", f"the record's move {recorded} is not in the reply"
                                 f" and no failure is recorded"))
    elif reading.final is None:
        if len(reading.json_answers) < 2:  # several JSON answers are reported once, below
            found.append(finding("not_final_answer", f"{recorded} was taken from a reply with no final answer ({reading.problem})"))
    elif reading.final != recorded:
        found.append(finding("not_final_answer", f"{recorded} was taken, the final answer is {reading.final}"))
    else:
        span = call.get("parse_span")
        if span is not None and reading.region is not None:
            start, end = int(span[0]), int(span[1])
            if not (reading.region[0] <= start <= end <= reading.region[1]):
                found.append(finding("not_final_answer", f"{recorded} was read at {start}-{end}, outside the final answer",
                                     (start, end)))
            elif coordinates(reply[start:end]) != [recorded]:
                found.append(finding("unrecorded_substitution", f"the recorded place {start}-{end} does not name {recorded}",
                                     (start, end)))
    answers = [*reading.json_answers, *reading.answer_lines, *([reading.final] if reading.final else [])]
    if len(reading.json_answers) > 1:
        found.append(finding("several_answers", f"{len(reading.json_answers)} JSON answers: {', '.join(reading.json_answers)}"))
    elif len(set(answers)) > 1:
        found.append(finding("several_answers", f"the reply answers {', '.join(dict.fromkeys(answers))}"))
    legal = prompt_legal_list(call.get("messages") or [])
    if len(legal) >= 2 and _contains_run(named, legal):
        found.append(finding("prompt_echo", f"the reply repeats the prompt's legal moves ({', '.join(legal)})"))
    return found


def audit_ply(calls: Sequence[dict[str, Any]], played: str, game: str, ply: int) -> list[AuditFinding]:
    """A played move against the calls of its decision: the accepted reply's move, or a recorded failure."""
    accepted = [call for call in calls if call.get("verdict") == "legal"]
    if accepted:
        named = str(accepted[-1].get("parsed_move") or "").lower()
        if named != played:
            return [AuditFinding(accepted[-1].get("call_index"), game, ply, "unrecorded_substitution",
                                 f"{played} was played, the accepted reply named {named or 'nothing'}", "")]
        return []
    if not any(call.get("failure_kind") for call in calls):
        return [AuditFinding(calls[-1].get("call_index") if calls else None, game, ply, "unrecorded_substitution",
                             f"{played} was played with no accepted reply and no failure recorded", "")]
    return []


def read_calls(path: Path) -> list[dict[str, Any]]:
    """The lines of a ``calls.jsonl`` as dicts (``prev_hash`` and all); [] when there is none."""
    if not path.exists():
        return []
    calls = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except ValueError:
            raise TranscriptError("not a JSON line (run 'arena replay' to check the records)", path, number) from None
        if not isinstance(value, dict):
            raise TranscriptError("not a call record", path, number)
        calls.append(value)
    return calls


def _read_games(path: Path) -> Iterable[dict[str, Any]]:
    if not path.exists():
        return []
    try:
        return [json.loads(raw) for raw in path.read_text(encoding="utf-8").split("\n") if raw.strip()]
    except ValueError:
        raise TranscriptError("a line is not JSON (run 'arena replay' to check the records)", path) from None


def audit_run(run_dir: str | Path) -> AuditReport:
    """Audit every model reply of an ``arena run`` or ``arena tournament``/``match`` directory."""
    run_dir = Path(run_dir)
    kind = run_kind(run_dir)  # TranscriptError: no such directory, no manifest
    report = AuditReport(run_dir, kind)
    calls = read_calls(run_dir / CALLS_FILE)
    by_ply: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for call in calls:
        key: tuple[Any, ...]
        if kind == "llm":
            game, key = f"{call.get('phase')} game {call.get('game_index')}", (call.get("phase"), call.get("game_index"))
        else:
            game = f"env {call.get('env_id')} pairing {call.get('pairing')} game {call.get('game')}"
            key = (call.get("env_id"), call.get("pairing"), call.get("game"))
        if call.get("ply") is None:
            continue
        report.calls += 1 if call.get("parsed_move") else 0
        report.findings.extend(audit_call(call, game))
        by_ply.setdefault((*key, call.get("ply")), []).append(call)
    report.findings.extend(_audit_games(run_dir, kind, by_ply))
    return report


def _audit_games(run_dir: Path, kind: str, by_ply: dict[tuple[Any, ...], list[dict[str, Any]]]) -> list[AuditFinding]:
    if not by_ply:
        return []
    findings: list[AuditFinding] = []
    layouts: dict[int, Any] = {}
    llm_env = llm_config(run_dir).env if kind == "llm" else None
    for line in _read_games(run_dir / GAMES_FILE):
        key: tuple[Any, ...]
        if kind == "llm":
            env_id, key, game = llm_env, (line.get("phase"), line.get("game_index")), f"{line.get('phase')} game {line.get('game_index')}"
        else:
            env_id, key = line.get("env_id"), (line.get("env_id"), line.get("pairing"), line.get("game"))
            game = f"env {key[0]} pairing {key[1]} game {key[2]}"
        if not isinstance(env_id, int):
            continue
        layout = layouts.setdefault(env_id, make_env(env_id).rules.layout)
        for ply, move in enumerate(line.get("moves") or ()):
            calls = by_ply.get((*key, ply))
            if calls:
                findings.extend(audit_ply(calls, format_move(int(move), layout).lower(), game, ply))
    return findings
