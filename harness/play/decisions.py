"""The game loop's vocabulary for a decision: a move or a forfeit, the attempts behind it, failures by kind.

A decider (a classical policy wrapped by :func:`harness.play.game.from_policy`, or
a model agent asking through :class:`harness.prompting.moves.MoveAsker`) returns a
:class:`MoveDecision`; the game loop verifies its move and counts its failed
attempts by :class:`FailureKind`. Parsing replies and re-asking live in
``harness.prompting``; this module only names what they produce.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

Message = dict[str, Any]


class FailureKind(str, Enum):
    """Why an attempt produced no playable move."""

    PARSE_ERROR = "parse_error"
    ILLEGAL_MOVE = "illegal_move"
    EMPTY_OR_REFUSAL = "empty_or_refusal"
    TRUNCATED = "truncated"
    TIMEOUT = "timeout"
    API_ERROR = "api_error"


@dataclass(frozen=True)
class ParsedMove:
    """A move read from a reply: its notation (lower case), flat index (None if off the board), which stage found it,
    where it was found and the other candidates seen (see :func:`harness.prompting.moves.parse_reply`)."""

    notation: str
    move: int | None
    source: Literal["json", "final_line", "bare", "tool", "structured"]  # the last two: a tool call, a structured-output object
    # Where in the reply the move was read: (start, end) character offsets of its token; and every other
    # candidate the parser saw, as (notation, source, (start, end)). Records for the parse audit; not compared.
    span: tuple[int, int] | None = field(default=None, compare=False)
    candidates: tuple[tuple[str, str, tuple[int, int]], ...] = field(default=(), compare=False)

    @property
    def on_board(self) -> bool:
        return self.move is not None


@dataclass(frozen=True)
class ParseFailure:
    """No move could be read from a reply."""

    kind: FailureKind
    detail: str


class FailureCounts(BaseModel):
    """Failed attempts by kind, plus how many decisions ended in a forfeit or a random fallback.

    Addable (``a + b``), JSON-serialisable (``model_dump_json``), immutable.
    """

    model_config = ConfigDict(frozen=True)

    parse_error: int = 0
    illegal_move: int = 0
    empty_or_refusal: int = 0
    truncated: int = 0
    timeout: int = 0
    api_error: int = 0
    forfeits: int = 0
    fallbacks: int = 0

    @property
    def total(self) -> int:
        """All failed attempts (forfeits and fallbacks are outcomes, not attempts, and are not included)."""
        return sum(getattr(self, kind.value) for kind in FailureKind)

    def of(self, kind: FailureKind) -> int:
        return getattr(self, FailureKind(kind).value)

    def __add__(self, other: FailureCounts) -> FailureCounts:
        if not isinstance(other, FailureCounts):
            return NotImplemented
        return FailureCounts(**{name: getattr(self, name) + getattr(other, name) for name in type(self).model_fields})

    @classmethod
    def of_decisions(cls, decisions: Sequence[MoveDecision]) -> FailureCounts:
        """All the decisions' failures together (one model built, not one per decision: this runs every game)."""
        counts: dict[str, int] = {}
        for decision in decisions:
            _add_counts(counts, decision)
        return cls(**counts)


@dataclass(frozen=True)
class Attempt:
    """One call to the model: what was sent, the reply, what was read from it and the verdict."""

    messages: tuple[Message, ...]
    text: str | None
    finish_reason: str | None
    parsed: ParsedMove | ParseFailure | None  # None when the call itself failed
    verdict: Literal["legal", "illegal", "unparsed", "call_failed"]
    failure_kind: FailureKind | None
    reason: str | None = None
    meta: Any = None  # whatever the ask callable returned as a third element (usage, cache key, ...)


@dataclass(frozen=True)
class MoveDecision:
    """The outcome of asking for one move: a legal move, or a forfeit (``move is None``)."""

    move: int | None
    forfeited: bool
    attempts: list[Attempt] = field(default_factory=list)
    fallback_used: bool = False

    @property
    def retries(self) -> int:
        return max(0, len(self.attempts) - 1)

    @property
    def failure_counts(self) -> FailureCounts:
        counts: dict[str, int] = {}
        _add_counts(counts, self)
        return FailureCounts(**counts)


def _add_counts(counts: dict[str, int], decision: MoveDecision) -> None:
    """Add a decision's failed attempts by kind, its forfeit and its fallback to ``counts``."""
    for attempt in decision.attempts:
        if attempt.failure_kind is not None:
            counts[attempt.failure_kind.value] = counts.get(attempt.failure_kind.value, 0) + 1
    if decision.forfeited:
        counts["forfeits"] = counts.get("forfeits", 0) + 1
    if decision.fallback_used:
        counts["fallbacks"] = counts.get("fallbacks", 0) + 1
