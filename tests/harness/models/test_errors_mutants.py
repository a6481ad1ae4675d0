"""Model-error texts and classes the other tests left free (mutants of `make mutation MODULES=errors`).

The message an endpoint failure prints is what a user acts on, so its parts are pinned here: the
resume hint, the HTTP status, the provider's own words for the kinds where they help. litellm's
exception classes decide the kind before the status code does (a refused connection arrives as a
500), which the classification must keep.
"""

from __future__ import annotations

import email.utils
from datetime import UTC, datetime, timedelta

import pytest

from harness.models.errors import EndpointDown, ErrorInfo, ProviderError, classify_error, fatal_cause, retry_after_seconds


def test_endpoint_down_names_the_run_to_resume_only_when_given_one():
    plain = EndpointDown("http://localhost:9/v1", "DNS lookup failed", kind="dns")
    assert str(plain) == "model endpoint http://localhost:9/v1 failed: DNS lookup failed"
    in_run = plain.in_run("runs/r1")
    assert str(in_run).startswith("model endpoint http://localhost:9/v1 failed: DNS lookup failed; the run stopped")
    assert str(in_run).endswith("continue it with: arena run --resume runs/r1")
    assert (in_run.endpoint, in_run.cause, in_run.kind, in_run.run_dir) == ("http://localhost:9/v1", "DNS lookup failed", "dns", "runs/r1")


def test_in_run_keeps_the_status_code():
    down = EndpointDown("e", "auth failed", kind="auth", status_code=401).in_run("runs/r2")
    assert down.status_code == 401 and down.kind == "auth"


def test_fatal_cause_for_403_says_permission_denied_with_the_status_and_the_reply():
    cause = fatal_cause("auth", 403, "no access to gpt-x")
    assert cause == "permission denied: the API key has no access to this model or endpoint (HTTP 403); it said: no access to gpt-x"


def test_fatal_cause_without_status_or_detail_adds_nothing():
    assert fatal_cause("dns", None, "") == "DNS lookup failed (no such host)"
    assert fatal_cause("auth", None, "") == (
        "authentication failed: check the API key in the provider's environment variable and its permissions"
    )


@pytest.mark.parametrize("kind", ["auth", "not_found", "unsupported_params"])
def test_fatal_cause_quotes_the_reply_for_the_kinds_it_explains(kind):
    cause = fatal_cause(kind, None, "x" * 200)
    assert cause is not None and cause.endswith("; it said: " + "x" * 160)


@pytest.mark.parametrize("kind", ["dns", "connection_refused", "unknown_provider"])
def test_fatal_cause_does_not_quote_the_reply_for_network_kinds(kind):
    cause = fatal_cause(kind, None, "some reply")
    assert cause is not None and "it said" not in cause


def test_fatal_cause_is_none_for_transient_kinds():
    assert fatal_cause("rate_limit", 429, "slow down") is None


def test_litellm_classes_decide_before_the_status_code():
    import litellm  # imported here: importing the model layer alone must not import it

    connection = litellm.APIConnectionError(message="peer reset", llm_provider="openai", model="gpt-x")
    assert connection.status_code == 500  # the status alone would say server_error
    info = classify_error(connection)
    assert info.kind == "connection" and info.retryable
    invalid = litellm.APIResponseValidationError(message="odd body", llm_provider="openai", model="gpt-x")
    assert classify_error(invalid).kind == "malformed_response"


def test_a_message_saying_timeout_is_a_timeout():
    assert classify_error(RuntimeError("upstream Timeout after 30s")).kind == "timeout"
    assert classify_error(RuntimeError("read timeout")).retryable


def test_error_info_describe_shows_status_only_when_known_and_cuts_the_message_at_200():
    assert ErrorInfo("timeout", True, None, None, "slow").describe() == "timeout: slow"
    assert ErrorInfo("rate_limit", True, 429, 2.5, "busy").describe() == "rate_limit HTTP 429, retry after 2.5 s: busy"
    assert ErrorInfo("api_error", False, None, None, "y" * 300).describe() == "api_error: " + "y" * 200


class UnsupportedParamsError(Exception):
    """Named like litellm's: the class name alone marks it."""


def test_unsupported_params_is_known_by_the_class_name_or_by_the_message():
    assert classify_error(UnsupportedParamsError("temperature=0 is not supported")).kind == "unsupported_params"
    wrapped = RuntimeError("litellm.UnsupportedParamsError: gpt-x does not support temperature")
    assert classify_error(wrapped).kind == "unsupported_params"


