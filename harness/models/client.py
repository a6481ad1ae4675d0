"""The model client: one async call path for every model the harness talks to.

``mock/<name>`` models are served in-process by :mod:`harness.models.mock`; every other model string goes through
``litellm.acompletion`` (imported lazily with ``LITELLM_LOCAL_MODEL_COST_MAP=True``: no network on import), except an
unpriced ``openai/`` model at an API base, called straight over aiohttp (:mod:`harness.models.openai_direct`).

Per call: an adaptive concurrency limit (:class:`~harness.models.concurrency.AdaptiveLimit`, ceiling ``concurrency``:
halved on a 429 or a timeout, grown on success; an attempt holds a slot only while on the wire), a per-attempt
timeout, tenacity retries (exponential backoff, full jitter) on transient failures (rate limits, timeouts, connection
errors, 5xx, a malformed body) honouring a Retry-After (capped at ``max_retry_after_s``; the request waits without a
slot), none on other client errors; token and cost accounting per call and in running totals (provider-cached prompt
tokens at the cached rate, :func:`cached_prompt_tokens`); a response cache. Anthropic models get litellm's
``cache_control`` hint on the system message (the stable part of every prompt).

Fail fast (:class:`~harness.models.errors.EndpointDown`): a failure that says the endpoint cannot answer (connection
refused, DNS, HTTP 401/403/404, an unknown provider) is not retried and stops the client at once, as does the
``max_consecutive_failures``-th call in a row that failed for good (any kind, after its retries); from then on every
call that is not a cache hit raises ``EndpointDown`` without a request. That failure is not cached, so a resumed run
asks again. Failures replayed from the cache count towards the limit as they did (a cached reply resets the count),
but only a new failure stops the client, so resumes while the endpoint is down never pile up replayed failures.

Options (:class:`~harness.models.options.ModelOptions`): the per-request ones are laid over the caller's parameters
by :meth:`ModelClient.request`; ``api_base`` and ``timeout`` (per attempt) go to every request.

Caps: ``max_cost_usd`` and ``max_tokens_total`` are checked *before* each call that is not a cache hit starts (once
its first attempt has a slot): a running total at the cap raises :class:`BudgetCapReached`, no request made. Calls
in flight finish and are counted (the total may pass the cap by what they used). Cache hits are free, never refused.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from typing import Any

from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt

from harness.models.cache import CachedFailure, ResponseCache
from harness.models.concurrency import AdaptiveLimit
from harness.models.errors import (
    SHARED_CAP_REFUSAL,
    BudgetCapReached,
    EndpointDown,
    ModelCallError,
    ModelConfigError,
    classify_error,
    fatal_cause,
)
from harness.models.messages import ModelRequest, ModelResponse, UsageTotals
from harness.models.mock import make_offline_model
from harness.models.openai_direct import complete_direct, direct_path, response_from_litellm
from harness.models.options import ModelOptions
from harness.models.prompt_cache import with_cache_hints
from harness.models.replies import MockExhausted
from harness.models.structured import offline_response

MOCK_PREFIX = "mock/"
THROTTLED_KINDS = frozenset({"rate_limit", "timeout"})  # failures that lower the concurrency limit
_NOT_RETRIED = (BudgetCapReached, EndpointDown)  # raised inside an attempt's slot: never retried, never wrapped
# Providers that need an API key; litellm.validate_environment names the variable.
KEYED_PROVIDERS: dict[str, str] = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "mistral": "MISTRAL_API_KEY",
    "groq": "GROQ_API_KEY",
    "cohere": "COHERE_API_KEY",
    "deepseek": "DEEPSEEK_API_KEY",
    "xai": "XAI_API_KEY",
    "together_ai": "TOGETHERAI_API_KEY",
    "openrouter": "OPENROUTER_API_KEY",
    "fireworks_ai": "FIREWORKS_AI_API_KEY",
}


def import_litellm() -> Any:
    """Import litellm without letting it fetch its cost map from the network."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True
    return litellm


