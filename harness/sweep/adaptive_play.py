"""Playing a batch of an adaptive tournament's games: in this process, or in worker processes kept for the whole run.

With ``jobs`` 1 the games are played one by one under this process's seats
(:func:`~harness.tournaments.tournament.play_games`); with more, a pool of spawned
workers (the tournament's own: each holds its two player processes, started once) plays
each batch, handing back every game as it finishes. The adaptive schedule records the
results in the batch's order (:func:`~harness.sweep.adaptive.run_adaptive`), so which
games are played never depends on ``jobs``. Once ``stop`` is requested no game of the
batch starts; those playing finish and are handed back. A failed game lets the others
finish, then raises :class:`~harness.tournaments.plan.GameFailed`.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from types import TracebackType

from harness.records.interrupts import StopRequest, shielded
from harness.referee.seats import Seats
from harness.registry.plugins import plugin_sources
from harness.tournaments.plan import GameFailed, GameLine, GameTask, TournamentPlan
from harness.tournaments.tournament import _play_in_worker, _result, _start_worker, end_workers, play_games, spin_s


class BatchPlayer:
    """Plays batches of ``plan``'s games with ``jobs`` workers (1: here, with ``seats``); a context manager."""

    def __init__(self, plan: TournamentPlan, jobs: int, seats: Seats, stop: StopRequest | None = None) -> None:
        self.plan, self.jobs, self.seats, self.stop = plan, jobs, seats, stop
        self._pool: ProcessPoolExecutor | None = None

    def __enter__(self) -> BatchPlayer:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        if self._pool is not None:
            if error is not None and not isinstance(error, GameFailed):
                end_workers(self._pool)  # a forced stop or a failure here: the workers and their players end now
            self._pool.shutdown(wait=True, cancel_futures=True)

    def play(self, tasks: Sequence[GameTask]) -> Iterator[GameLine]:
        """The games of ``tasks``, in finishing order."""
        if not tasks:
            return
        if self.jobs == 1:
            yield from play_games(self.plan, 1, self.seats, tasks=tasks, stop=self.stop)
            return
        pool = self._started()
        running: dict[Future[GameLine], GameTask] = {pool.submit(_play_in_worker, task): task for task in tasks}
        failure: GameFailed | None = None
        for future in as_completed(running):
            if future.cancelled():
                continue
            try:
                yield _result(future, running[future])
            except GameFailed as error:
                failure = failure or error
            if failure is not None or (self.stop is not None and self.stop.requested):
                for queued in running:
                    queued.cancel()  # not started: never played; those playing finish
        if failure is not None:
            raise failure

    def _started(self) -> ProcessPoolExecutor:
        if self._pool is None:
            players = self.plan.referee and len(self.plan.privileged_agents) < len(self.plan.agents)
            with shielded(self.stop):  # a forced stop waits for the workers to start
                self._pool = ProcessPoolExecutor(
                    self.jobs,
                    mp_context=multiprocessing.get_context("spawn"),
                    initializer=_start_worker,
                    initargs=(plugin_sources(), spin_s(self.jobs), players),
                )
        return self._pool
