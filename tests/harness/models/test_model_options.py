"""Model options: validation with clear errors, no credentials, and every option arriving at the server as given."""

from __future__ import annotations

import asyncio
import os

import pytest
from pydantic import ValidationError

from harness.testing.stub_server import StubServer, ok, stall

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from harness.models.client import ModelClient  # noqa: E402
from harness.models.errors import ModelCallError  # noqa: E402
from harness.models.options import ModelOptions  # noqa: E402

MODEL = "openai/stub-model"
KEY = "test-key-not-a-secret"

# Shaped like a provider key (the refusal is tested) but assembled here, so no key-like literal is in the file.
FAKE_KEY = "sk" + "-" + "x" * 24


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"temperature": -0.1}, "greater than or equal to 0"),
        ({"top_p": 0}, "greater than 0"),
        ({"top_p": 1.5}, "less than or equal to 1"),
        ({"timeout": 0}, "greater than 0"),
        ({"max_reply_tokens": 0}, "greater than or equal to 1"),
        ({"max_consecutive_failures": 0}, "greater than or equal to 1"),
        ({"reasoning_effort": "huge"}, "'minimal', 'low', 'medium' or 'high'"),
        ({"api_base": "localhost:8000"}, "give http(s)://host:port/path"),
        ({"api_base": "https://user:pw@example.com/v1"}, "must not carry credentials"),
        ({"api_base": "https://example.com/v1?api_key=abc"}, "must not carry credentials"),
        ({"model_args": {"api_key": "abc"}}, "looks like a credential"),
        ({"model_args": {"extra_headers": {"X-Id": "1"}}}, "looks like a credential"),
        ({"model_args": {"Authorization": "Bearer abc"}}, "looks like a credential"),
        ({"model_args": {"extra_body": {"access_token": "abc"}}}, "looks like a credential"),
        ({"model_args": {"user": FAKE_KEY}}, "looks like a credential"),
        ({"model_args": {"temperature": 0.5}}, "use --temperature"),
        ({"model_args": {"max_tokens": 9}}, "use --max-reply-tokens"),
        ({"model_args": {"stream": True}}, "set by the harness"),
        ({"surprise": 1}, "extra inputs are not permitted"),
    ],
)
def test_bad_options_are_refused_with_what_would_be_right(options, fragment):
    with pytest.raises(ValidationError) as caught:
        ModelOptions(**options)
    assert fragment.lower() in str(caught.value).lower()


def test_credential_errors_point_at_the_environment_variable():
    with pytest.raises(ValidationError, match="environment variable"):
        ModelOptions(model_args={"api_key": "abc"})


def test_token_counts_are_not_mistaken_for_secrets():
    options = ModelOptions(model_args={"thinking": {"type": "enabled", "budget_tokens": 1024}, "top_k": 5})
    assert options.model_args["thinking"]["budget_tokens"] == 1024


def test_request_params_lay_the_options_over_the_agents_defaults():
    assert ModelOptions().request_params({"temperature": 0.0}) == {"temperature": 0.0}
    options = ModelOptions(temperature=0.7, top_p=0.9, max_reply_tokens=64, reasoning_effort="low", model_args={"seed": 7})
    assert options.request_params({"temperature": 0.0}) == {
        "temperature": 0.7,
        "top_p": 0.9,
        "max_tokens": 64,
        "reasoning_effort": "low",
        "seed": 7,
    }


def test_every_option_arrives_at_the_server_as_given():
    options = ModelOptions(
        temperature=0.7,
        top_p=0.9,
        max_reply_tokens=64,
        reasoning_effort="high",
        model_args={"seed": 7, "stop": ["\n\n"], "extra_body": {"top_k": 5}, "min_p": 0.05},
    )
    with StubServer() as stub:
        client = ModelClient(MODEL, api_key=KEY, options=options.model_copy(update={"api_base": stub.url}))
        request = client.request([{"role": "user", "content": "Your move?"}], temperature=0.0)
        assert asyncio.run(client.complete(request)).text == "d3"
        (params,) = stub.params
    assert params["temperature"] == 0.7 and params["top_p"] == 0.9 and params["max_tokens"] == 64
    assert params["reasoning_effort"] == "high" and params["seed"] == 7 and params["stop"] == ["\n\n"]
    assert params["top_k"] == 5 and params["min_p"] == 0.05  # extra_body is merged into the body by the SDK
    assert request.params["temperature"] == 0.7  # the options are part of the request, and so of its cache key


def test_the_timeout_option_bounds_each_attempt():
    with StubServer() as stub:
        stub.enqueue(stall(), ok("c4"))
        client = ModelClient(MODEL, api_key=KEY, backoff_base_s=0.001, options=ModelOptions(api_base=stub.url, timeout=0.5))
        assert client.timeout_s == 0.5
        response = asyncio.run(client.complete(client.request([{"role": "user", "content": "Your move?"}])))
        assert response.text == "c4" and response.errors[0].startswith("timeout")
        stub.default = stall()
        client = ModelClient(MODEL, api_key=KEY, max_retries=0, options=ModelOptions(api_base=stub.url, timeout=0.5))
        with pytest.raises(ModelCallError) as caught:
            asyncio.run(client.complete(client.request([{"role": "user", "content": "another"}])))
        assert caught.value.kind == "timeout"
