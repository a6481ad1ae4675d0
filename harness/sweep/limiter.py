"""One model-call limit per provider for the whole sweep: a rate-limiting forwarding proxy every worker calls through.

A model cell of a provider named under ``[limits."PROVIDER"]`` (the model name's part
before ``/``) has its ``api_base`` pointed at that provider's proxy; the proxy forwards
each request to the cell's own ``api_base`` (the upstream) once the shared limits allow:
``requests_per_minute`` (at most that many in any 60 seconds: a sliding window),
``tokens_per_minute`` (a token bucket holding a minute's worth, charged from each reply's
``usage``) and ``concurrency`` (requests in flight).
All workers of the sweep, whatever process or node they run in, meet the same buckets,
because there is one proxy per provider: on the local backend a thread of the driver, on
Ray a Ray actor (reached at its node's address). The model client's own retries and
backoff still apply behind it.

``max_cost_usd`` caps what the provider's calls cost over the whole sweep: each reply is
priced from its ``usage`` (litellm's local price table by default; unpriced models cost 0;
tests inject a price) and added up in the proxy; once the total has reached the cap, a new
request is refused without reaching the provider, with HTTP 402 and a message holding
:data:`~harness.models.errors.SHARED_CAP_REFUSAL`, which the model client raises as
:class:`~harness.models.errors.BudgetCapReached`: the cell stops as at its own cost cap
(what is recorded stays recorded; the cell is marked capped and resumes once the cap is
raised). As with a cell's own cap, calls already in flight finish and are counted.

The clock is injectable (tests use a virtual one: waiting advances it).
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from harness.models.client import import_litellm
from harness.models.errors import SHARED_CAP_REFUSAL
from harness.sweep.spec import ProviderLimits

Clock = Callable[[], float]
Sleep = Callable[[float], None]
Price = Callable[[str, int, int], float]  # (model, prompt tokens, completion tokens) -> dollars


def litellm_price(model: str, prompt_tokens: int, completion_tokens: int) -> float:
    """A reply's cost from litellm's local price table (0 for a model it does not price)."""
    try:
        prompt, completion = import_litellm().cost_per_token(model=model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
        return float(prompt) + float(completion)
    except Exception:  # noqa: BLE001 - litellm raises many kinds for a model it does not price
        return 0.0


class CostCapReached(RuntimeError):
    """The provider's sweep-wide ``max_cost_usd`` is spent: the request is refused before it reaches the provider."""


class TokenBucket:
    """``per_minute`` units a minute, at most a minute's worth saved up; ``take`` waits (by ``sleep``) until there is room."""

    def __init__(self, per_minute: int, clock: Clock, sleep: Sleep) -> None:
        self.rate, self.capacity = per_minute / 60.0, float(per_minute)
        self.level, self.clock, self.sleep = float(per_minute), clock, sleep
        self.updated = clock()
        self.lock = threading.Lock()

    def _refill(self) -> None:
        now = self.clock()
        self.level = min(self.capacity, self.level + (now - self.updated) * self.rate)
        self.updated = now

    def take(self, amount: float = 1.0) -> None:
        """Wait until ``amount`` is available (the first caller in line is served first), then take it."""
        with self.lock:  # one waiter at a time keeps the order fair and the bucket exact
            self._refill()
            if self.level < amount:
                self.sleep((amount - self.level) / self.rate)
                self._refill()
            self.level -= amount

    def charge(self, amount: float) -> None:
        """Take ``amount`` after the fact (tokens a reply used); the level may go below zero and later calls wait."""
        with self.lock:
            self._refill()
            self.level -= amount


class SlidingWindow:
    """At most ``per_minute`` admissions in any 60 seconds: ``take`` waits (by ``sleep``) for the oldest to leave the window."""

    def __init__(self, per_minute: int, clock: Clock, sleep: Sleep) -> None:
        self.limit, self.clock, self.sleep = per_minute, clock, sleep
        self.times: deque[float] = deque()
        self.lock = threading.Lock()

    def take(self) -> None:
        with self.lock:  # one waiter at a time: first come, first served
            now = self.clock()
            while self.times and self.times[0] <= now - 60.0:
                self.times.popleft()
            if len(self.times) >= self.limit:
                self.sleep(self.times[0] + 60.0 - now)
                now = self.clock()
                while self.times and self.times[0] <= now - 60.0:
                    self.times.popleft()
            self.times.append(now)


