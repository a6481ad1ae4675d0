"""Scripted mock models: offline stand-ins for a foundation model, for tests and the CLI.

``--model mock/<name>`` picks one from :data:`MOCK_MODELS` (see :func:`make_mock`;
``mock/echo`` answers the first legal move the prompt shows, ``mock/fixed:MOVE`` always
answers MOVE, legal or not; ``mock/script:FILE.jsonl``, replies from a file, is
:mod:`harness.models.script`'s);
tests build a :class:`MockModel` directly. A mock answers from a fixed list of replies
(raising :class:`MockExhausted` when they run out) or from a function of the messages
(e.g. the first legal move listed in the prompt), and can inject failures by
probability or by schedule:

- raised, as a real provider would fail (retried by the client): ``rate_limit`` (with
  ``retry_after``), ``server_error`` (HTTP 500), ``timeout``, ``malformed_response``;
- returned, a reply the move verifier must cope with: ``empty``, ``garbage``
  (unparseable text), ``truncated`` (``finish_reason='length'``), ``refusal``.

Every random draw of a call (its failure, its reply, a truncation's length) comes
from a generator of its own, seeded by (seed, the request's messages, how many times
this mock was asked those messages before, counting the asks of the calls that the
response cache answered: :meth:`MockModel.replayed`): never from one stream through the
run. So a run interrupted and resumed (a new process, a new mock, the earlier calls
answered by the response cache, failed ones included) gets the very replies an uninterrupted run gets,
whatever the order of its calls (concurrent evaluation games included).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from harness.models.coder import coded_program, coded_program_without_diagonals
from harness.models.errors import ModelConfigError
from harness.models.messages import Messages, last_user_text, message_text
from harness.models.reasoner import reasoned_strategy
from harness.models.replies import (
    RAISED_FAILURES,
    REFUSAL_TEXT,
    REPLY_FAILURES,
    MockExhausted,
    MockReply,
    estimate_tokens,
    raised_failure,
    reply_failure,
)
from harness.models.script import SCRIPT_PREFIX, ScriptedModel

__all__ = [
    "FAILURE_KINDS",
    "MOCK_MODELS",
    "RAISED_FAILURES",
    "REFUSAL_TEXT",
    "REPLY_FAILURES",
    "MockExhausted",
    "MockModel",
    "MockReply",
    "UnknownMockModel",
    "estimate_tokens",
    "first_legal",
    "fixed_reply",
    "legal_moves_in",
    "make_mock",
    "make_offline_model",
    "random_legal",
]

FAILURE_KINDS = RAISED_FAILURES + REPLY_FAILURES

ReplyFn = Callable[[Messages, random.Random], str]

_LEGAL_LINE = re.compile(r"legal\s+moves?[^:\n]*[:=]\s*(?P<moves>[^\n]*)", re.IGNORECASE)
_MOVE = re.compile(r"\b(?:[a-z]\d{1,2}|pass)\b", re.IGNORECASE)


class UnknownMockModel(ModelConfigError):
    """``mock/<name>`` names no registered mock model."""


def legal_moves_in(text: str) -> list[str]:
    """Moves listed in a prompt, lower-cased: those on the last ``Legal moves: ...`` line,
    else every move-like token (``d3``, ``pass``) in the text, in order."""
    lines = _LEGAL_LINE.findall(text)
    source = lines[-1] if lines else text
    return [move.lower() for move in _MOVE.findall(source)]


def first_legal(messages: Messages, rng: random.Random) -> str:
    """The first legal move listed in the last user message (``pass`` if none)."""
    moves = legal_moves_in(last_user_text(messages))
    return moves[0] if moves else "pass"


def fixed_reply(text: str) -> ReplyFn:
    """A reply function answering ``text`` to every request (``mock/fixed:MOVE``)."""

    def reply(messages: Messages, rng: random.Random) -> str:
        return text

    return reply


def random_legal(messages: Messages, rng: random.Random) -> str:
    """A legal move from the last user message, drawn with the mock's seeded generator."""
    moves = legal_moves_in(last_user_text(messages))
    return rng.choice(moves) if moves else "pass"


