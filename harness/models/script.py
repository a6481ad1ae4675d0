"""The scripted model: answers with given replies, records every request, injects failures at given calls.

``--model mock/script:FILE.jsonl`` on the CLI, and :class:`ScriptedModel` in a test (the
testing API, :mod:`harness.testing`, and its pytest fixture ``scripted_model``). The replies
come from a list, a callable of the request, or a JSONL file, one line per model call:

- a JSON string (``"d3"``), or an object ``{"reply": "d3"}`` (optionally ``"finish_reason"``);
- ``{"failure": KIND}``: that call fails as KIND, any kind of the client's taxonomy
  (``rate_limit``, ``server_error``, ``timeout``, ``auth``, ...; raised, so the client retries
  or stops as it would on a provider's) or a returned failure (``empty``, ``garbage``,
  ``truncated``, ``refusal``);
- any line may carry ``"prompt_sha256"`` (:func:`prompt_digest` of the request's messages):
  when every line does, a request takes the first unused line written for its messages,
  so a script written from a run's ``calls.jsonl`` (``arena calls-to-script``) answers each
  request as the run's model did, whatever order concurrent games ask in. Otherwise lines
  are used in order.

Running out raises :class:`~harness.models.replies.MockExhausted` saying how many replies
were used. ``failures={call: KIND}`` injects a failure at a call (0-based, counting every
call) without using a line. Every request is kept in :attr:`ScriptedModel.requests`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.models.errors import ModelConfigError
from harness.models.messages import Messages, last_user_text, message_text
from harness.models.replies import (
    INJECTABLE_KINDS,
    REPLY_FAILURES,
    MockExhausted,
    MockReply,
    estimate_tokens,
    raised_failure,
    reply_failure,
)

SCRIPT_PREFIX = "script:"  # mock/script:FILE.jsonl
SCRIPT_MODEL = "mock/script"
_LINE_KEYS = frozenset({"reply", "finish_reason", "failure", "prompt_sha256"})


class ScriptError(ModelConfigError):
    """A script that cannot be read: names the file and line, and what a line may be."""


@dataclass(frozen=True)
class ScriptLine:
    """One scripted answer: a reply, or a failure of ``failure``'s kind; ``prompt_sha256`` ties it to one request."""

    reply: str | None = None
    finish_reason: str = "stop"
    failure: str | None = None
    prompt_sha256: str | None = None

    def __post_init__(self) -> None:
        if (self.reply is None) == (self.failure is None):
            raise ValueError("a script line is either a reply or a failure")
        if self.failure is not None and self.failure not in INJECTABLE_KINDS:
            raise ValueError(f"unknown failure kind {self.failure!r}; valid: {', '.join(INJECTABLE_KINDS)}")

    def to_json(self) -> dict[str, Any]:
        """The line as the JSONL file holds it (defaults left out)."""
        line: dict[str, Any] = {"failure": self.failure} if self.failure is not None else {"reply": self.reply}
        if self.finish_reason != "stop":
            line["finish_reason"] = self.finish_reason
        if self.prompt_sha256 is not None:
            line["prompt_sha256"] = self.prompt_sha256
        return line


@dataclass(frozen=True)
class RecordedRequest:
    """One request a scripted model received: its 0-based index, the messages and the request parameters."""

    index: int
    messages: list[dict[str, Any]]
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def prompt(self) -> str:
        """The last user message's text (the move prompt)."""
        return last_user_text(self.messages)

    @property
    def text(self) -> str:
        """Every message's text, joined."""
        return "\n".join(message_text(m) for m in self.messages)


Reply = str | ScriptLine
ReplyCallable = Callable[[RecordedRequest], Reply]
ReplySource = Sequence[Reply] | ReplyCallable | str | os.PathLike[str]


def prompt_digest(messages: Messages) -> str:
    """The sha256 of a request's messages (canonical JSON): what a keyed script line is tied to."""
    return hashlib.sha256(json.dumps([dict(m) for m in messages], sort_keys=True, default=str).encode()).hexdigest()


def parse_script_line(value: Any, where: str) -> ScriptLine:
    """One line of a script (a string, or an object with ``reply`` or ``failure``); ``where`` names it in errors."""
    if isinstance(value, str):
        return ScriptLine(reply=value)
    if not isinstance(value, dict) or set(value) - _LINE_KEYS:
        raise ScriptError(
            f'{where}: a script line is a JSON string ("d3") or an object with "reply" or "failure" '
            f"(and optionally {', '.join(sorted(_LINE_KEYS - {'reply', 'failure'}))}), not {value!r:.80}"
        )
    try:
        return ScriptLine(**value)
    except (TypeError, ValueError) as error:
        raise ScriptError(f"{where}: {error}") from None


def load_script(path: str | os.PathLike[str]) -> list[ScriptLine]:
    """The lines of a JSONL script file (blank lines skipped)."""
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except OSError as error:
        raise ScriptError(
            f"cannot read the script {source}: {error.strerror or error}; give --model "
            f"mock/script:FILE with FILE a JSONL file of replies, one a line"
        ) from None
    lines: list[ScriptLine] = []
    for number, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except ValueError:
            raise ScriptError(
                f'{source}:{number}: not JSON; a script line is a JSON string ("d3") or an object '
                '({"reply": "d3"} or {"failure": "rate_limit"})'
            ) from None
        lines.append(parse_script_line(value, f"{source}:{number}"))
    return lines