class Limiter:
    """The limits of one provider: buckets, a concurrency gate, and the admission times (for reports and tests)."""

    def __init__(
        self, limits: ProviderLimits, clock: Clock = time.monotonic, sleep: Sleep = time.sleep, price: Price = litellm_price
    ) -> None:
        self.max_cost_usd, self.price, self.spent_usd, self.refused = limits.max_cost_usd, price, 0.0, 0
        self.requests = SlidingWindow(limits.requests_per_minute, clock, sleep) if limits.requests_per_minute else None
        self.tokens = TokenBucket(limits.tokens_per_minute, clock, sleep) if limits.tokens_per_minute else None
        self.gate = threading.BoundedSemaphore(limits.concurrency) if limits.concurrency else None
        self.clock = clock
        self.admitted: list[float] = []
        self.lock = threading.Lock()

    def admit(self) -> None:
        """Wait for room under every limit; raises CostCapReached (before waiting) once the dollar cap is spent."""
        self._check_cost()
        if self.gate is not None:
            self.gate.acquire()
        if self.tokens is not None:
            self.tokens.take(0.0)  # waits while an overdrawn token bucket is below zero
        if self.requests is not None:
            self.requests.take()
        with self.lock:
            self.admitted.append(self.clock())

    def _check_cost(self) -> None:
        with self.lock:
            if self.max_cost_usd is not None and self.spent_usd >= self.max_cost_usd:
                self.refused += 1
                raise CostCapReached(
                    f"{SHARED_CAP_REFUSAL}: ${self.spent_usd:.4f} spent of the sweep's "
                    f"max_cost_usd ${self.max_cost_usd:g} for this provider"
                )

    def release(self, tokens: int, cost_usd: float = 0.0) -> None:
        if self.tokens is not None and tokens:
            self.tokens.charge(tokens)
        with self.lock:
            self.spent_usd += cost_usd
        if self.gate is not None:
            self.gate.release()

    def reply_cost(self, reply: bytes) -> tuple[int, float]:
        """(total tokens, dollars) of a reply, from its ``usage`` and ``model``."""
        try:
            body = json.loads(reply)
            usage = body.get("usage") or {}
            prompt, completion = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
            total = int(usage.get("total_tokens") or prompt + completion)
            return total, (self.price(str(body.get("model") or ""), prompt, completion) if total else 0.0)
        except (ValueError, AttributeError, TypeError):
            return 0, 0.0


class LimitingProxy:
    """An HTTP proxy on ``host`` that forwards POSTs to ``upstream`` (scheme://host:port) through a :class:`Limiter`."""

    def __init__(self, upstream: str, limiter: Limiter, host: str = "127.0.0.1", port: int = 0) -> None:
        parts = urlsplit(upstream)
        self.upstream, self.limiter = f"{parts.scheme}://{parts.netloc}", limiter
        self.server = ThreadingHTTPServer((host, port), _handler(self))
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, name="sweep-limiter", daemon=True)
        self.thread.start()

    def api_base(self, upstream_api_base: str) -> str:
        """The ``api_base`` a cell uses: this proxy with the upstream's path (``/v1``)."""
        host, port = str(self.server.server_address[0]), int(self.server.server_address[1])
        return f"http://{host}:{port}{urlsplit(upstream_api_base).path}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _handler(proxy: LimitingProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the http.server name
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length", "connection")}
            try:
                proxy.limiter.admit()
            except CostCapReached as refused:
                self._send(402, json.dumps({"error": {"message": str(refused), "type": "budget_cap"}}).encode(), {})
                return
            status, reply, reply_headers = 502, b"", {}
            try:
                request = urllib.request.Request(proxy.upstream + self.path, data=body, headers=headers, method="POST")
                with urllib.request.urlopen(request, timeout=600) as response:  # noqa: S310 - the user's own endpoint
                    status, reply, reply_headers = response.status, response.read(), dict(response.headers)
            except urllib.error.HTTPError as error:
                status, reply, reply_headers = error.code, error.read(), dict(error.headers)
            except OSError as error:
                reply = json.dumps({"error": {"message": f"the sweep's limiter could not reach {proxy.upstream}: {error}"}}).encode()
            finally:
                proxy.limiter.release(*proxy.limiter.reply_cost(reply))
            self._send(status, reply, reply_headers)

        def _send(self, status: int, reply: bytes, reply_headers: dict[str, str]) -> None:
            self.send_response(status)
            for key, value in reply_headers.items():
                if key.lower() not in ("content-length", "transfer-encoding", "connection", "content-type"):
                    self.send_header(key, value)
            self.send_header("Content-Type", reply_headers.get("Content-Type", "application/json"))
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *_args: Any) -> None:
            return

    return Handler


class ProxyActor:
    """The Ray backend's limiter: one actor per provider holding the proxy, on the driver's node, reached by its address."""

    def __init__(self, upstream: str, limits: ProviderLimits, host: str) -> None:
        self.proxy = LimitingProxy(upstream, Limiter(limits), host=host, port=limits.port)

    def api_base(self, upstream_api_base: str) -> str:
        return self.proxy.api_base(upstream_api_base)

    def admitted(self) -> list[float]:
        return list(self.proxy.limiter.admitted)

    def spent_usd(self) -> float:
        return self.proxy.limiter.spent_usd
