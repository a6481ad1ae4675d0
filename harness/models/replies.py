"""What the offline models answer: a reply, the failures they inject, the error when a script runs out.

Shared by :mod:`harness.models.mock` (the named ``mock/<name>`` models) and
:mod:`harness.models.script` (``mock/script:FILE`` and the testing API's scripted model);
importing neither.

Failures come in two sorts:

- raised, as a real provider fails (the model client classifies them, retries the
  transient ones and stops at once on the fatal ones): every kind of the taxonomy in
  :mod:`harness.models.errors`, :data:`TAXONOMY_KINDS`;
- returned, a reply the move verifier must cope with: :data:`REPLY_FAILURES`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from harness.models.errors import FATAL_KINDS, RETRYABLE_KINDS, ProviderError

RAISED_FAILURES = ("rate_limit", "server_error", "timeout", "malformed_response")  # what the named mocks draw
REPLY_FAILURES = ("empty", "garbage", "truncated", "refusal")
# Every kind the client's taxonomy knows (harness.models.errors), each raised with the status a provider would send.
TAXONOMY_STATUS: dict[str, int | None] = {
    "rate_limit": 429,
    "timeout": None,
    "connection": None,
    "server_error": 500,
    "malformed_response": None,
    "bad_request": 400,
    "auth": 401,
    "not_found": 404,
    "api_error": None,
    "connection_refused": None,
    "dns": None,
    "unknown_provider": None,
    "unsupported_params": 400,
}
TAXONOMY_KINDS = tuple(TAXONOMY_STATUS)
INJECTABLE_KINDS = TAXONOMY_KINDS + REPLY_FAILURES
REFUSAL_TEXT = "I'm sorry, but I can't help with that request."
GARBAGE_TEXT = "Hmm, let me think about the board... ~~##"
_TRUNCATED_FULL = "After weighing the corners and the disc counts, my move is"
_MESSAGES = {
    "rate_limit": "rate limited",
    "server_error": "internal server error",
    "timeout": "request timed out",
    "malformed_response": "response body is not valid JSON",
}
assert set(RETRYABLE_KINDS) | set(FATAL_KINDS) <= set(TAXONOMY_KINDS), "a taxonomy kind the offline models cannot inject"


class MockExhausted(RuntimeError):
    """A model with a fixed list of replies was asked for one more."""


@dataclass(frozen=True)
class MockReply:
    """One reply of an offline model."""

    text: str
    finish_reason: str = "stop"
    prompt_tokens: int = 0
    completion_tokens: int = 0


def estimate_tokens(text: str) -> int:
    """A rough token count (4 characters a token), for the offline models' accounting."""
    return max(1, (len(text) + 3) // 4) if text else 0


def reply_failure(kind: str, rng: random.Random) -> tuple[str, str]:
    """The (text, finish_reason) of a returned failure: ``empty``, ``garbage``, ``refusal`` or ``truncated``."""
    if kind == "empty":
        return "", "stop"
    if kind == "garbage":
        return GARBAGE_TEXT, "stop"
    if kind == "refusal":
        return REFUSAL_TEXT, "stop"
    return _TRUNCATED_FULL[: rng.randint(5, len(_TRUNCATED_FULL) - 1)], "length"


def raised_failure(kind: str, retry_after: float, call_index: int) -> ProviderError:
    """The provider error of an injected failure of taxonomy ``kind`` at call ``call_index``."""
    where = f"(mock failure injected at call {call_index})"
    message = _MESSAGES.get(kind, f"injected {kind.replace('_', ' ')}")
    return ProviderError(
        f"{message} {where}", kind=kind, status_code=TAXONOMY_STATUS[kind], retry_after=retry_after if kind == "rate_limit" else None
    )
