"""Ctrl-C for commands that write a run: the first asks for a clean stop, the second stops at once.

:func:`stop_on_interrupt` installs handlers for SIGINT and SIGTERM for as long as a
command writes its run. The first signal sets :attr:`StopRequest.requested`: the
command starts no new game (or pair), lets those in flight finish, writes every
record, and says what it kept and how to continue. If what is in flight has not
finished after ``grace_s`` seconds, or a second signal comes, a
``KeyboardInterrupt`` is raised in the main thread: the command stops its workers
at once. Either way every record written before is kept (each line is written and
flushed whole), so the run still resumes. The previous handlers come back at the end.
"""

from __future__ import annotations

import contextlib
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


@dataclass
class StopRequest:
    """Whether a stop was asked for (first Ctrl-C) and whether it was forced (second, or the grace ran out)."""

    grace_s: float = GRACE_S
    say: Callable[[str], None] = _say
    unit: str = "games"  # what the command starts: games, or (environment, agent) pairs
    requested: bool = False
    forced: bool = False
    _timer: threading.Timer | None = field(default=None, repr=False)
    _shields: int = field(default=0, repr=False)
    _deferred: bool = field(default=False, repr=False)

    def handle(self, signum: int, frame: FrameType | None) -> None:
        """The signal handler (runs in the main thread)."""
        if self.requested:
            if not self.forced:  # a second Ctrl-C (the grace timer has said why already)
                self.say(f"stopping now: the {self.unit} in flight are dropped (a resume plays them again)")
            self.forced = True
            self.cancel_timer()
            if self._shields:  # starting a process: stopping mid-start would leave it reading a half-written pipe
                self._deferred = True
                return
            raise KeyboardInterrupt
        self.requested = True
        self.say(f"stopping ({signal.Signals(signum).name}): no new {self.unit}; the {self.unit} in flight get "
                 f"{self.grace_s:g} s to finish; press Ctrl-C again to stop at once (the run still resumes)")
        self._timer = threading.Timer(self.grace_s, self._out_of_grace)
        self._timer.daemon = True
        self._timer.start()

    def _out_of_grace(self) -> None:
        if not self.forced:
            self.forced = True
            self.say(f"the {self.unit} in flight did not finish within {self.grace_s:g} s: stopping them")
            signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)

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
def stop_on_interrupt(grace_s: float = GRACE_S, say: Callable[[str], None] = _say,
                      unit: str = "games") -> Iterator[StopRequest]:
    """Handle SIGINT/SIGTERM as described above while the block runs (outside the main thread: no handlers)."""
    stop = StopRequest(grace_s, say, unit)
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return
    previous = {signum: signal.getsignal(signum) for signum in SIGNALS}
    for signum in SIGNALS:
        signal.signal(signum, stop.handle)
    try:
        yield stop
    finally:
        stop.cancel_timer()
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def shielded(stop: StopRequest | None) -> contextlib.AbstractContextManager[None]:
    """``stop.shielded()``, or nothing to shield when there is no stop request."""
    return stop.shielded() if stop is not None else contextlib.nullcontext()
