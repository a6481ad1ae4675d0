"""What a model call is made of: the request, the response with its accounting, usage totals, the cache key.

Shared by the client, the response cache and the mocks, and importing none of them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

Messages = Sequence[Mapping[str, Any]]
# Parameters that must never reach a cache key, a transcript or a log.
SECRET_PARAMS = frozenset({"api_key", "api_token", "azure_ad_token", "aws_secret_access_key"})


class ModelRequest(BaseModel):
    """One chat completion request: model string, messages and sampling parameters."""

    model_config = ConfigDict(frozen=True)

    model: str
    messages: list[dict[str, Any]]
    params: dict[str, Any] = Field(default_factory=dict)  # temperature, max_tokens, ...

    @field_validator("params")
    @classmethod
    def _no_secrets(cls, params: dict[str, Any]) -> dict[str, Any]:
        secret = SECRET_PARAMS.intersection(params)
        if secret:
            raise ValueError(f"{sorted(secret)} must be given to ModelClient, not a request")
        return params

    def key(self) -> str:
        """This request's cache key."""
        return cache_key(self.model, self.messages, self.params)


class ModelResponse(BaseModel):
    """What one model call returned, with its accounting."""

    model: str
    text: str
    finish_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0  # of prompt_tokens, served from the provider's prompt cache (priced at the cached rate)
    cost_usd: float = 0.0
    cost_note: str | None = None  # why cost_usd is 0 when it is not known
    concurrency: float | None = None  # the client's adaptive concurrency limit when the call ended
    latency_s: float = 0.0
    retries: int = 0
    waits_s: list[float] = Field(default_factory=list)  # backoff before each retry
    cache_hit: bool = False
    cache_key: str = ""
    errors: list[str] = Field(default_factory=list)  # failed attempts, classified
    # A reply with function calls (``{"id", "name", "arguments"}``, arguments as the model wrote them), the
    # provider's reasoning text and its count of reasoning tokens (of completion_tokens), where it reports them.
    tool_calls: list[dict[str, Any]] | None = None
    reasoning: str | None = None
    reasoning_tokens: int = 0
    reasoning_cost_usd: float = 0.0  # of cost_usd: the reasoning tokens at the model's reasoning (else output) rate

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class UsageTotals(BaseModel):
    """Running totals over every call a client made."""

    calls: int = 0
    cache_hits: int = 0
    failed_calls: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0  # of completion_tokens
    cost_usd: float = 0.0
    errors_by_kind: dict[str, int] = Field(default_factory=dict)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def cache_key(model: str, messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of (model, messages, params), secrets left out."""
    public = {k: v for k, v in params.items() if k not in SECRET_PARAMS}
    canonical = json.dumps(
        {"model": model, "messages": messages, "params": public}, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def message_text(message: Mapping[str, Any]) -> str:
    """The text of a chat message, whether its content is a string or a list of parts."""
    content = message.get("content") or ""
    if isinstance(content, str):
        return content
    return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))


def last_user_text(messages: Messages) -> str:
    """The text of the last user message (empty if there is none)."""
    for message in reversed(messages):
        if message.get("role") == "user":
            return message_text(message)
    return ""
