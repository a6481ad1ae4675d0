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
backoff still apply behind it. Not done: the sweep-wide dollar cap (``max_cost_usd``) is
validated but not enforced by the proxy; each cell's own ``max_cost_usd`` option is.

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

from harness.sweep.spec import ProviderLimits

Clock = Callable[[], float]
Sleep = Callable[[float], None]


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

    def __init__(self, limits: ProviderLimits, clock: Clock = time.monotonic, sleep: Sleep = time.sleep) -> None:
        self.requests = SlidingWindow(limits.requests_per_minute, clock, sleep) if limits.requests_per_minute else None
        self.tokens = TokenBucket(limits.tokens_per_minute, clock, sleep) if limits.tokens_per_minute else None
        self.gate = threading.BoundedSemaphore(limits.concurrency) if limits.concurrency else None
        self.clock = clock
        self.admitted: list[float] = []
        self.lock = threading.Lock()

    def admit(self) -> None:
        if self.gate is not None:
            self.gate.acquire()
        if self.tokens is not None:
            self.tokens.take(0.0)  # waits while an overdrawn token bucket is below zero
        if self.requests is not None:
            self.requests.take()
        with self.lock:
            self.admitted.append(self.clock())

    def release(self, tokens: int) -> None:
        if self.tokens is not None and tokens:
            self.tokens.charge(tokens)
        if self.gate is not None:
            self.gate.release()


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
            proxy.limiter.admit()
            status, reply, reply_headers, tokens = 502, b"", {}, 0
            try:
                request = urllib.request.Request(proxy.upstream + self.path, data=body, headers=headers, method="POST")
                with urllib.request.urlopen(request, timeout=600) as response:  # noqa: S310 - the user's own endpoint
                    status, reply, reply_headers = response.status, response.read(), dict(response.headers)
            except urllib.error.HTTPError as error:
                status, reply, reply_headers = error.code, error.read(), dict(error.headers)
            except OSError as error:
                reply = json.dumps({"error": {"message": f"the sweep's limiter could not reach {proxy.upstream}: {error}"}}).encode()
            finally:
                tokens = _usage(reply)
                proxy.limiter.release(tokens)
            self.send_response(status)
            for key, value in reply_headers.items():
                if key.lower() not in ("content-length", "transfer-encoding", "connection"):
                    self.send_header(key, value)
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *_args: Any) -> None:
            return

    return Handler


def _usage(reply: bytes) -> int:
    try:
        return int(json.loads(reply).get("usage", {}).get("total_tokens") or 0)
    except (ValueError, AttributeError, TypeError):
        return 0


class ProxyActor:
    """The Ray backend's limiter: one actor per provider holding the proxy, on the driver's node, reached by its address."""

    def __init__(self, upstream: str, limits: ProviderLimits, host: str) -> None:
        self.proxy = LimitingProxy(upstream, Limiter(limits), host=host, port=limits.port)

    def api_base(self, upstream_api_base: str) -> str:
        return self.proxy.api_base(upstream_api_base)

    def admitted(self) -> list[float]:
        return list(self.proxy.limiter.admitted)