class MockModel:
    """A scripted model; see the module docstring. Randomness only from ``seed`` and each request (:meth:`draw_generator`)."""

    def __init__(
        self,
        *,
        replies: Sequence[str] | None = None,
        reply_fn: ReplyFn | None = None,
        failure_rate: float = 0.0,
        failure_kinds: Sequence[str] = FAILURE_KINDS,
        schedule: Mapping[int, str] | Sequence[str | None] | None = None,
        retry_after: float = 0.0,
        latency_s: float = 0.0,
        seed: int = 0,
        name: str = "scripted",
    ) -> None:
        if (replies is None) == (reply_fn is None):
            raise ValueError("give a mock model either replies or reply_fn")
        unknown = set(failure_kinds).union(_schedule_kinds(schedule)) - set(FAILURE_KINDS)
        if unknown:
            raise ValueError(f"unknown failure kinds {sorted(unknown)}; valid: {FAILURE_KINDS}")
        if not 0.0 <= failure_rate <= 1.0:
            raise ValueError("failure_rate must be within [0, 1]")
        self.name = name
        self._replies = list(replies) if replies is not None else None
        self._reply_fn = reply_fn
        self.failure_rate = failure_rate
        self.failure_kinds = tuple(failure_kinds)
        self._schedule = _schedule_dict(schedule)
        self.retry_after = retry_after
        self.latency_s = latency_s
        self.seed = seed
        self._asked: dict[str, int] = {}  # times each request's messages were asked, by their digest
        self.calls = 0  # every call, failed ones included
        self._replayed = 0  # asks of the calls the response cache answered (a resumed run): see replayed()
        self.failures: dict[str, int] = {}
        self.prompts: list[list[dict[str, Any]]] = []

    def _failure_for(self, call_index: int, rng: random.Random) -> str | None:
        if call_index in self._schedule:
            return self._schedule[call_index]
        if self.failure_rate and rng.random() < self.failure_rate:
            return rng.choice(self.failure_kinds)
        return None

    def draw_generator(self, messages: Messages) -> random.Random:
        """The generator of one call: seeded by (seed, the messages, the times they were asked before); see the module."""
        digest = hashlib.sha256(json.dumps([dict(m) for m in messages], sort_keys=True, default=str).encode()).hexdigest()
        asked = self._asked[digest] = self._asked.get(digest, -1) + 1
        return random.Random(f"{self.seed}:{digest}:{asked}")

    def replayed(self, messages: Messages, attempts: int) -> None:
        """A call answered from the response cache that took ``attempts`` asks when it was made (a resumed run).

        The mock counts them as asked, so the calls after it draw (and meet their
        scheduled failures) exactly as they did in the run that made them.
        """
        digest = hashlib.sha256(json.dumps([dict(m) for m in messages], sort_keys=True, default=str).encode()).hexdigest()
        self._asked[digest] = self._asked.get(digest, -1) + attempts
        self._replayed += attempts  # a schedule's call numbers count them; ``calls`` counts only real ones

    def complete(self, messages: Messages, params: Mapping[str, Any] | None = None) -> MockReply:
        """Answer one call, or raise the scheduled/drawn failure."""
        call_index = self.calls + self._replayed
        self.calls += 1
        self.prompts.append([dict(m) for m in messages])
        rng = self.draw_generator(messages)
        failure = self._failure_for(call_index, rng)
        if failure is not None:
            self.failures[failure] = self.failures.get(failure, 0) + 1
        if failure in RAISED_FAILURES:
            raise raised_failure(failure, self.retry_after, call_index)
        prompt_tokens = sum(estimate_tokens(message_text(m)) for m in messages)
        if failure is not None:
            text, reason = reply_failure(failure, rng)
        else:
            text, reason = self._next_text(messages, rng), "stop"
        return MockReply(text, reason, prompt_tokens, estimate_tokens(text))

    async def acomplete(self, messages: Messages, params: Mapping[str, Any] | None = None) -> MockReply:
        """:meth:`complete`, after ``latency_s`` of simulated latency."""
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        return self.complete(messages, params)

    def _next_text(self, messages: Messages, rng: random.Random) -> str:
        if self._replies is not None:
            if not self._replies:
                raise MockExhausted(f"mock model {self.name!r} ran out of scripted replies after {self.calls - 1} call(s)")
            return self._replies.pop(0)
        assert self._reply_fn is not None
        return self._reply_fn(messages, rng)


