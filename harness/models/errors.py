"""Errors of the model client and the classification of provider failures.

A failure of one model call is classified into a *kind* (``rate_limit``, ``timeout``,
``connection``, ``server_error``, ``malformed_response``, ``bad_request``, ``auth``,
``not_found``, ``api_error``, and the endpoint failures below) and whether a retry may
help. Transient kinds (rate limits, timeouts, connection errors, 5xx, a malformed
response body) are retried; client errors (4xx other than 429) never are. litellm's
exception classes are looked up by name on the lazily imported module, so this file
imports nothing heavy.

Fail fast: some failures say the endpoint cannot answer at all, so that every further
call would fail too (:data:`FATAL_KINDS`): ``connection_refused`` (nothing listens
there), ``dns`` (no such host), ``auth`` (HTTP 401/403: a wrong or missing key, no
permission), ``not_found`` (HTTP 404: no such model, or a wrong API base path),
``unknown_provider`` and ``unsupported_params`` (litellm refuses a parameter the model
does not take). litellm reports a refused connection or a failed DNS lookup as a
500 "Connection error.", so the exception chain is searched for the socket error.
The model client stops on these at once with :class:`EndpointDown`, as it does after
too many calls in a row have failed for good.
"""

from __future__ import annotations

import asyncio
import email.utils
import re
import time
from dataclasses import dataclass
from typing import Any

RETRYABLE_KINDS = frozenset({"rate_limit", "timeout", "connection", "server_error", "malformed_response"})
FATAL_KINDS = frozenset({"connection_refused", "dns", "auth", "not_found", "unknown_provider", "unsupported_params"})
_FATAL_CAUSES = {
    "connection_refused": "connection refused (nothing is listening at that address and port)",
    "dns": "DNS lookup failed (no such host)",
    "auth": "authentication failed: check the API key in the provider's environment variable and its permissions",
    "not_found": "not found: check the model name and the API base (an OpenAI-compatible server's ends in /v1)",
    "unknown_provider": "unknown provider: give the model as provider/model, e.g. openai/gpt-4o-mini",
    "unsupported_params": (
        "the model does not take one of the request's parameters (e.g. reasoning models take only "
        "--temperature 1; --model-arg drop_params=true lets litellm drop what a model does not take)"
    ),
}


class ModelConfigError(ValueError):
    """A model cannot be used as configured (unknown model, missing API key...)."""


class BudgetCapReached(RuntimeError):
    """A cost or token cap was reached; checked before each (non-cached) call starts."""


SHARED_CAP_REFUSAL = "shared cost cap reached"  # a sweep's limiter refused the call (harness.sweep.limiter): a BudgetCapReached


class EndpointDown(RuntimeError):
    """The model endpoint cannot be used (see :data:`FATAL_KINDS`), or too many calls in a row failed.

    Not a :class:`ModelCallError`: an agent never turns it into a forfeit. It stops the
    run; the game in progress is not recorded, and a resumed run plays it again. ``errors``: the attempts of the
    call that found the endpoint down, where known (one line each, as :attr:`ModelCallError.errors`).
    """

    def __init__(
        self, endpoint: str, cause: str, *, kind: str, status_code: int | None = None, run_dir: str | None = None,
        errors: tuple[str, ...] = (),
    ) -> None:  # fmt: skip
        self.endpoint, self.cause, self.kind, self.status_code, self.run_dir = endpoint, cause, kind, status_code, run_dir
        self.errors = errors
        message = f"model endpoint {endpoint} failed: {cause}"
        if run_dir is not None:
            message += (
                f"; the run stopped before spending more of its budget (the game in progress is not counted); "
                f"once the endpoint works, continue it with: arena run --resume {run_dir}"
            )
        super().__init__(message)

    def in_run(self, run_dir: str) -> EndpointDown:
        """The same failure, its message naming the run to resume."""
        return EndpointDown(self.endpoint, self.cause, kind=self.kind, status_code=self.status_code, run_dir=run_dir, errors=self.errors)


REPLAYED = "(replayed from the response cache)"  # ends the message of a failure met again from the cache (no request)
_FINAL_KIND = re.compile(r"attempt\(s\): ([a-z_]+)")


