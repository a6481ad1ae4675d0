"""``arena view RUN --serve``: the page of a run that is still being written, served on 127.0.0.1.

The page is written to a folder of its own (never into the run) and rewritten when one of the run's files has
changed since the last request; only new games' chunks are written (a finished game never changes). The page
polls ``index.json`` every two seconds and shows new games as they land.
"""

from __future__ import annotations

import tempfile
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from harness.view.build import PAGE_NAME, ViewWritten, write_view

WATCHED = (
    "manifest.json",
    "games.jsonl",
    "calls.jsonl",
    "beliefs.jsonl",
    "strategies.jsonl",
    "metrics.json",
    "agent.json",
    "results.json",
    "results.jsonl",
)
HOST = "127.0.0.1"


class LivePage:
    """The run's page in ``folder``, rewritten when the run's files change (thread-safe)."""

    def __init__(self, run_dir: Path, folder: Path) -> None:
        self.run_dir, self.folder = run_dir, folder
        self._lock = threading.Lock()
        self._seen: tuple[Any, ...] | None = None
        self.written: ViewWritten | None = None

    def _signature(self) -> tuple[Any, ...]:
        stats = []
        for name in WATCHED:
            path = self.run_dir / name
            stat = path.stat() if path.exists() else None
            stats.append((name, stat.st_size, stat.st_mtime_ns) if stat else (name, None, None))
        return tuple(stats)

    def refresh(self) -> ViewWritten:
        """The page, rewritten first if the run changed since the last call."""
        with self._lock:
            signature = self._signature()
            if self.written is None or signature != self._seen:
                self.written = write_view(self.run_dir, self.folder / PAGE_NAME, live=True, keep_chunks=True)
                self._seen = signature
            return self.written


class _Handler(SimpleHTTPRequestHandler):
    live: LivePage

    def do_GET(self) -> None:  # noqa: N802 (the http.server name)
        path = self.path.split("?", 1)[0]
        if path in ("/", "/" + PAGE_NAME, "/index.json"):
            written = self.live.refresh()
            if path == "/index.json":
                self._send(written.index.model_dump_json().encode("utf-8"), "application/json")
                return
            self._send(written.page.read_bytes(), "text/html; charset=utf-8")
            return
        super().do_GET()

    def _send(self, body: bytes, content_type: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the http.server signature)
        return  # quiet: the command prints its address once


def make_server(run_dir: str | Path, port: int = 8000, folder: Path | None = None) -> tuple[ThreadingHTTPServer, LivePage]:
    """A server of ``run_dir``'s live page on 127.0.0.1:``port`` (0: any free port), the page written once first."""
    folder = folder or Path(tempfile.mkdtemp(prefix="arena-view-"))
    live = LivePage(Path(run_dir), folder)
    live.refresh()
    handler = type("LiveHandler", (_Handler,), {"live": live})
    server = ThreadingHTTPServer((HOST, port), partial(handler, directory=str(folder)))
    server.daemon_threads = True
    return server, live


def server_url(server: ThreadingHTTPServer) -> str:
    return f"http://{HOST}:{server.server_address[1]}/"
