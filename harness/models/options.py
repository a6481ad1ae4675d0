"""How a run talks to its model: the endpoint, sampling, reply length, timeout, pass-through arguments.

:class:`ModelOptions` is recorded in a run's manifest (inside the run config), so it
must never hold a secret: API keys come from the provider's environment variable
(``OPENAI_API_KEY``, ...), and a pass-through argument whose name looks like a key,
a token, a password or a header (``api_key``, ``extra_headers``, ``Authorization``)
is refused with an error saying so. A string value that looks like an API key
(``sk-...``) is refused too.

Two kinds of option:

- per request (part of every request's parameters, and so of its cache key):
  ``temperature``, ``top_p``, ``max_reply_tokens`` (litellm's ``max_tokens``),
  ``reasoning_effort`` and ``model_args`` (passed to ``litellm.acompletion`` as they are);
  :meth:`ModelOptions.request_params` lays them over an agent's own defaults;
- per client: ``api_base``, ``timeout`` (seconds per attempt),
  ``max_consecutive_failures`` (the run stops when this many calls in a row fail
  for good; see :class:`harness.models.errors.EndpointDown`) and the model's price,
  ``price_per_mtok_in`` and ``price_per_mtok_out`` (US dollars per million prompt and reply
  tokens; both or neither): given, every reply is costed at it (:meth:`ModelOptions.price`),
  which lets a cost cap hold for a model litellm's price table does not know
  (:mod:`harness.models.pricing`).
"""

from __future__ import annotations

import re
from typing import Any, Literal
from urllib.parse import parse_qsl, urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from harness.models.messages import ModelResponse

REASONING_EFFORTS = ("minimal", "low", "medium", "high")
DEFAULT_TIMEOUT_S = 60.0
DEFAULT_MAX_CONSECUTIVE_FAILURES = 5

# Names that look like credentials: never passed through a recorded config.
_SECRET_NAME = re.compile(r"key|auth|header|secret|passw|credential|cookie|bearer|token", re.IGNORECASE)
_TOKEN_COUNT = re.compile(r"tokens|token_(?:count|limit|budget)|num_token", re.IGNORECASE)
_SECRET_VALUE = re.compile(r"(?<![A-Za-z0-9])(?:sk|key)-[A-Za-z0-9_-]{16,}")
# Pass-through names that have their own option, or that the harness sets itself.
_OWN_OPTION = {
    "temperature": "--temperature",
    "top_p": "--top-p",
    "max_tokens": "--max-reply-tokens",
    "max_completion_tokens": "--max-reply-tokens",
    "reasoning_effort": "--reasoning-effort",
    "timeout": "--timeout",
    "request_timeout": "--timeout",
    "api_base": "--api-base",
    "base_url": "--api-base",
}
_HARNESS_SETS = frozenset({"model", "messages", "stream", "max_retries", "num_retries"})


class ModelOptions(BaseModel):
    """The model options of a run (see the module docstring); every field is optional."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    api_base: str | None = None
    temperature: float | None = Field(default=None, ge=0)
    top_p: float | None = Field(default=None, gt=0, le=1)
    max_reply_tokens: int | None = Field(default=None, ge=1)
    reasoning_effort: Literal["minimal", "low", "medium", "high"] | None = None
    timeout: float = Field(default=DEFAULT_TIMEOUT_S, gt=0)
    max_consecutive_failures: int = Field(default=DEFAULT_MAX_CONSECUTIVE_FAILURES, ge=1)
    model_args: dict[str, Any] = Field(default_factory=dict)
    # US dollars per million prompt tokens, and per million reply tokens; recorded only when given
    price_per_mtok_in: float | None = Field(default=None, ge=0, exclude_if=lambda price: price is None)
    price_per_mtok_out: float | None = Field(default=None, ge=0, exclude_if=lambda price: price is None)

    @model_validator(mode="after")
    def _both_prices(self) -> ModelOptions:
        if (self.price_per_mtok_in is None) != (self.price_per_mtok_out is None):
            raise ValueError(
                "give the model's price both ways: --price-per-mtok-in and --price-per-mtok-out "
                "(US dollars per million prompt tokens and per million reply tokens)"
            )
        return self

    @property
    def priced(self) -> bool:
        """Whether the model's price was given (then every reply is costed at it)."""
        return self.price_per_mtok_in is not None and self.price_per_mtok_out is not None

    def price(self, response: ModelResponse) -> ModelResponse:
        """``response`` costed at the given price (prompt tokens served from a provider cache at the full rate);
        unchanged when no price was given."""
        if self.price_per_mtok_in is None or self.price_per_mtok_out is None:
            return response
        cost = (response.prompt_tokens * self.price_per_mtok_in + response.completion_tokens * self.price_per_mtok_out) / 1e6
        note = f"at the given price: ${self.price_per_mtok_in:g} in, ${self.price_per_mtok_out:g} out per million tokens"
        return response.model_copy(update={"cost_usd": cost, "cost_note": note})

    @field_validator("api_base")
    @classmethod
    def _plain_url(cls, api_base: str | None) -> str | None:
        if api_base is None:
            return None
        parts = urlsplit(api_base)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"{api_base!r} is not a URL: give http(s)://host:port/path, e.g. http://localhost:8000/v1")
        if parts.username or parts.password or any(_SECRET_NAME.search(name) for name, _ in parse_qsl(parts.query)):
            raise ValueError(
                "the API base must not carry credentials (user:password@ or a key in the query): "
                "it is recorded in the run; put the key in the provider's environment variable"
            )
        return api_base

    @field_validator("model_args")
    @classmethod
    def _no_secrets_or_clashes(cls, args: dict[str, Any]) -> dict[str, Any]:
        for name in args:
            if name in _OWN_OPTION:
                raise ValueError(f"model argument {name!r} has its own option: use {_OWN_OPTION[name]}")
            if name in _HARNESS_SETS:
                raise ValueError(f"model argument {name!r} is set by the harness and cannot be passed through")
        secret = _secret_places(args)
        if secret:
            raise ValueError(
                f"model argument {secret[0]} looks like a credential (a key, token, password or header); "
                "the run's options are recorded in its manifest, so keys are read only from the provider's "
                "environment variable (e.g. export OPENAI_API_KEY=...)"
            )
        return args

    def request_params(self, defaults: dict[str, Any] | None = None) -> dict[str, Any]:
        """The parameters of one request: ``defaults`` (an agent's own) with every option that is set laid over them."""
        params = dict(defaults or {})
        for field, name in (
            ("temperature", "temperature"),
            ("top_p", "top_p"),
            ("max_reply_tokens", "max_tokens"),
            ("reasoning_effort", "reasoning_effort"),
        ):
            value = getattr(self, field)
            if value is not None:
                params[name] = value
        params.update(self.model_args)
        return params


def _secret_places(value: Any, path: str = "") -> list[str]:
    """Where a nested value holds a credential-like name or an API-key-like string."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{path}.{key}" if path else repr(str(key))
            name = str(key)
            if _SECRET_NAME.search(name) and not _TOKEN_COUNT.search(name):
                found.append(here)
            else:
                found.extend(_secret_places(item, here))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found.extend(_secret_places(item, f"{path}[{index}]"))
    elif isinstance(value, str) and _SECRET_VALUE.search(value):
        found.append(f"{path} (its value)" if path else "a value")
    return found
