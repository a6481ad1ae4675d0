"""A minimal OpenAI-compatible chat-completions server on 127.0.0.1, for tests and ``arena stub-server``.

A test starts it (the pytest fixture ``stub_server`` does) (``with StubServer() as server:``), points litellm at
``server.url`` (``.../v1``) and scripts what the next requests get with
:meth:`StubServer.enqueue`; with an empty queue every request gets ``responder(request_json, index)``
when a responder is set (e.g. a legal move read from the prompt, or an injected fault), else
the default ok reply.
Every request is recorded (header names lower-cased, Authorization redacted) with its JSON body and, under
``params``, the body's request parameters (temperature, top_p, max_tokens, reasoning_effort, pass-through
arguments: all but ``model`` and ``messages``); the server counts how many requests it is serving at once
(``max_in_flight``). Behaviours: ok, slow, held (answered when the test releases it), stall (no answer until the
server stops), status codes (429 with Retry-After, 5xx, 401 :func:`unauthorized`, 403 :func:`forbidden`, 404
:func:`model_not_found`), malformed bodies, truncated replies. :func:`free_port` gives a port with nothing listening on it.

Fault injection (:mod:`harness.testing.faults`): with ``faults`` set, each request not answered from
the queue meets a fault drawn for its index (429 with Retry-After, 500, a stall of ``stall_s``, a malformed
body, a truncated reply, an illegal move; for a call or an object asked for, :mod:`harness.testing.stub_replies`'s faults);
counted in ``faults_met``. ``latency_s`` delays every answer. :class:`LegalMoves` answers with a legal move read from
the prompt (the responder of ``arena stub-server`` and of the fixture), as a call or an object when the request asks.
"""

from __future__ import annotations

import json
import random
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from harness.models.messages import last_user_text
from harness.models.mock import legal_moves_in
from harness.testing.faults import FaultSpec
from harness.testing.stub_replies import assistant_message

PATHS = ("/v1/chat/completions", "/chat/completions")
STUB_MODEL = "openai/stub-model"


@dataclass(frozen=True)
class Behaviour:
    """What the server does with one request."""

    kind: str = "ok"  # ok | status | stall | malformed | truncated
    text: str = "d3"
    status: int = 200
    retry_after: float | None = None
    delay_s: float = 0.0
    prompt_tokens: int = 12
    completion_tokens: int = 3
    message: str = ""  # of an error status
    hold: Hold | None = None  # held(): answered only once the test releases it
    shape: str = "move"  # a fault of a call or an object, or a careless habit (harness.testing.stub_replies)
    other: str = "pass"  # the second move of an extra_call


@dataclass(frozen=True)
class Hold:
    """Events of one held request: the server sets ``arrived`` when it has it and ``ended`` when it is done with it
    (answered, or the client gone); the test sets ``release`` to let the answer go (else it goes after 60 s)."""

    arrived: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    ended: threading.Event = field(default_factory=threading.Event)


def ok(text: str = "d3", delay_s: float = 0.0) -> Behaviour:
    return Behaviour("ok", text=text, delay_s=delay_s)


def rate_limit(retry_after: float | None = 0.05) -> Behaviour:
    return Behaviour("status", status=429, retry_after=retry_after)


def server_error(status: int = 500) -> Behaviour:
    return Behaviour("status", status=status)


def client_error(status: int = 400) -> Behaviour:
    return Behaviour("status", status=status)


def slow(delay_s: float, text: str = "d3") -> Behaviour:
    return Behaviour("ok", text=text, delay_s=delay_s)


def held(hold: Hold, text: str = "d3") -> Behaviour:
    """An ok reply sent only when ``hold.release`` is set: events, not delays, order a test's requests and replies."""
    return Behaviour("ok", text=text, hold=hold)


def stall(seconds: float = 0.0) -> Behaviour:
    """Accept the request and never answer (until the server stops, or ``seconds``, else 60 s): a hung endpoint."""
    return Behaviour("stall", delay_s=seconds)


def unauthorized() -> Behaviour:
    """HTTP 401, as a provider answers a wrong or missing API key."""
    return Behaviour("status", status=401, message="Incorrect API key provided")


def forbidden() -> Behaviour:
    """HTTP 403: the key has no access."""
    return Behaviour("status", status=403, message="You do not have access to this model")


def model_not_found() -> Behaviour:
    """HTTP 404 with OpenAI's model_not_found body."""
    return Behaviour("status", status=404, message="The model does not exist or you do not have access to it")