def attempt_failures(
    errors: list[str], retries: int, verdict: str | None, reason: str | None, cache_hit: bool
) -> tuple[list[str], str | None]:
    """The requests of one call record that failed, by kind: (the kinds of the attempts that were retried, the kind of
    the attempt that failed for good or None).

    ``errors`` holds one ``kind...: message`` line per failed attempt (:meth:`ErrorInfo.describe`): the ``retries``
    retried ones, then, on a call that failed for good, its final attempt's (a record that lists only the retried
    ones: the final kind is read from the failure's message, ``reason``). A cache hit or a failure replayed from
    the cache made no request: nothing.
    """
    if cache_hit or (reason or "").endswith(REPLAYED):
        return [], None
    kinds = [re.split(r"[\s:]", error, maxsplit=1)[0] for error in errors]
    if verdict != "call_failed":
        return kinds, None
    if len(kinds) > retries:  # the final attempt listed last
        return kinds[:-1], kinds[-1]
    found = _FINAL_KIND.search(reason or "")
    return kinds, found.group(1) if found else "unknown"


def fatal_cause(kind: str, status_code: int | None, detail: str) -> str | None:
    """Why a failure of ``kind`` means the endpoint cannot answer (None when it may be transient)."""
    if kind not in FATAL_KINDS:
        return None
    cause = _FATAL_CAUSES[kind]
    if kind == "auth" and status_code == 403:
        cause = "permission denied: the API key has no access to this model or endpoint"
    status = f" (HTTP {status_code})" if status_code else ""
    said = f"; it said: {detail[:160]}" if detail and kind in ("auth", "not_found", "unsupported_params") else ""
    return f"{cause}{status}{said}"


