"""The OpenAI-compatible chat-completions call made straight over aiohttp, without litellm.

For an ``openai/<name>`` model served at a given API base (a self-hosted OpenAI-compatible
server: vLLM, llama.cpp, the stub server of :mod:`harness.testing`) whose name litellm does not
know, litellm adds nothing but its own per-call work (about 12 ms of CPU a call: request
transformation, logging objects, a failed price look-up), which caps a run's calls per second
long before the server does. :func:`direct_path` says when a request takes this path instead:

- the model is ``openai/<name>``, an API base is set, and neither ``openai/<name>`` nor
  ``<name>`` is in litellm's price table (a model litellm knows keeps litellm: its pricing,
  and the parameter rules of the models it knows, e.g. an o-series model's temperature);
- every request parameter is a plain OpenAI chat-completions body field
  (:data:`BODY_PARAMS`); a litellm-only argument (``drop_params``...) keeps litellm.

:func:`complete_direct` posts ``{"model": <name>, "messages": ..., **params}`` to
``<api base>/chat/completions`` and reads the reply as litellm's openai provider does. Failures
are raised as :class:`~harness.models.errors.ProviderError` with the kind the status code says
(429 with its Retry-After, 401/403, 404, 5xx...), a body that is not a completion as
``malformed_response``, and a refused connection or failed DNS look-up as the fatal kinds of
:func:`~harness.models.errors.classify_error`. The model client's concurrency limit, retries,
timeouts, cache and accounting are the same on both paths; :func:`response_from_litellm` reads the
reply of the other path.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from harness.models.errors import ProviderError, _kind_from_status, _network_kind, _retry_after_from_headers
from harness.models.messages import ModelResponse
from harness.models.prompt_cache import cached_prompt_tokens

PREFIX = "openai/"
BODY_PARAMS = frozenset(
    {
        "temperature",
        "top_p",
        "max_tokens",
        "max_completion_tokens",
        "reasoning_effort",
        "seed",
        "stop",
        "n",
        "presence_penalty",
        "frequency_penalty",
        "response_format",
        "logit_bias",
        "user",
        "logprobs",
        "top_logprobs",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
    }
)
DISABLE_VARIABLE = "ARENA_OPENAI_VIA_LITELLM"  # set to 1: every call goes through litellm


def direct_path(model: str, api_base: str | None, params: Mapping[str, Any], price_table: Mapping[str, Any]) -> bool:
    """Whether this request is made over aiohttp rather than litellm (module docstring)."""
    if api_base is None or not model.startswith(PREFIX) or os.environ.get(DISABLE_VARIABLE, "") not in ("", "0"):
        return False
    name = model[len(PREFIX) :]
    if model in price_table or name in price_table:
        return False
    return all(key in BODY_PARAMS or key == "timeout" for key in params)


async def complete_direct(
    model: str, api_base: str, messages: list[dict[str, Any]], params: Mapping[str, Any], api_key: str | None, timeout_s: float
) -> ModelResponse:
    """One chat-completions request to ``api_base``; the reply as a :class:`ModelResponse` (cost 0, unpriced)."""
    import aiohttp

    body = {"model": model[len(PREFIX) :], "messages": messages, **{k: v for k, v in params.items() if k != "timeout"}}
    key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    url = api_base.rstrip("/") + "/chat/completions"
    timeout = aiohttp.ClientTimeout(total=float(params.get("timeout") or timeout_s))
    try:
        async with aiohttp.ClientSession(timeout=timeout, connector=aiohttp.TCPConnector(force_close=True)) as session:
            async with session.post(url, data=json.dumps(body), headers=headers) as reply:
                status, reply_headers, raw = reply.status, dict(reply.headers), await reply.read()
    except aiohttp.ClientError as exc:
        message = f"{type(exc).__name__}: {exc}"
        kind = _network_kind(exc, message) or "connection"
        raise ProviderError(message, kind=kind) from exc
    if status != 200:
        raise ProviderError(
            f"HTTP {status}: {_error_message(raw)}",
            kind=_kind_from_status(status),
            status_code=status,
            retry_after=_retry_after_from_headers(reply_headers),
        )
    return _response(model, raw)


def _error_message(raw: bytes) -> str:
    try:
        error = json.loads(raw).get("error") or {}
        return str(error.get("message") or error)[:300]
    except (ValueError, AttributeError):
        return raw[:300].decode(errors="replace")


def _response(model: str, raw: bytes) -> ModelResponse:
    try:
        payload = json.loads(raw)
        choice = payload["choices"][0]
        message = choice["message"]
        text, finish_reason = message.get("content"), choice.get("finish_reason")
        calls = _tool_calls(message.get("tool_calls"))
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
        raise ProviderError(f"malformed completion body ({type(exc).__name__}: {exc}): {raw[:200]!r}", kind="malformed_response") from exc
    usage = payload.get("usage") or {}
    details = usage.get("prompt_tokens_details") or {}
    return ModelResponse(
        model=model,
        text=text or "",
        finish_reason=finish_reason,
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        cached_tokens=cached_prompt_tokens(_Usage(details, usage.get("cache_read_input_tokens"))),
        cost_usd=0.0,
        cost_note=f"cost unknown for {model}: not in litellm's price table",
        tool_calls=calls,
        reasoning=_reasoning_text(message.get("reasoning_content") or message.get("reasoning")),
        reasoning_tokens=_reasoning_tokens(usage.get("completion_tokens_details")),
    )


def _field(value: Any, name: str) -> Any:
    """``value[name]`` of a dict or ``value.name`` of an object (litellm's replies are objects, raw ones dicts)."""
    return value.get(name) if isinstance(value, Mapping) else getattr(value, name, None)


def _tool_calls(raw: Any) -> list[dict[str, Any]] | None:
    """A reply's function calls as ``{"id", "name", "arguments"}`` (arguments as written), None when it has none."""
    if not raw:
        return None
    calls = []
    for call in raw:
        function = _field(call, "function") or {}
        arguments = _field(function, "arguments")
        calls.append(
            {
                "id": str(_field(call, "id") or ""),
                "name": str(_field(function, "name") or ""),
                "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
            }
        )
    return calls


def _reasoning_text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _reasoning_tokens(details: Any) -> int:
    """``completion_tokens_details.reasoning_tokens`` where the provider reports it, else 0."""
    return int((_field(details, "reasoning_tokens") if details else 0) or 0)


def reasoning_cost(price_table: Mapping[str, Any], model: str, reasoning_tokens: int) -> float:
    """What a reply's reasoning tokens cost at the model's reasoning rate (its output rate when it has none); 0 unpriced."""
    entry = price_table.get(model) or price_table.get(model.split("/", 1)[-1]) or {}
    rate = entry.get("output_cost_per_reasoning_token") or entry.get("output_cost_per_token") or 0.0
    return float(rate) * reasoning_tokens


class _Usage:
    """The usage fields :func:`cached_prompt_tokens` reads, from the reply's JSON."""

    def __init__(self, details: Any, cache_read: Any) -> None:
        self.prompt_tokens_details = details
        self.cache_read_input_tokens = cache_read


def response_from_litellm(litellm: Any, model: str, raw: Any) -> ModelResponse:
    """litellm's reply (its ModelResponse object) as the harness's :class:`ModelResponse`, priced by litellm."""
    try:
        choice = raw.choices[0]
        text = choice.message.content
        finish_reason = choice.finish_reason
        calls = _tool_calls(getattr(choice.message, "tool_calls", None))
        reasoning = _reasoning_text(getattr(choice.message, "reasoning_content", None))
    except (AttributeError, IndexError, TypeError) as exc:
        raise ProviderError(f"response without a choice: {exc}", kind="malformed_response") from exc
    usage = getattr(raw, "usage", None)
    prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
    completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
    cached = cached_prompt_tokens(usage)
    reasoning_tokens = _reasoning_tokens(getattr(usage, "completion_tokens_details", None))
    cost, note = 0.0, None
    try:
        cost = float(litellm.completion_cost(completion_response=raw) or 0.0)
    except Exception as exc:  # noqa: BLE001 - litellm raises many kinds for unpriced models
        note = f"cost unknown for {model}: {type(exc).__name__}"
    return ModelResponse(
        model=model,
        text=text or "",
        finish_reason=finish_reason,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        cached_tokens=cached,
        cost_usd=cost,
        cost_note=note,
        tool_calls=calls,
        reasoning=reasoning,
        reasoning_tokens=reasoning_tokens,
        reasoning_cost_usd=reasoning_cost(litellm.model_cost, model, reasoning_tokens) if note is None else 0.0,
    )