def _schedule_kinds(schedule: Mapping[int, str] | Sequence[str | None] | None) -> set[str]:
    return {kind for kind in _schedule_dict(schedule).values() if kind is not None}


def _schedule_dict(schedule: Mapping[int, str] | Sequence[str | None] | None) -> dict[int, str]:
    if schedule is None:
        return {}
    if isinstance(schedule, Mapping):
        return {int(k): v for k, v in schedule.items() if v is not None}
    return {i: kind for i, kind in enumerate(schedule) if kind is not None}


STRATEGY_REPLY = (
    '{"schema_version": 1, "belief": {"regime": "majority", "k_low": 0.5, "k_high": 0.8, "confidence": 0.3, '
    '"rationale": "a fixed mock belief"}, "target_ratio": 0.55, "weights": {"corners": 15.0, "mobility": 5.0}, '
    '"rationale": "a fixed mock strategy"}'
)


def fixed_strategy(messages: Messages, rng: random.Random) -> str:
    """A fixed, valid llm-strategist strategy (majority, target share 0.55), whatever the prompt."""
    return STRATEGY_REPLY


FIXED_PREFIX = "fixed:"  # mock/fixed:MOVE answers MOVE to every request

# name -> (reply function, default failure rate). Names are used as ``mock/<name>``.
MOCK_MODELS: dict[str, tuple[ReplyFn, float]] = {
    "first-legal": (first_legal, 0.0),
    "echo": (first_legal, 0.0),  # echoes the first legal move the prompt shows (first-legal's other name)
    "random-legal": (random_legal, 0.0),
    "flaky-first-legal": (first_legal, 0.2),  # 20% of calls fail, every kind
    "flaky-random-legal": (random_legal, 0.2),
    "strategist": (fixed_strategy, 0.0),  # llm-strategist: one fixed strategy
    "flaky-strategist": (fixed_strategy, 0.2),
    "reasoner": (reasoned_strategy, 0.0),  # llm-strategist: deduces K from the memory table (harness.models.reasoner)
    "coder": (coded_program, 0.0),  # cwm: writes Othello programs, K from the evidence in its prompt (harness.models.coder)
    "coder-no-diagonals": (coded_program_without_diagonals, 0.0),  # cwm: mock/coder with a planted bug (no diagonal flips)
}


def make_mock(name: str, seed: int = 0, **options: Any) -> MockModel:
    """The registered mock model ``name`` (``mock/`` prefix optional).

    ``options`` are passed to :class:`MockModel` (e.g. ``failure_rate``, ``latency_s``).
    """
    short = name.removeprefix("mock/")
    if short.startswith(FIXED_PREFIX):
        text = short.removeprefix(FIXED_PREFIX).strip()
        if not text:
            raise UnknownMockModel(f"mock model {name!r}: give the reply after the colon, e.g. mock/{FIXED_PREFIX}d3")
        return MockModel(reply_fn=fixed_reply(text), seed=seed, name=f"mock/{FIXED_PREFIX}{text}", **options)
    if short not in MOCK_MODELS:
        valid = ", ".join(f"mock/{n}" for n in sorted(MOCK_MODELS))
        raise UnknownMockModel(
            f"unknown mock model {name!r}; valid: {valid}, mock/{FIXED_PREFIX}MOVE (always MOVE), "
            f"mock/{SCRIPT_PREFIX}FILE.jsonl (replies from a file)"
        )
    reply_fn, failure_rate = MOCK_MODELS[short]
    options.setdefault("failure_rate", failure_rate)
    return MockModel(reply_fn=reply_fn, seed=seed, name=f"mock/{short}", **options)


def make_offline_model(name: str, seed: int = 0) -> MockModel | ScriptedModel:
    """The offline model a ``mock/...`` model string names: ``mock/script:FILE`` (:mod:`harness.models.script`),
    else a registered mock (:func:`make_mock`)."""
    if name.removeprefix("mock/").startswith(SCRIPT_PREFIX):
        return ScriptedModel.from_model_name(name, seed=seed)
    return make_mock(name, seed=seed)