def check_api_key(model: str, *, api_key: str | None = None, api_base: str | None = None) -> None:
    """Raise :class:`ModelConfigError` if ``model`` cannot be called as configured (run it before any game): an
    unknown provider, or a keyed provider whose API key is neither passed nor in the environment (never shown)."""
    if model.startswith(MOCK_PREFIX):
        try:
            make_offline_model(model)
        except ValueError as exc:
            raise ModelConfigError(str(exc)) from exc
        return
    litellm = import_litellm()
    try:
        _, provider, _, _ = litellm.get_llm_provider(model=model, api_base=api_base)
    except Exception as exc:  # litellm raises its BadRequestError on an unknown provider
        raise ModelConfigError(
            f"unknown model {model!r}: give it as provider/model, e.g. openai/gpt-4o-mini (or mock/<name> for the offline mock models)"
        ) from exc
    if api_key or provider not in KEYED_PROVIDERS:
        return
    missing = _missing_keys(litellm, model, provider)
    if missing:
        raise ModelConfigError(
            f"model {model!r} needs {', '.join(missing)} set in the environment "
            f"(export it before running; it is never written to the run's files)"
        )


def _missing_keys(litellm: Any, model: str, provider: str) -> list[str]:
    validate = getattr(litellm, "validate_environment", None)
    if validate is not None:
        try:
            report = validate(model=model)
            if not report.get("keys_in_environment", True):
                return list(report.get("missing_keys") or [KEYED_PROVIDERS[provider]])
            return []
        except Exception:  # noqa: BLE001 - fall back on the table below
            pass
    variable = KEYED_PROVIDERS[provider]
    return [] if os.environ.get(variable) else [variable]


