"""Model-error paths the first mutation tests left free (survivors of the second `make mutation` run of `errors`).

A Retry-After read by ``classify_error`` itself (not only by ``retry_after_seconds``), the headers litellm
keeps on ``litellm_response_headers``, and a litellm module that lacks some of the exception classes the
classification looks up by name (an older or newer litellm than the pinned one).
"""

from __future__ import annotations

import sys
import types

import pytest

from harness.models.errors import classify_error, retry_after_seconds


class RateLimited(Exception):
    """An HTTP 429 whose Retry-After sits in the headers, the way provider SDKs raise it."""

    def __init__(self, headers: dict[str, str]) -> None:
        super().__init__("rate limited")
        self.status_code = 429
        self.headers = headers


class LitellmStyle(Exception):
    """An error carrying its headers where litellm keeps them (``litellm_response_headers``)."""

    def __init__(self, headers: dict[str, str]) -> None:
        super().__init__("slow down")
        self.litellm_response_headers = headers


def test_classify_error_carries_the_retry_after_of_a_rate_limit():
    info = classify_error(RateLimited({"Retry-After": "3"}))
    assert (info.kind, info.status_code, info.retry_after, info.retryable) == ("rate_limit", 429, 3.0, True)
    assert info.describe() == "rate_limit HTTP 429, retry after 3 s: rate limited"


def test_classify_error_has_no_retry_after_when_the_server_sent_none():
    assert classify_error(RateLimited({})).retry_after is None


def test_retry_after_is_read_from_litellms_response_headers():
    assert retry_after_seconds(LitellmStyle({"retry-after": "7"})) == 7.0
    assert retry_after_seconds(LitellmStyle({"Retry-After-Ms": "250"})) == 0.25
    assert classify_error(LitellmStyle({"Retry-After": "2"})).retry_after == 2.0


def test_a_litellm_without_some_exception_classes_still_classifies(monkeypatch: pytest.MonkeyPatch):
    class RateLimitError(Exception):
        pass

    partial = types.ModuleType("litellm")
    partial.RateLimitError = RateLimitError  # type: ignore[attr-defined]  # the other eleven classes missing
    monkeypatch.setitem(sys.modules, "litellm", partial)
    assert classify_error(RateLimitError("busy")).kind == "rate_limit"
    assert classify_error(RuntimeError("socket closed: connection reset")).kind == "connection"
