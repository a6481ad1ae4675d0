"""A plugin written to break the referee's walls: it tries every route to K it can think of, in every process it runs.

It plays exactly as ``random`` does (the same generator draws), so a run with it
must score exactly as a run with ``random``. On import and in ``adapt``/``act`` it tries:

- ``cmdline``: every visible process's command line (the referee's names the environment: ``--env N``);
- ``environ``: every visible process's environment variables;
- ``files``: every visible process's working directory and open files (the run directory, its manifest);
- ``salt``: a ``.commitment_salt`` anywhere it can walk (with the manifest's digest, K falls to a search);
- ``memory``: a live condition in its own process (there is one only in a referee's process);
- ``scores``: where a condition is live, it rewrites the scoring so every game is a draw;
- ``grant``: a simulator from its arena (refused, and recorded by the referee);
- ``mem``: another process's memory through ``/proc/<pid>/mem``;
- ``sealed``: a sealed suite's file (``sealed.json``) anywhere it can walk.

Whatever it finds that names the run is printed to stderr as ``WALLS-LEAK <route>: <what>``
(and ``WALLS-TRIED <where>`` once per process, so a test can tell it ran at all). A run's
directory is recognised by :data:`MARKER` in its path (the test puts it there).
"""

from __future__ import annotations

import gc
import os
import sys

from agents.heuristic.simple import RandomAgent
from agents.spec import register

MARKER = "wallsmarker"
SKIP = ("/proc", "/sys", "/dev", "/usr", "/root/.pyenv")
_reported: set[str] = set()


def _leak(route: str, what: object) -> None:
    line = f"WALLS-LEAK {route}: {str(what)[:300]}"
    if line not in _reported:
        _reported.add(line)
        print(line, file=sys.stderr, flush=True)


def _read(path: str, size: int = 1 << 16) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read(size)
    except OSError:
        return b""


def _telling(text: str) -> bool:
    return MARKER in text or "--env" in text or "--envs" in text or "bench paper" in text


def _processes() -> None:
    for pid in (name for name in os.listdir("/proc") if name.isdigit() and int(name) != os.getpid()):
        cmdline = _read(f"/proc/{pid}/cmdline").replace(b"\0", b" ").decode(errors="replace")
        if _telling(cmdline):
            _leak("cmdline", f"pid {pid}: {cmdline}")
        environ = _read(f"/proc/{pid}/environ").replace(b"\0", b" ").decode(errors="replace")
        if _telling(environ) or "OTHELLO_ARENA" in environ:
            _leak("environ", f"pid {pid}: {environ[:200]}")
        for link in ("cwd", "root", *(f"fd/{fd}" for fd in _listdir(f"/proc/{pid}/fd"))):
            try:
                target = os.readlink(f"/proc/{pid}/{link}")
            except OSError:
                continue
            if MARKER in target:
                _leak("files", f"pid {pid} {link} -> {target}")
        if _read(f"/proc/{pid}/mem", 1):
            _leak("mem", f"pid {pid}")


def _listdir(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


def _walk() -> None:
    for root, dirs, files in os.walk("/"):
        dirs[:] = [d for d in dirs if not os.path.join(root, d).startswith(SKIP)]
        for name in files:
            path = os.path.join(root, name)
            if name == ".commitment_salt" and _read(path):
                _leak("salt", path)
            elif name == "sealed.json" and _read(path):
                _leak("sealed", path)
            elif name == "manifest.json" and MARKER in path and _read(path):
                _leak("files", f"readable {path}")


def _memory() -> None:
    from engine.condition import Condition

    live = [obj for obj in gc.get_objects() if isinstance(obj, Condition)]
    if live:
        _leak("memory", repr(live[0]))
    if getattr(Condition.rewards, "__name__", "") != "draw_everything":

        def draw_everything(self: Condition, black: int, white: int) -> tuple[int, int]:
            _leak("memory", f"scored under {self!r}")  # whoever scores a game here holds K
            _leak("scores", "this process's scoring now gives every game a draw")
            return (0, 0)

        Condition.rewards = draw_everything


def try_everything(where: str) -> None:
    if where in _reported:
        return
    _reported.add(where)
    print(f"WALLS-TRIED {where} pid={os.getpid()} uid={os.getuid()}", file=sys.stderr, flush=True)
    for attempt in (_processes, _walk, _memory):
        try:
            attempt()
        except Exception as failure:  # noqa: BLE001 - a failed attempt is a closed route
            print(f"WALLS-CLOSED {where} {attempt.__name__}: {type(failure).__name__}", file=sys.stderr, flush=True)


@register("walls-cheater", "test agent: plays as random and tries every route to K around the walls")
class WallsCheater(RandomAgent):
    name = "walls-cheater"

    def adapt(self, arena, on_progress=None) -> None:
        try_everything("adapt")
        try:
            arena.grant_simulator("walls-cheater wants the true rules")
            _leak("grant", "a simulator was granted")
        except Exception as refused:  # noqa: BLE001 - the referee refuses it; the run must record it
            print(f"WALLS-REFUSED {type(refused).__name__}", file=sys.stderr, flush=True)

    def act(self, observation) -> int:
        try_everything("act")
        return super().act(observation)


try_everything("import")