def free_port() -> int:
    """A port on 127.0.0.1 with nothing listening on it (bound, read, closed)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def malformed() -> Behaviour:
    return Behaviour("malformed")


def truncated(text: str = "I think the best move is") -> Behaviour:
    return Behaviour("truncated", text=text)


def prompt_moves(request: dict[str, Any]) -> list[str]:
    """The legal moves listed in a chat request's last user message."""
    return legal_moves_in(last_user_text(request.get("messages") or []))


def illegal_move(request: dict[str, Any]) -> str:
    """A well-formed move that is not among the request's legal moves (the ``illegal`` fault)."""
    legal = set(prompt_moves(request))
    return next(f"{col}{row}" for row in range(1, 27) for col in "abcdefghijklmnopqrstuvwxyz" if f"{col}{row}" not in legal)


class LegalMoves:
    """A responder: a legal move from the prompt (``pass`` when none is listed), drawn from a seeded generator."""

    def __init__(self, seed: int = 0) -> None:
        self._rng = random.Random(seed)

    def __call__(self, request: dict[str, Any], index: int) -> Behaviour:
        moves = prompt_moves(request)
        return ok(self._rng.choice(moves) if moves else "pass")


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # many clients connect at once
    daemon_threads = True


class StubServer:
    """The server; see the module docstring."""

    def __init__(
        self,
        default: Behaviour | None = None,
        responder: Callable[[dict[str, Any], int], Behaviour] | None = None,
        port: int = 0,
        *,
        faults: FaultSpec | None = None,
        latency_s: float = 0.0,
        retry_after: float = 0.05,
        stall_s: float = 60.0,
        cached_tokens: int = 0,
    ) -> None:
        self.default = default or ok()
        self.requested_port = port  # 0: any free port
        self.responder = responder
        self.faults = faults
        self.latency_s, self.retry_after, self.stall_s = latency_s, retry_after, stall_s
        self.cached_tokens = cached_tokens  # each reply's usage says this many prompt tokens came from a prompt cache
        self._initial = (self.default, responder, faults, latency_s, retry_after, stall_s)  # what reset() restores
        self.faults_met: dict[str, int] = {}
        self.requests: list[dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._generation = 0  # reset_counters starts a new one: a request of an earlier test never counts in this one
        self._queue: deque[Behaviour] = deque()
        self._lock = threading.Lock()
        self._gate_at: int | None = None  # hold_until_in_flight: replies wait until this many are in flight
        self._gate = threading.Event()
        self._stopping = threading.Event()  # releases stalled requests
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------
    def start(self) -> StubServer:
        handler = _make_handler(self)
        self._stopping.clear()
        self._httpd = _Server(("127.0.0.1", self.requested_port), handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> StubServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        """The api_base to give an OpenAI-compatible client."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def model(self) -> str:
        """A model string that litellm sends to this server (any ``openai/<name>`` does), with :attr:`url` as api_base."""
        return STUB_MODEL

    @property
    def messages(self) -> list[list[dict[str, Any]]]:
        """The messages of every request so far, in order."""
        with self._lock:
            return [record["json"].get("messages", []) for record in self.requests]

    @property
    def params(self) -> list[dict[str, Any]]:
        """The request parameters of every request so far, in order."""
        with self._lock:
            return [record["params"] for record in self.requests]

    # -- scripting -------------------------------------------------------------------
    def enqueue(self, *behaviours: Behaviour) -> None:
        with self._lock:
            self._queue.extend(behaviours)

    def hold_until_in_flight(self, requests: int) -> None:
        """Hold every reply until ``requests`` requests are being served at once (then answer all, from then on).

        An event, not a delay: a test of a concurrency limit then does not depend on
        how fast a loaded machine sends the requests. A gate never reached opens after
        60 s, so a broken limit fails the test instead of hanging it.
        """
        with self._lock:
            self._gate_at = requests
            self._gate.clear()

    def reset_counters(self) -> None:
        """Forget the requests and the in-flight peak, and open any gate."""
        with self._lock:
            self.requests.clear()
            self.in_flight = self.max_in_flight = 0
            self._generation += 1
            self._gate_at = None
            self._gate.set()

    def reset(self) -> None:
        """:meth:`reset_counters`, an empty queue, and the constructor's default, responder, faults and timings back."""
        self.reset_counters()
        with self._lock:
            self._queue.clear()
            self.faults_met.clear()
            self.default, self.responder, self.faults, self.latency_s, self.retry_after, self.stall_s = self._initial

    def _next(self, record: dict[str, Any]) -> tuple[Behaviour, int]:
        with self._lock:
            return self._behaviour(record), self._generation

    def _behaviour(self, record: dict[str, Any]) -> Behaviour:  # called with the lock held
        self.requests.append(record)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        if self._gate_at is not None and self.in_flight >= self._gate_at:
            self._gate.set()
        if self._queue:
            return self._queue.popleft()
        fault = self.faults.draw(len(self.requests) - 1) if self.faults is not None else None
        if fault is not None:
            record["fault"] = fault
            self.faults_met[fault] = self.faults_met.get(fault, 0) + 1
            return self._fault(fault, record["json"])
        if self.responder is not None:
            return self.responder(record["json"], len(self.requests) - 1)
        return self.default

    def _fault(self, kind: str, request: dict[str, Any]) -> Behaviour:
        if kind == "rate_limit":
            return rate_limit(self.retry_after)
        if kind == "server_error":
            return server_error(500)
        if kind == "stall":
            return stall(self.stall_s)
        if kind == "malformed":
            return malformed()
        if kind == "truncated":
            return truncated()
        moves = prompt_moves(request) or ["pass"]  # a structured fault or a careless habit names a legal move
        other = next((move for move in moves if move != moves[0]), illegal_move(request))
        return ok(illegal_move(request)) if kind == "illegal" else Behaviour("ok", text=moves[0], shape=kind, other=other)

    def _done(self, generation: int) -> None:
        """A request ended; one still stalled from before the last reset_counters no longer counts."""
        with self._lock:
            if generation == self._generation:
                self.in_flight -= 1


def _completion_body(request: dict[str, Any], behaviour: Behaviour, reason: str, cached_tokens: int = 0) -> bytes:
    message, reason = assistant_message(request, behaviour.text, reason, behaviour.shape, behaviour.other)
    body = {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.get("model", "stub-model"),
        "choices": [{"index": 0, "finish_reason": reason, "message": message}],
        "usage": {
            "prompt_tokens": behaviour.prompt_tokens,
            "completion_tokens": behaviour.completion_tokens,
            "total_tokens": behaviour.prompt_tokens + behaviour.completion_tokens,
            "prompt_tokens_details": {"cached_tokens": min(cached_tokens, behaviour.prompt_tokens)},
        },
    }
    return json.dumps(body).encode()


def _make_handler(server: StubServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
            pass

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if self.path not in PATHS:
                self._send(404, b'{"error": {"message": "not found"}}')
                return
            try:
                payload = json.loads(raw or b"{}")
            except ValueError:
                payload = {"unparsed": raw.decode(errors="replace")}
            headers = {k.lower(): ("<redacted>" if k.lower() == "authorization" else v) for k, v in self.headers.items()}
            params = {k: v for k, v in payload.items() if k not in ("model", "messages")}
            record = {"path": self.path, "json": payload, "params": params, "headers": headers, "time": time.monotonic()}
            behaviour, generation = server._next(record)
            try:
                if behaviour.hold is not None:
                    behaviour.hold.arrived.set()
                    behaviour.hold.release.wait(timeout=60)
                self._respond(payload, behaviour)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout): nothing to answer
            finally:
                server._done(generation)
                if behaviour.hold is not None:
                    behaviour.hold.ended.set()

        def _respond(self, payload: dict[str, Any], behaviour: Behaviour) -> None:
            if server._gate_at is not None:
                server._gate.wait(timeout=60)
            if behaviour.kind == "stall":
                server._stopping.wait(timeout=behaviour.delay_s or 60)
                return
            if behaviour.delay_s or server.latency_s:
                time.sleep(behaviour.delay_s + server.latency_s)
            if behaviour.kind == "status":
                message = f"stub error {behaviour.status}" + (f": {behaviour.message}" if behaviour.message else "")
                error = {"error": {"message": message, "type": "stub_error", "code": str(behaviour.status)}}
                extra = {}
                if behaviour.retry_after is not None:
                    extra["Retry-After"] = f"{behaviour.retry_after:g}"
                self._send(behaviour.status, json.dumps(error).encode(), extra)
            elif behaviour.kind == "malformed":
                self._send(200, b'{"id": "chatcmpl-stub", "choices": [{"message": ')
            elif behaviour.kind == "truncated":
                self._send(200, _completion_body(payload, behaviour, "length", server.cached_tokens))
            else:
                self._send(200, _completion_body(payload, behaviour, "stop", server.cached_tokens))

        def _send(self, status: int, body: bytes, extra: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for name, value in (extra or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()

    return Handler
