"""Model-error classification at the status-code boundaries: which failures are retried and which are not."""

from __future__ import annotations

import pytest

from harness.models.errors import RETRYABLE_KINDS, ProviderError, classify_error


class HttpError(Exception):
    """An error carrying an HTTP status the way provider SDKs do (``status_code``)."""

    def __init__(self, status: int, message: str = "request failed") -> None:
        super().__init__(message)
        self.status_code = status


class Response:
    def __init__(self, status: int) -> None:
        self.status_code = status


class WrappedError(Exception):
    """An error whose status sits on its ``response`` (httpx style)."""

    def __init__(self, status: int) -> None:
        super().__init__("wrapped")
        self.response = Response(status)


@pytest.mark.parametrize(
    ("status", "kind", "retried"),
    [
        (399, "api_error", False),
        (400, "bad_request", False),
        (401, "auth", False),
        (403, "auth", False),
        (404, "not_found", False),
        (407, "bad_request", False),
        (408, "timeout", True),
        (409, "bad_request", False),
        (428, "bad_request", False),
        (429, "rate_limit", True),
        (430, "bad_request", False),
        (499, "bad_request", False),
        (500, "server_error", True),
        (503, "server_error", True),
        (504, "timeout", True),
        (599, "server_error", True),
    ],
)
def test_status_codes_at_their_boundaries(status, kind, retried):
    for error in (HttpError(status), WrappedError(status)):
        info = classify_error(error)
        assert (info.kind, info.retryable, info.status_code) == (kind, retried, status)
        assert (info.kind in RETRYABLE_KINDS) is retried


def test_a_server_error_with_a_broken_body_is_a_malformed_response_and_retried():
    info = classify_error(HttpError(502, "JSONDecodeError: Expecting value: line 1 column 1"))
    assert (info.kind, info.retryable) == ("malformed_response", True)
    client_error = classify_error(HttpError(400, "Expecting value: line 1 column 1"))
    assert (client_error.kind, client_error.retryable) == ("bad_request", False)


@pytest.mark.parametrize(
    ("error", "kind", "retried"),
    [
        (TimeoutError(), "timeout", True),
        (TimeoutError("read timed out"), "timeout", True),
        (RuntimeError("Connection reset by peer"), "connection", True),
        (RuntimeError("the request timed out upstream"), "timeout", True),
        (RuntimeError("something else went wrong"), "api_error", False),
        (ProviderError("slow down", kind="rate_limit", status_code=429, retry_after=2.5), "rate_limit", True),
    ],
)
def test_errors_without_a_status(error, kind, retried):
    info = classify_error(error)
    assert (info.kind, info.retryable) == (kind, retried)


def test_attempt_failures_counts_each_failed_request_once_by_kind():
    from harness.models.errors import REPLAYED, attempt_failures

    retried = ["rate_limit: HTTP 429", "server_error: HTTP 500"]
    assert attempt_failures(retried, 2, "legal", None, False) == (["rate_limit", "server_error"], None)
    assert attempt_failures([*retried, "timeout: no answer"], 2, "call_failed", None, False) == (["rate_limit", "server_error"], "timeout")
    assert attempt_failures(retried, 2, "call_failed", "failed after 3 attempt(s): api_error (HTTP 502)", False)[1] == "api_error"
    assert attempt_failures(retried, 2, "call_failed", "no kind named here", False) == (["rate_limit", "server_error"], "unknown")
    assert attempt_failures(retried, 2, "call_failed", None, True) == ([], None)  # a cache hit made no request
    assert attempt_failures(retried, 2, "call_failed", f"x{REPLAYED}", False) == ([], None)