class HeaderError(Exception):
    def __init__(self, headers: dict[str, str]) -> None:
        super().__init__("rate limited")
        self.headers = headers


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"Retry-After-Ms": "1500"}, 1.5),
        ({"retry-after-ms": "-20"}, 0.0),
        ({"retry-after-ms": "soon", "Retry-After": "3"}, 3.0),
        ({"Retry-After": "-1"}, 0.0),
        ({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),  # a date in the past
    ],
)
def test_retry_after_from_headers(headers, seconds):
    assert retry_after_seconds(HeaderError(headers)) == seconds


def chained(depth: int) -> Exception:
    """A refused connection wrapped ``depth - 1`` times (the socket's error at link ``depth``)."""
    error: Exception = ConnectionRefusedError("refused")
    for level in range(depth - 1):
        try:
            raise RuntimeError(f"wrapper {level}") from error
        except RuntimeError as wrapper:
            error = wrapper
    return error


def test_the_socket_error_is_looked_for_twelve_links_deep():
    assert classify_error(chained(12)).kind == "connection_refused"
    assert classify_error(chained(13)).kind != "connection_refused"


def test_retry_after_ms_is_milliseconds_and_a_future_date_counts_down():
    assert retry_after_seconds(HeaderError({"retry-after-ms": "200"})) == 0.2
    in_an_hour = email.utils.format_datetime(datetime.now(UTC) + timedelta(hours=1), usegmt=True)
    seconds = retry_after_seconds(HeaderError({"Retry-After": in_an_hour}))
    assert seconds is not None and 3000 < seconds <= 3600


def test_classify_error_keeps_messages_and_provider_details():
    assert classify_error(KeyError()).message == "KeyError"  # an empty message: the class name instead
    assert classify_error(TimeoutError()).message == "TimeoutError"
    assert classify_error(TimeoutError("deadline passed")).message == "deadline passed"
    provider = classify_error(ProviderError("busy", kind="rate_limit", status_code=429, retry_after=2.0))
    assert (provider.kind, provider.status_code, provider.retry_after, provider.retryable) == ("rate_limit", 429, 2.0, True)


class StatusError(Exception):
    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status_code = status


def test_unknown_provider_keeps_its_status_and_refused_connections_drop_it():
    unknown = classify_error(StatusError("LLM Provider NOT provided. Pass in the LLM provider", 400))
    assert (unknown.kind, unknown.status_code, unknown.retryable) == ("unknown_provider", 400, False)
    refused = classify_error(StatusError("Connection error: connect call failed", 500))
    assert (refused.kind, refused.status_code) == ("connection_refused", None)


class AttributeRetry(Exception):
    def __init__(self, retry_after: object) -> None:
        super().__init__("slow down")
        self.retry_after = retry_after


class ResponseWithHeaders:
    def __init__(self, headers: dict[str, str], status_code: object = 429) -> None:
        self.headers, self.status_code = headers, status_code


class ResponseError(Exception):
    def __init__(self, response: ResponseWithHeaders) -> None:
        super().__init__("from the response")
        self.response = response


def test_retry_after_from_the_attribute_or_the_response_headers():
    assert retry_after_seconds(AttributeRetry(2.5)) == 2.5
    assert retry_after_seconds(AttributeRetry(-3)) == 0.0
    assert retry_after_seconds(AttributeRetry(True)) is None  # a flag, not a number of seconds
    assert retry_after_seconds(ResponseError(ResponseWithHeaders({"Retry-After": "4"}))) == 4.0


class AiohttpStyle(Exception):
    def __init__(self, status: int) -> None:
        super().__init__("failed")
        self.status = status


def test_status_is_read_from_status_or_an_integer_response_status_code():
    assert classify_error(AiohttpStyle(503)).status_code == 503
    assert classify_error(ResponseError(ResponseWithHeaders({}, status_code="429"))).status_code is None


def test_unsupported_params_keeps_its_status_and_an_unparseable_body_is_malformed():
    info = classify_error(StatusError("litellm.UnsupportedParamsError: temperature", 400))
    assert (info.kind, info.status_code) == ("unsupported_params", 400)
    assert classify_error(RuntimeError("Expecting value: line 1 column 1 (char 0)")).kind == "malformed_response"