class ProviderError(Exception):
    """A failure raised by a provider that is not litellm (the mock model) or re-raised
    by the client once retries are exhausted or the failure is not retryable."""

    def __init__(self, message: str, *, kind: str, status_code: int | None = None, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.status_code = status_code
        self.retry_after = retry_after

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE_KINDS


class ModelCallError(ProviderError):
    """A model call failed for good: ``kind`` says how, ``errors`` lists every attempt."""

    def __init__(self, message: str, *, kind: str, status_code: int | None, errors: list[str], retries: int) -> None:
        super().__init__(message, kind=kind, status_code=status_code)
        self.errors = errors
        self.retries = retries


@dataclass(frozen=True)
class ErrorInfo:
    """How one failed attempt is classified."""

    kind: str
    retryable: bool
    status_code: int | None
    retry_after: float | None
    message: str

    def describe(self) -> str:
        status = f" HTTP {self.status_code}" if self.status_code else ""
        after = f", retry after {self.retry_after:g} s" if self.retry_after is not None else ""
        return f"{self.kind}{status}{after}: {self.message[:200]}"


# Most specific first: litellm's Timeout subclasses APIConnectionError, its
# ContextWindowExceededError subclasses BadRequestError, and so on.
_LITELLM_KINDS: tuple[tuple[str, str], ...] = (
    ("RateLimitError", "rate_limit"),
    ("Timeout", "timeout"),
    ("APIResponseValidationError", "malformed_response"),
    ("AuthenticationError", "auth"),
    ("PermissionDeniedError", "auth"),
    ("NotFoundError", "not_found"),
    ("BadRequestError", "bad_request"),
    ("UnprocessableEntityError", "bad_request"),
    ("InternalServerError", "server_error"),
    ("ServiceUnavailableError", "server_error"),
    ("BadGatewayError", "server_error"),
    ("APIConnectionError", "connection"),
)


def classify_error(exc: BaseException) -> ErrorInfo:
    """Classify a failed attempt; works for litellm, the mock model and asyncio timeouts."""
    message = str(exc) or type(exc).__name__
    status = _status_code(exc)
    retry_after = retry_after_seconds(exc)
    if isinstance(exc, ProviderError):
        return ErrorInfo(exc.kind, exc.retryable, exc.status_code, exc.retry_after, message)
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return ErrorInfo("timeout", True, None, None, message or "call timed out")
    kind = _network_kind(exc, message)
    if kind is not None:
        return ErrorInfo(kind, False, status if kind in ("unknown_provider", "unsupported_params") else None, None, message)
    kind = _litellm_kind(exc)
    if kind is None:
        kind = _kind_from_status(status) if status else _kind_from_text(message)
    if kind in ("api_error", "server_error") and _looks_malformed(message):
        kind = "malformed_response"
    return ErrorInfo(kind, kind in RETRYABLE_KINDS, status, retry_after, message)


_REFUSED_TEXT = ("connection refused", "connect call failed", "actively refused")
_DNS_TEXT = (
    "name or service not known",
    "nodename nor servname",
    "temporary failure in name resolution",
    "getaddrinfo failed",
    "no address associated with hostname",
    "name resolution",
)


def _network_kind(exc: BaseException, message: str) -> str | None:
    """``connection_refused``, ``dns``, ``unknown_provider`` or ``unsupported_params`` when the exception (or one it wraps) says so."""
    if "llm provider not provided" in message.lower():
        return "unknown_provider"
    if type(exc).__name__ == "UnsupportedParamsError" or "unsupportedparamserror" in message.lower():
        return "unsupported_params"
    import socket

    seen: BaseException | None = exc
    for _ in range(12):  # litellm wraps openai's error, which wraps httpx's, which wraps the socket's
        if seen is None:
            break
        if isinstance(seen, ConnectionRefusedError):
            return "connection_refused"
        if isinstance(seen, socket.gaierror):
            return "dns"
        text = str(seen).lower()
        if any(marker in text for marker in _REFUSED_TEXT):
            return "connection_refused"
        if any(marker in text for marker in _DNS_TEXT):
            return "dns"
        seen = seen.__cause__ or seen.__context__
    return None


def _litellm_kind(exc: BaseException) -> str | None:
    import sys

    litellm = sys.modules.get("litellm")  # only classes of an already imported litellm
    if litellm is None:
        return None
    for class_name, kind in _LITELLM_KINDS:
        cls = getattr(litellm, class_name, None)
        if isinstance(cls, type) and isinstance(exc, cls):
            return kind
    return None


def _kind_from_status(status: int) -> str:
    if status == 429:
        return "rate_limit"
    if status in (408, 504):
        return "timeout"
    if status >= 500:
        return "server_error"
    if status in (401, 403):
        return "auth"
    if status == 404:
        return "not_found"
    if 400 <= status < 500:
        return "bad_request"
    return "api_error"


def _kind_from_text(message: str) -> str:
    lowered = message.lower()
    if "timed out" in lowered or "timeout" in lowered:
        return "timeout"
    if "connection" in lowered:
        return "connection"
    return "api_error"


_MALFORMED_MARKERS = (
    "expecting value",
    "jsondecodeerror",
    "unterminated string",
    "expecting property name",
    "expecting ',' delimiter",
    "extra data",
    "invalid json",
    "not valid json",
    "malformed",
)


def _looks_malformed(message: str) -> bool:
    """litellm reports a 200 with an unparseable body as a 500 carrying the JSON error."""
    lowered = message.lower()
    return any(marker in lowered for marker in _MALFORMED_MARKERS)


def _status_code(exc: BaseException) -> int | None:
    for attr in ("status_code", "status"):
        value = getattr(exc, attr, None)
        if isinstance(value, int):
            return value
    response = getattr(exc, "response", None)
    value = getattr(response, "status_code", None)
    return value if isinstance(value, int) else None


def retry_after_seconds(exc: BaseException) -> float | None:
    """The server's Retry-After (seconds), from an attribute or the response headers."""
    value = getattr(exc, "retry_after", None)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return max(0.0, float(value))
    for headers in (
        getattr(exc, "headers", None),
        getattr(exc, "litellm_response_headers", None),  # where litellm keeps them
        getattr(getattr(exc, "response", None), "headers", None),
    ):
        parsed = _retry_after_from_headers(headers)
        if parsed is not None:
            return parsed
    return None


def _retry_after_from_headers(headers: Any) -> float | None:
    if not headers:
        return None
    try:
        lowered = {str(k).lower(): str(v) for k, v in dict(headers).items()}
    except (TypeError, ValueError):
        return None
    if "retry-after-ms" in lowered:
        try:
            return max(0.0, float(lowered["retry-after-ms"]) / 1000.0)
        except ValueError:
            pass
    raw = lowered.get("retry-after")
    if raw is None:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:  # an HTTP date
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
