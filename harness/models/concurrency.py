"""Adaptive concurrency: how many model requests may be in flight, found by AIMD under a ceiling.

:class:`AdaptiveLimit` is shared by every call of one :class:`~harness.models.client.ModelClient`
(so by all games of a run, adaptation waves and evaluation alike). ``--concurrency`` is the
ceiling; the limit starts there. Each request attempt holds a slot while it is on the wire
(never while it waits to retry). An attempt the provider throttled (HTTP 429) or that timed
out halves the limit (multiplicative decrease, at most once per window: only an attempt that
started after the last decrease can cause another, as in TCP), never below ``floor``; each
successful attempt adds ``1 / limit`` (additive increase: about one slot per window of
successes), never above the ceiling. The slots in use may exceed a freshly lowered limit
until they end; new attempts wait.

Retry-After is per request: the throttled request waits it out without a slot, and the
others go on under the lowered limit; nothing stops every request unless every request is
throttled. What the limit did is kept for the report: its lowest value, the number of
decreases, and the settled limit (the mean limit over the last :data:`SETTLED_WINDOW`
attempts).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

SETTLED_WINDOW = 200  # attempts over which the settled limit is averaged
DECREASE_FACTOR = 0.5


@dataclass
class Slot:
    """One attempt's slot: the decrease count when it was granted, and its outcome (set by the caller)."""

    epoch: int
    throttled: bool = False  # a 429 or a timeout: the provider is overloaded
    succeeded: bool = False


class AdaptiveLimit:
    """Requests in flight at most ``limit`` (AIMD between ``floor`` and ``ceiling``); see the module docstring."""

    def __init__(self, ceiling: int, floor: int = 1) -> None:
        if ceiling < 1 or not 1 <= floor <= ceiling:
            raise ValueError(f"concurrency: give 1 <= floor <= ceiling, not floor={floor}, ceiling={ceiling}")
        self.ceiling, self.floor = ceiling, floor
        self.limit = float(ceiling)
        self.in_flight = 0
        self.lowest = float(ceiling)
        self.decreases = 0
        self._recent: deque[float] = deque(maxlen=SETTLED_WINDOW)
        self._free: asyncio.Condition | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def allowed(self) -> int:
        """Attempts that may be in flight now."""
        return max(self.floor, int(self.limit))

    @property
    def settled(self) -> float:
        """The mean limit over the last attempts (the ceiling before any)."""
        return sum(self._recent) / len(self._recent) if self._recent else float(self.ceiling)

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[Slot]:
        """Wait for a free slot, hold it for one attempt; the caller marks the slot ``throttled`` or ``succeeded``."""
        free = self._condition()
        if self.in_flight >= self.allowed:
            async with free:
                await free.wait_for(lambda: self.in_flight < self.allowed)
        self.in_flight += 1
        slot = Slot(self.decreases)
        try:
            yield slot
        finally:
            self.in_flight -= 1
            self._record(slot)
            async with free:
                free.notify_all()

    def _record(self, slot: Slot) -> None:
        if slot.throttled and slot.epoch == self.decreases:
            self.limit = max(float(self.floor), self.limit * DECREASE_FACTOR)
            self.decreases += 1
            self.lowest = min(self.lowest, self.limit)
        elif slot.succeeded:
            self.limit = min(float(self.ceiling), self.limit + 1.0 / self.limit)
        self._recent.append(self.limit)

    def _condition(self) -> asyncio.Condition:
        """The condition of this event loop (a client may serve several ``asyncio.run`` calls, one after another)."""
        loop = asyncio.get_running_loop()
        if self._free is None or self._loop is not loop:
            self._free, self._loop = asyncio.Condition(), loop
        return self._free
