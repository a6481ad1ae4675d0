"""Model-error texts and classes the other tests left free (mutants of `make mutation MODULES=errors`).

The message an endpoint failure prints is what a user acts on, so its parts are pinned here: the
resume hint, the HTTP status, the provider's own words for the kinds where they help. litellm's
exception classes decide the kind before the status code does (a refused connection arrives as a
500), which the classification must keep.
"""

from __future__ import annotations

import pytest

from harness.models.errors import EndpointDown, ErrorInfo, classify_error, fatal_cause


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