class ModelClient:
    """Async model calls with concurrency limit, retries, timeouts, accounting and cache."""

    def __init__(
        self,
        model: str,
        *,
        concurrency: int = 32,
        options: ModelOptions | None = None,
        timeout_s: float | None = None,
        max_retries: int = 5,
        max_cost_usd: float | None = None,
        max_tokens_total: int | None = None,
        cache: ResponseCache | None = None,
        api_base: str | None = None,
        api_key: str | None = None,
        backoff_base_s: float = 1.0,
        backoff_max_s: float = 30.0,
        max_retry_after_s: float = 60.0,
        mock: Any | None = None,
        seed: int = 0,
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self.model = model
        self.concurrency = concurrency
        self.options = options or ModelOptions()
        self.timeout_s = timeout_s if timeout_s is not None else self.options.timeout  # an explicit argument wins
        self.max_consecutive_failures = self.options.max_consecutive_failures
        self.max_retries = max_retries
        self.max_cost_usd = max_cost_usd
        self.max_tokens_total = max_tokens_total
        self.cache = cache
        self.api_base = api_base if api_base is not None else self.options.api_base
        self._api_key = api_key  # never logged, cached or put in a request
        self.backoff_base_s = backoff_base_s
        self.backoff_max_s = backoff_max_s
        self.max_retry_after_s = max_retry_after_s
        self.usage = UsageTotals()
        self.in_flight = 0
        self.max_in_flight = 0
        self._occurrences: dict[str, int] = {}  # times each request key was made (see harness.models.cache)
        self.limit = AdaptiveLimit(concurrency)  # requests on the wire: AIMD under the ceiling ``concurrency``
        self.consecutive_failures = 0  # calls in a row that failed for good (replayed ones included)
        self.down: EndpointDown | None = None  # set once the endpoint is found unusable
        self._rng = random.Random(seed)
        self._mock = mock
        if self._mock is None and model.startswith(MOCK_PREFIX):
            self._mock = make_offline_model(model, seed=seed)
        elif self._mock is None:
            import_litellm()  # now, so that its import (~2 s) is not charged to a call

    def __repr__(self) -> str:
        return f"ModelClient(model={self.model!r}, concurrency={self.concurrency})"

    @property
    def endpoint(self) -> str:
        """The endpoint in words, for errors: the API base (or the provider's default) and the model."""
        if self._mock is not None:
            return f"{self.model} (offline)"
        where = self.api_base or f"the {self.model.split('/', 1)[0]} provider's default API base"
        return f"{where} (model {self.model})"

    def request(self, messages: list[dict[str, Any]], **params: Any) -> ModelRequest:
        """A request for this client's model: ``params`` with the per-request options laid over them."""
        return ModelRequest(model=self.model, messages=messages, params=self.options.request_params(params))

    def check(self) -> None:
        """:func:`check_api_key` for this client's model (call before any game)."""
        if self._mock is None:
            check_api_key(self.model, api_key=self._api_key, api_base=self.api_base)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        """Answer ``request`` from the cache if present, else by calling the model. Raises :class:`BudgetCapReached`
        before a call once a cap is reached, :class:`ModelCallError` (with ``kind``) when the call fails for good, and
        :class:`EndpointDown` when the endpoint is found unusable (then for every later call)."""
        if request.model != self.model:
            raise ValueError(f"request for {request.model!r} sent to a client of {self.model!r}")
        key = request.key()
        started = time.perf_counter()
        occurrence = self._occurrences[key] = self._occurrences.get(key, -1) + 1
        if self.cache is not None:
            cached = self.cache.lookup(key, occurrence)
            if cached is not None and self._mock is not None and hasattr(self._mock, "replayed"):
                self._mock.replayed(request.messages, cached.retries + 1)  # its draws go on as in the original run
            if isinstance(cached, CachedFailure):
                self.usage.cache_hits += 1
                self.consecutive_failures += 1
                raise ModelCallError(
                    f"{cached.message} (replayed from the response cache)",
                    kind=cached.kind,
                    status_code=cached.status_code,
                    errors=cached.errors,
                    retries=cached.retries,
                )
            if cached is not None:
                self.usage.cache_hits += 1
                self.consecutive_failures = 0
                return cached.model_copy(
                    update={
                        "cache_hit": True,
                        "cache_key": key,
                        "retries": 0,
                        "waits_s": [],
                        "errors": [],
                        "cost_usd": 0.0,
                        "reasoning_cost_usd": 0.0,
                        "cost_note": "cache hit",
                        "latency_s": time.perf_counter() - started,
                    }
                )
        try:
            response = await self._call_with_retries(request, key, started)
        except ModelCallError as failure:
            self._failed(key, failure)  # raises EndpointDown when the endpoint is unusable
            raise
        self.consecutive_failures = 0
        if self.cache is not None:
            self.cache.put(key, response)
        return response

    def _raise_if_down(self) -> None:
        if self.down is not None:
            down = self.down
            raise EndpointDown(down.endpoint, down.cause, kind=down.kind, status_code=down.status_code, errors=down.errors)

    def _failed(self, key: str, failure: ModelCallError) -> None:
        """Count a call that failed for good; stop (EndpointDown, not cached) or cache the failure."""
        self._raise_if_down()  # another call found the endpoint down while this one was under way
        self.consecutive_failures += 1
        last = failure.errors[-1] if failure.errors else str(failure)
        cause = fatal_cause(failure.kind, failure.status_code, last.split(": ", 1)[-1])
        limit = self.max_consecutive_failures
        if cause is None and limit is not None and self.consecutive_failures >= limit:
            cause = (
                f"{self.consecutive_failures} calls in a row failed for good (limit {limit}); "
                f"the last, after {failure.retries + 1} attempt(s): {last}"
            )
        if cause is not None:
            self.down = EndpointDown(self.endpoint, cause, kind=failure.kind, status_code=failure.status_code, errors=tuple(failure.errors))
            self._raise_if_down()
        if self.cache is not None:
            self.cache.put(
                key,
                CachedFailure(
                    message=str(failure), kind=failure.kind, status_code=failure.status_code, errors=failure.errors, retries=failure.retries
                ),
            )

    def _check_caps(self) -> None:
        if self.max_cost_usd is not None and self.usage.cost_usd >= self.max_cost_usd:
            raise BudgetCapReached(f"cost cap reached: ${self.usage.cost_usd:.4f} spent of ${self.max_cost_usd:.4f}")
        if self.max_tokens_total is not None and self.usage.total_tokens >= self.max_tokens_total:
            raise BudgetCapReached(f"token cap reached: {self.usage.total_tokens} used of {self.max_tokens_total}")

    def _wait(self, retry_state: Any) -> float:
        """Retry-After when the server sent one (capped), else backoff with full jitter."""
        info = classify_error(retry_state.outcome.exception())
        if info.retry_after is not None:
            return min(info.retry_after, self.max_retry_after_s)
        ceiling = min(self.backoff_max_s, self.backoff_base_s * 2 ** (retry_state.attempt_number - 1))
        return self._rng.uniform(0.0, ceiling)

    async def _call_with_retries(self, request: ModelRequest, key: str, started: float) -> ModelResponse:
        errors: list[str] = []
        waits: list[float] = []

        def note_retry(retry_state: Any) -> None:
            waits.append(retry_state.next_action.sleep if retry_state.next_action else 0.0)
            self.usage.retries += 1

        retrying = AsyncRetrying(
            retry=retry_if_exception(lambda exc: not isinstance(exc, _NOT_RETRIED) and classify_error(exc).retryable),
            stop=stop_after_attempt(self.max_retries + 1),
            wait=self._wait,
            before_sleep=note_retry,
            reraise=True,
        )
        first = True
        try:
            async for attempt in retrying:
                with attempt:
                    async with self.limit.slot() as slot:  # held on the wire only: a retry waits without it
                        if first:  # before the call's first request: a dead endpoint, a cap
                            first = False
                            self._raise_if_down()
                            self._check_caps()
                        result = await self._attempt_in_slot(request, slot, errors)
        except (MockExhausted, *_NOT_RETRIED):
            raise  # a test's script ran out (fail loudly, not as a provider error), a cap, a dead endpoint
        except Exception as exc:
            text = str(exc)
            if SHARED_CAP_REFUSAL in text:  # a sweep's shared limiter refused it: a cap, not a failure
                raise BudgetCapReached(text[text.index(SHARED_CAP_REFUSAL) :]) from None
            info = classify_error(exc)
            self.usage.failed_calls += 1
            raise ModelCallError(
                f"{self.model}: call failed after {len(errors)} attempt(s): {info.describe()}",
                kind=info.kind,
                status_code=info.status_code,
                errors=errors,
                retries=len(waits),
            ) from exc
        response = self.options.price(result).model_copy(  # the given price, if any, over litellm's
            update={
                "cache_key": key,
                "retries": len(waits),
                "waits_s": waits,
                "errors": errors,
                "latency_s": time.perf_counter() - started,
                "concurrency": self._lowered_limit(),
            }
        )
        self.usage.calls += 1
        self.usage.prompt_tokens += response.prompt_tokens
        self.usage.completion_tokens += response.completion_tokens
        self.usage.reasoning_tokens += response.reasoning_tokens
        self.usage.cost_usd += response.cost_usd
        return response

    def _lowered_limit(self) -> float | None:
        """The concurrency limit when it is below the ceiling (None at the ceiling: a run's records do not depend on it)."""
        return None if self.limit.limit >= self.concurrency else round(self.limit.limit, 2)

    async def _attempt_in_slot(self, request: ModelRequest, slot: Any, errors: list[str]) -> ModelResponse:
        """One attempt on the wire (its slot marked throttled on a 429 or a timeout, succeeded on a reply)."""
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            result = await asyncio.wait_for(self._attempt(request), self._deadline_s())
        except Exception as exc:
            info = classify_error(exc)
            errors.append(info.describe())
            kinds = self.usage.errors_by_kind
            kinds[info.kind] = kinds.get(info.kind, 0) + 1
            slot.throttled = info.kind in THROTTLED_KINDS
            raise
        finally:
            self.in_flight -= 1
        slot.succeeded = True
        return result

    def _deadline_s(self) -> float:
        """One attempt's hard deadline: litellm's HTTP timeout ``timeout_s`` (it raises its Timeout) plus a grace for
        litellm's own work (its first call in a process sets itself up for ~1 s)."""
        if self._mock is not None:
            return self.timeout_s
        return self.timeout_s + max(2.0, 0.5 * self.timeout_s)

    async def _attempt(self, request: ModelRequest) -> ModelResponse:
        if self._mock is not None:  # its text reply, as a tool call or a JSON object when the request asks for one
            return offline_response(request.model, await self._mock.acomplete(request.messages, request.params), request.params)
        litellm = import_litellm()
        if direct_path(request.model, self.api_base, request.params, litellm.model_cost):
            return await complete_direct(
                request.model, self.api_base or "", request.messages, request.params, self._api_key, self.timeout_s
            )
        kwargs: dict[str, Any] = dict(request.params)
        kwargs.setdefault("timeout", self.timeout_s)
        kwargs["max_retries"] = 0  # the retries are ours, not the SDK's
        if kwargs.get("tools"):  # plain functions: litellm's bridge for MCP tools would import the mcp package
            kwargs["_skip_mcp_handler"] = True
        if self.api_base is not None:
            kwargs["api_base"] = self.api_base
        if self._api_key is not None:
            kwargs["api_key"] = self._api_key
        messages = with_cache_hints(request.model, request.messages)  # sent, never part of the cache key
        raw = await litellm.acompletion(model=request.model, messages=messages, **kwargs)
        return response_from_litellm(litellm, request.model, raw)
