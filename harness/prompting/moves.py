"""Model-proposed moves: a tolerant reply parser, engine verification, re-asking, failure accounting.

This layer knows nothing about any model. It gets an async ``ask(messages)``
callable (the model client, a mock, a test script) and turns replies into
verified moves; the game loop (:mod:`harness.play.game`) plays whole games with it.

Parsing (:func:`parse_reply`). Candidates are looked for in this order and the
first stage that finds one decides:

1. **JSON**: the last JSON object in the reply that has a ``"move"`` key with a
   string value (``{"move": "d3"}``), bare, inside a fenced ```json block or
   inside prose.
2. **A final-answer line**: the last line that starts (after markdown such as
   ``**``, ``>``, ``#``, ``-``) with ``move``, ``final move``, ``final answer``,
   ``answer``, ``my move``, ``chosen move`` or ``best move``, a separator
   (``:``, ``=``, ``-``, a dash or ``is``) and a move: ``MOVE: d3``,
   ``Final answer: **D3**``, ``Answer - d3``, ``"move": "d3"`` in broken JSON.
3. **A bare coordinate**: the last coordinate (or ``pass``) on the last
   non-empty line (``d3``, ``I play D3.``). When the reply was cut off
   (``finish_reason == "length"``) its last line is an unfinished thought, so
   this stage then accepts only a reply that is a move and nothing else.

Case never matters. A coordinate that is well-formed but not on the board
(``z9``, ``a12`` on 8 rows) is parsed, with ``move=None``, and fails
verification as an illegal move. With no candidate the failure is, in order:
``truncated`` (finish_reason ``length``), ``empty_or_refusal`` (blank text or
refusal phrasing such as "I can't"), else ``parse_error``.

Re-asking (:class:`MoveAsker`). A failed attempt is answered by appending the
model's reply (as an assistant message, when it is not empty) and a user
message with the reason and the legal moves; a call that failed outright
(:class:`ModelCallFailed`: timeout, API error) is retried with the same
messages, since the model saw nothing; the first ``free_call_failures`` such
failures of a decision do not use up a re-ask (a model agent passes its client's
limit of failures in a row, so that the client stops the run, raising
:class:`~harness.models.errors.EndpointDown` through ``decide``, before a move is
forfeited only because the endpoint was down). Every failed attempt is counted
once by its kind. After ``max_retries`` re-asks the policy applies: ``forfeit`` (the
decision has no move and the game layer scores a loss) or ``random`` (a
uniformly random legal move from the given generator, flagged as a fallback).
An illegal move is never returned.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal

import numpy as np

from engine.layout import Layout
from engine.notation import NotationError, format_move, parse_move
from engine.protocol.observation import Observation
from harness.play.decisions import Attempt, FailureKind, Message, MoveDecision, ParsedMove, ParseFailure
from harness.prompting.move_formats import MoveReader

Reply = tuple[str | None, str | None] | tuple[str | None, str | None, Any]
AskFn = Callable[[list[Message]], Awaitable[Reply]]
FallbackPolicy = Literal["forfeit", "random"]
FALLBACK_POLICIES = ("forfeit", "random")


class ModelCallFailed(Exception):
    """Raised by an ``ask`` callable when the call itself failed; ``kind`` is TIMEOUT or API_ERROR."""

    def __init__(self, kind: FailureKind | str, detail: str = "") -> None:
        kind = FailureKind(kind)
        if kind not in (FailureKind.TIMEOUT, FailureKind.API_ERROR):
            raise ValueError(f"ModelCallFailed kind must be timeout or api_error, not {kind.value}")
        self.kind, self.detail = kind, detail
        super().__init__(f"{kind.value}: {detail}" if detail else kind.value)


# ---------------------------------------------------------------- parsing

_TOKEN = r"(?P<tok>pass|[a-z]\d{1,2})(?![a-z0-9])"
_FINAL_LINE = re.compile(
    r"^[\s>*_#`\-]*[\"']?(?:(?:the|my)\s+)?(?:final\s+answer|final\s+move|chosen\s+move|best\s+move|answer|move)"
    r"[\"'*_\s]*(?:is\b\s*[:=\-\u2013\u2014]?|[:=\-\u2013\u2014])[\s*_`\"'(\[]*" + _TOKEN,
    re.IGNORECASE,
)
_BARE = re.compile(r"(?<![a-z0-9])" + _TOKEN, re.IGNORECASE)
_REFUSAL = re.compile(
    r"\b(?:i\s+(?:can(?:no|['\u2019])t|won['\u2019]?t|am\s+(?:not\s+able|unable)|'m\s+(?:not\s+able|unable)|refuse)"
    r"|i\s+can\s+not|unable\s+to\s+(?:help|assist|comply)|as\s+an\s+ai)\b",
    re.IGNORECASE,
)


def parse_reply(text: str | None, layout: Layout, finish_reason: str | None = None) -> ParsedMove | ParseFailure:
    """The move a reply proposes, or why none could be read (see the module docstring for the precedence).

    A parsed move carries where its token sits in the reply (``span``: start and end
    character offsets) and every other candidate any stage saw (``candidates``), so
    that a record shows what the parser chose from; the choice itself does not depend on them.
    """
    text = text or ""
    truncated = finish_reason == "length"
    stages = (_from_json(text), _from_final_line(text), _from_bare(text, whole_reply_only=truncated))
    chosen = next((stage[-1] for stage in stages if stage), None)
    if chosen is not None:
        token, source, span = chosen
        seen, others = {span}, []
        for other_token, other_source, other_span in (candidate for stage in stages for candidate in stage):
            if other_span not in seen:  # one entry per place in the reply (stages may see the same token)
                seen.add(other_span)
                others.append((other_token.strip().lower(), other_source, other_span))
        return _parsed(token, source, layout, span, tuple(others))
    if truncated:
        return ParseFailure(FailureKind.TRUNCATED, "the reply was cut off (length limit) before a move was given")
    if not text.strip():
        return ParseFailure(FailureKind.EMPTY_OR_REFUSAL, "the reply was empty")
    if _REFUSAL.search(text):
        return ParseFailure(FailureKind.EMPTY_OR_REFUSAL, "the reply declined to give a move")
    return ParseFailure(FailureKind.PARSE_ERROR, "no move found in the reply")


Span = tuple[int, int]
Candidate = tuple[str, str, Span]  # token as written, stage, (start, end) in the reply


def _parsed(token: str, source: str, layout: Layout, span: Span | None = None, candidates: tuple[Candidate, ...] = ()) -> ParsedMove:
    notation = token.strip().lower()
    try:
        move: int | None = parse_move(notation, layout)
    except NotationError:
        move = None
    return ParsedMove(notation, move, source, span, candidates)  # type: ignore[arg-type]


def _from_json(text: str) -> list[Candidate]:
    """Every JSON object with a string ``move`` that is a coordinate, in order (the last one is the stage's choice)."""
    decoder = json.JSONDecoder()
    found: list[Candidate] = []
    position = text.find("{")
    while position != -1:
        try:
            value, end = decoder.raw_decode(text, position)
        except ValueError:
            position = text.find("{", position + 1)
            continue
        if isinstance(value, dict):
            move = next((v for k, v in value.items() if str(k).strip().lower() == "move"), None)
            if isinstance(move, str) and _BARE.fullmatch(move.strip()):
                token = move.strip()
                at = text.rfind(token, position, end)  # the value's text: the last occurrence inside the object
                found.append((token, "json", (at, at + len(token)) if at != -1 else (position, end)))
        position = text.find("{", end)
    return found


def _lines(text: str) -> list[tuple[int, str]]:
    """The reply's lines with the offset each starts at."""
    offset, lines = 0, []
    for raw in text.splitlines(keepends=True):
        lines.append((offset, raw.rstrip("\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")))
        offset += len(raw)
    return lines


def _from_final_line(text: str) -> list[Candidate]:
    found: list[Candidate] = []
    for offset, line in _lines(text):
        match = _FINAL_LINE.search(line)
        if match:
            found.append((match.group("tok"), "final_line", (offset + match.start("tok"), offset + match.end("tok"))))
    return found


def _from_bare(text: str, whole_reply_only: bool) -> list[Candidate]:
    if whole_reply_only:
        stripped = text.strip()
        inner = stripped.strip("`*_\"'. ")
        match = _BARE.fullmatch(inner)
        if not match:
            return []
        at = (len(text) - len(text.lstrip())) + (len(stripped) - len(stripped.lstrip("`*_\"'. ")))
        return [(match.group("tok"), "bare", (at, at + len(match.group("tok"))))]
    lines = [(offset, line) for offset, line in _lines(text) if line.strip()]
    if not lines:
        return []
    offset, last = lines[-1]
    return [(match.group("tok"), "bare", (offset + match.start("tok"), offset + match.end("tok"))) for match in _BARE.finditer(last)]


# ---------------------------------------------------------------- verification and accounting


def verify(parsed: ParsedMove | ParseFailure, legal_moves: Sequence[int], layout: Layout) -> tuple[str, FailureKind | None, str | None]:
    """(verdict, failure kind, reason for the model): verdict is ``legal``, ``illegal`` or ``unparsed``."""
    if isinstance(parsed, ParseFailure):
        return "unparsed", parsed.kind, parsed.detail
    if parsed.move is not None and parsed.move in legal_moves:
        return "legal", None, None
    where = "is not on the board" if parsed.move is None else "is not legal here"
    return "illegal", FailureKind.ILLEGAL_MOVE, f"Your move {parsed.notation} {where}. Legal moves: {legal_list(legal_moves, layout)}."


def legal_list(legal_moves: Sequence[int], layout: Layout) -> str:
    """``d3, e3, pass`` for the given moves."""
    return ", ".join(format_move(move, layout) for move in legal_moves) or "none"


# ---------------------------------------------------------------- asking

Feedback = Callable[[Attempt, Observation], str]


def default_feedback(attempt: Attempt, obs: Observation) -> str:
    """The re-ask message: the reason and the legal moves (a prompting layer may pass a template-rendered one)."""
    legal = legal_list(obs.legal_moves, obs.rules.layout)
    if attempt.verdict == "illegal" and attempt.reason:
        return f"{attempt.reason} Reply with one legal move."
    example = legal.split(", ")[0]
    return (
        f"I could not read a move from your reply ({attempt.reason}). Legal moves: {legal}. "
        f"Reply with one legal move, e.g. MOVE: {example}."
    )


class MoveAsker:
    """Asks a model for a move, verifies it with the engine and re-asks with the reason on failure."""

    def __init__(
        self,
        ask: AskFn,
        *,
        max_retries: int = 2,
        policy: FallbackPolicy = "forfeit",
        rng: np.random.Generator | None = None,
        feedback: Feedback = default_feedback,
        free_call_failures: int = 0,
        reader: MoveReader | None = None,
    ) -> None:
        for name, value in (("max_retries", max_retries), ("free_call_failures", free_call_failures)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name}={value!r}: give a whole number 0 or more")
        if policy not in FALLBACK_POLICIES:
            raise ValueError(f"policy={policy!r}: choose one of {', '.join(FALLBACK_POLICIES)}")
        if policy == "random" and not isinstance(rng, np.random.Generator):
            raise TypeError("policy='random' needs a numpy Generator: MoveAsker(..., rng=np.random.default_rng(seed))")
        self.ask, self.max_retries, self.policy, self.rng, self.feedback = ask, max_retries, policy, rng, feedback
        self.free_call_failures = free_call_failures
        self.reader = reader if reader is not None and reader.structured else None  # None: free text, parse_reply

    async def decide(self, obs: Observation, messages: Sequence[Message], ask: AskFn | None = None) -> MoveDecision:
        """Up to ``1 + max_retries`` calls (and ``free_call_failures``); then the fallback policy. Never an illegal move.
        ``ask``: this decision's own ask callable (e.g. with the legal moves in its request), else the asker's."""
        if not obs.legal_moves:
            raise ValueError("no legal moves: the game is over, there is nothing to ask")
        conversation = list(messages)
        attempts: list[Attempt] = []
        tries, free = 1 + self.max_retries, self.free_call_failures
        while tries:
            attempt = await self._attempt(conversation, obs, ask or self.ask)
            attempts.append(attempt)
            if attempt.verdict == "legal":
                return MoveDecision(attempt.parsed.move, False, attempts)  # type: ignore[union-attr]
            if attempt.verdict == "call_failed" and free:
                free -= 1
                continue
            tries -= 1
            if attempt.verdict != "call_failed":
                conversation.extend(self._followup(attempt, obs))
        if self.policy == "random":
            move = int(obs.legal_moves[int(self.rng.integers(len(obs.legal_moves)))])  # type: ignore[union-attr]
            return MoveDecision(move, False, attempts, fallback_used=True)
        return MoveDecision(None, True, attempts)

    async def _attempt(self, conversation: list[Message], obs: Observation, ask: AskFn) -> Attempt:
        sent = tuple(dict(m) for m in conversation)
        try:
            reply = await ask(list(sent))
        except ModelCallFailed as failure:
            return Attempt(sent, None, None, None, "call_failed", failure.kind, failure.detail or failure.kind.value)
        text, finish_reason = reply[0], reply[1]
        meta = reply[2] if len(reply) > 2 else None
        if self.reader is not None:  # a tool call or a structured-output object
            text, parsed = self.reader.read(text, finish_reason, meta, obs.rules.layout)
        else:
            parsed = parse_reply(text, obs.rules.layout, finish_reason)
        verdict, kind, reason = verify(parsed, obs.legal_moves, obs.rules.layout)
        return Attempt(sent, text, finish_reason, parsed, verdict, kind, reason, meta)  # type: ignore[arg-type]

    def _followup(self, attempt: Attempt, obs: Observation) -> list[Message]:
        """The messages answering a failed attempt: its reply (text, or its tool calls) and the feedback."""
        if self.reader is None:
            feedback = self.feedback(attempt, obs)
            return ([{"role": "assistant", "content": attempt.text}] if attempt.text else []) + [{"role": "user", "content": feedback}]
        legal = legal_list(obs.legal_moves, obs.rules.layout)
        reason = (
            attempt.reason
            if attempt.verdict == "illegal"
            else f"I could not read a move from your reply ({attempt.reason}). Legal moves: {legal}."
        )
        return self.reader.followup(attempt, f"{reason} {self.reader.instruction(legal)}")
