"""Ctrl-C for every command that writes a run: the first asks for a clean stop, the second stops at once.

:func:`stop_on_interrupt` installs handlers for SIGINT and SIGTERM for as long as a
command writes its run (``arena run``, ``match``, ``tournament``, ``bench paper``). The
first signal records itself in :class:`StopRequest` (``requested``): the command starts
no new game (or pair, or model call), lets those in flight finish, writes every record,
and says what it kept and how to continue. Then one of two things ends what is in flight:

- ``grace_s`` seconds pass (commands whose work runs in worker processes: match,
  tournament, bench paper), or a second signal comes: a ``KeyboardInterrupt`` is raised in
  the main thread, and the command ends its workers at once;
- with ``exit_hint`` set (``arena run``, whose agent talks to a model from another
  process), a second signal ends this process at once (``os._exit``), after
  ``on_force`` has ended the process it started, printing the hint.

Either way every record written before is kept (each line is written and flushed whole),
so the run still resumes. The command itself may ask for the same clean stop
(:meth:`StopRequest.request`, e.g. a full disk): ``reason`` then says why. Once the work has stopped the command calls
:meth:`StopRequest.settle`: a grace timer still running, or a later signal, no longer cuts
the wrap-up (the manifest's last write). The previous handlers come back at the end.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import FrameType

GRACE_S = 5.0  # how long the games (or pairs) in flight get after the first Ctrl-C
INTERRUPTED_EXIT_CODE = 130  # 128 + SIGINT, as shells report a command stopped by Ctrl-C
SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _nothing() -> None:
    return None


@dataclass
class StopRequest:
    """Which signal asked for a stop (first Ctrl-C), whether it was forced (second, or the grace ran out)."""

    grace_s: float | None = GRACE_S  # None: no timer; what is in flight finishes (arena run)
    say: Callable[[str], None] = _say
    unit: str = "games"  # what the command starts: games, (environment, agent) pairs, games and model calls
    on_first: Callable[[], None] = _nothing  # the first signal, after ``requested`` is set (tell a child process)
    on_force: Callable[[], None] = _nothing  # a forced stop, before it takes effect (end a child process)
    exit_hint: str | None = None  # set: a second signal ends the process at once, printing "continue with: <hint>"
    signum: int | None = None
    cause: str | None = None  # a stop the command asked for itself (:meth:`request`), in words
    forced: bool = False
    settled: bool = False  # the work has stopped: the wrap-up runs and is not cut
    _timer: threading.Timer | None = field(default=None, repr=False)
    _shields: int = field(default=0, repr=False)
    _deferred: bool = field(default=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def requested(self) -> bool:
        return self.signum is not None or self.cause is not None

    def reason(self) -> str:
        if self.cause is not None:
            return self.cause
        return f"interrupted by {signal.Signals(self.signum).name}" if self.signum is not None else "not interrupted"

    def request(self, cause: str) -> None:
        """The command asks for a clean stop itself (``cause``: why): as a first signal does, once."""
        with self._lock:
            if self.requested:
                return
            self.cause = cause
        self.say(f"stopping: {cause}; no new {self.unit}, the {self.unit} in flight finish and every record is written")
        self.on_first()

    def handle(self, signum: int, frame: FrameType | None) -> None:
        """The signal handler (runs in the main thread)."""
        if self.signum is None:
            self._first(signum)
            return
        with self._lock:
            announced, self.forced = self.forced, True
        self.cancel_timer()
        if self.settled:
            self.say("writing the last records; the command ends in a moment")
            return
        if not announced:  # a second Ctrl-C (the grace timer has said why already)
            self.say(f"stopping now: the {self.unit} in flight are dropped (a resume plays them again)")
        self.on_force()
        if self.exit_hint is not None:
            self.say(f"continue with: {self.exit_hint}")
            os._exit(INTERRUPTED_EXIT_CODE)
        if self._shields:  # starting a process: stopping mid-start would leave it reading a half-written pipe
            self._deferred = True
            return
        raise KeyboardInterrupt

    def _first(self, signum: int) -> None:
        if self.cause is not None:  # the command is stopping already: this signal is its operator's first
            self.signum = signum
            self.say(f"stopping already ({self.cause}); press Ctrl-C again to stop at once (the run still resumes)")
            return
        self.signum = signum
        name = signal.Signals(signum).name
        then = "finish" if self.grace_s is None else f"get {self.grace_s:g} s to finish"
        self.say(
            f"stopping ({name}): no new {self.unit}; the {self.unit} in flight {then} and every record is "
            "written; press Ctrl-C again to stop at once (the run still resumes)"
        )
        self.on_first()
        if self.grace_s is not None and not self.settled:
            self._timer = threading.Timer(self.grace_s, self._out_of_grace)
            self._timer.daemon = True
            self._timer.start()

    def _out_of_grace(self) -> None:
        with self._lock:
            if self.forced or self.settled:
                return
            self.forced = True
        self.say(f"the {self.unit} in flight did not finish within {self.grace_s:g} s: stopping them")
        signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)

    def settle(self) -> None:
        """The work has stopped (finished, or stopped as asked): from now on nothing interrupts the wrap-up."""
        with self._lock:
            self.settled = True
        self.cancel_timer()

    @contextmanager
    def shielded(self) -> Iterator[None]:
        """A block that a forced stop does not cut (starting worker or player processes): it stops right after."""
        self._shields += 1
        try:
            yield
        finally:
            self._shields -= 1
        if not self._shields and self._deferred:
            self._deferred = False
            raise KeyboardInterrupt

    def cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()


@contextmanager
def stop_on_interrupt(
    grace_s: float | None = GRACE_S,
    say: Callable[[str], None] = _say,
    unit: str = "games",
    *,
    on_first: Callable[[], None] = _nothing,
    on_force: Callable[[], None] = _nothing,
    exit_hint: str | None = None,
) -> Iterator[StopRequest]:
    """Handle SIGINT/SIGTERM as described above while the block runs (outside the main thread: no handlers)."""
    stop = StopRequest(grace_s, say, unit, on_first, on_force, exit_hint)
    with handling(stop):
        yield stop


@contextmanager
def handling(stop: StopRequest) -> Iterator[None]:
    """``stop`` handles SIGINT and SIGTERM while the block runs (main thread only); the old handlers come back after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.getsignal(signum) for signum in SIGNALS}
    for signum in SIGNALS:
        signal.signal(signum, stop.handle)
    try:
        yield
    finally:
        stop.settle()
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def shielded(stop: StopRequest | None) -> contextlib.AbstractContextManager[None]:
    """``stop.shielded()``, or nothing to shield when there is no stop request."""
    return stop.shielded() if stop is not None else contextlib.nullcontext()


def settle(stop: StopRequest | None) -> None:
    """``stop.settle()``, when there is a stop request."""
    if stop is not None:
        stop.settle()