def write_script(lines: Sequence[ScriptLine], path: str | os.PathLike[str]) -> Path:
    """Write ``lines`` as a JSONL script that :func:`load_script` (and ``mock/script:FILE``) reads."""
    target = Path(path)
    target.write_text("".join(json.dumps(line.to_json()) + "\n" for line in lines), encoding="utf-8")
    return target


class ScriptedModel:
    """A model that answers from a script; see the module docstring. Offline, deterministic, thread-unsafe by design."""

    def __init__(
        self,
        replies: ReplySource,
        *,
        failures: Mapping[int, str] | None = None,
        retry_after: float = 0.0,
        latency_s: float = 0.0,
        seed: int = 0,
        name: str = SCRIPT_MODEL,
    ) -> None:
        self.name = name
        self._reply_fn: ReplyCallable | None = None
        self._lines: list[ScriptLine] = []
        if isinstance(replies, str | os.PathLike):
            self._lines = load_script(replies)
        elif callable(replies):
            self._reply_fn = replies
        else:
            self._lines = [_as_line(reply) for reply in replies]
        keyed = {line.prompt_sha256 is not None for line in self._lines}
        if len(keyed) > 1:
            raise ScriptError(f"{name}: either every script line has a prompt_sha256 or none does")
        self.keyed = keyed == {True}
        self.failures = {int(call): kind for call, kind in (failures or {}).items()}
        unknown = set(self.failures.values()) - set(INJECTABLE_KINDS)
        if unknown:
            raise ValueError(f"unknown failure kinds {sorted(unknown)}; valid: {', '.join(INJECTABLE_KINDS)}")
        self.retry_after, self.latency_s = retry_after, latency_s
        self._rng = random.Random(seed)
        self._used = [False] * len(self._lines)
        self._next = 0  # the next line, in order (unkeyed scripts)
        self.requests: list[RecordedRequest] = []
        self.injected: dict[str, int] = {}  # failures by kind, from `failures` and from failure lines

    @classmethod
    def from_model_name(cls, model: str, seed: int = 0) -> ScriptedModel:
        """The model ``mock/script:FILE`` names (the file is read now, so a bad one is reported before any game)."""
        path = model.removeprefix("mock/").removeprefix(SCRIPT_PREFIX)
        if not path:
            raise ScriptError("mock/script needs a file: --model mock/script:FILE.jsonl (one reply a line)")
        return cls(path, seed=seed, name=model)

    @property
    def calls(self) -> int:
        """Requests received so far, failed ones included."""
        return len(self.requests)

    @property
    def used(self) -> int:
        """Script lines used so far."""
        return sum(self._used)

    @property
    def remaining(self) -> int:
        """Script lines not used yet (0 for a callable)."""
        return len(self._lines) - self.used

    def complete(self, messages: Messages, params: Mapping[str, Any] | None = None) -> MockReply:
        """Answer one request (record it first), or raise its failure."""
        request = RecordedRequest(len(self.requests), [dict(m) for m in messages], dict(params or {}))
        self.requests.append(request)
        line = ScriptLine(failure=self.failures[request.index]) if request.index in self.failures else self._line_for(request)
        prompt_tokens = sum(estimate_tokens(message_text(m)) for m in messages)
        if line.failure is not None:
            self.injected[line.failure] = self.injected.get(line.failure, 0) + 1
            if line.failure not in REPLY_FAILURES:
                raise raised_failure(line.failure, self.retry_after, request.index)
            text, reason = reply_failure(line.failure, self._rng)
            return MockReply(text, reason, prompt_tokens, estimate_tokens(text))
        assert line.reply is not None
        return MockReply(line.reply, line.finish_reason, prompt_tokens, estimate_tokens(line.reply))

    async def acomplete(self, messages: Messages, params: Mapping[str, Any] | None = None) -> MockReply:
        """:meth:`complete`, after ``latency_s`` of simulated latency."""
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        return self.complete(messages, params)

    def _line_for(self, request: RecordedRequest) -> ScriptLine:
        if self._reply_fn is not None:
            return _as_line(self._reply_fn(request))
        if self.keyed:
            digest = prompt_digest(request.messages)
            index = next((i for i, line in enumerate(self._lines) if not self._used[i] and line.prompt_sha256 == digest), None)
            if index is None:
                raise MockExhausted(
                    f"{self.name}: no scripted reply left for request {request.index + 1} (its messages, "
                    f"sha256 {digest[:12]}..., are not among the unused lines); {self.used} of "
                    f"{len(self._lines)} replies used"
                )
        else:
            if self._next >= len(self._lines):
                raise MockExhausted(
                    f"{self.name} ran out of scripted replies: all {len(self._lines)} used by "
                    f"{request.index} call(s); call {request.index + 1} asked for one more"
                )
            index, self._next = self._next, self._next + 1
        self._used[index] = True
        return self._lines[index]


def _as_line(reply: Reply) -> ScriptLine:
    if isinstance(reply, ScriptLine):
        return reply
    if isinstance(reply, str):
        return ScriptLine(reply=reply)
    raise TypeError(f"a scripted reply is a str or a ScriptLine, not {type(reply).__name__}")
