"""Where a sweep's cells run: worker processes on this machine (``local``) or Ray tasks (``ray``).

Both call :func:`harness.sweep.cells.run_cell` on each cell not finished yet; each cell
writes its own run directory under ``--out`` (on a multi-node cluster ``--out`` must be a
path every node sees: a shared file system). A worker that dies mid-cell is replaced and
its cell run again, which resumes from the cell's own records (:mod:`harness.sweep.cells`):

- ``local``: a spawned ``ProcessPoolExecutor``; when a worker dies the pool breaks, the
  cells it had not reported are run again in a fresh pool (up to ``retries`` times);
- ``ray``: one task per cell (``num_cpus=1``), ``max_retries`` for a dead worker or node;
  ``address`` (or ``RAY_ADDRESS``) joins a running cluster (``ray start --head``), else a
  local Ray instance with ``jobs`` CPUs is started. ``ray`` is imported only here, when used.

Model calls of a provider named under ``[limits]`` go through one limiting proxy for the
whole sweep (:mod:`harness.sweep.limiter`): a thread of this driver (local) or a Ray actor.

Ctrl-C (``stop``, :mod:`harness.records.interrupts`): no new cell starts; the cells in
flight get the grace period, then their workers (and the processes they started) are
ended; :class:`~harness.tournaments.resume.RunInterrupted` says how many cells were
finished. Every cell left half-way resumes from its own records when the same file is run
again on the same directory.

The sweep directory holds ``sweep.json`` (the file's text and its cells; a second command
with a different file on the same directory is refused) and ``outcomes.jsonl`` (a line per
cell per command).
"""

from __future__ import annotations

import itertools
import json
import multiprocessing
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, Literal

from harness.records.interrupts import StopRequest, settle
from harness.records.lock import writer_lock
from harness.sweep.cells import CellOutcome, cell_dir, cell_state, provider, run_cell
from harness.sweep.limiter import Limiter, LimitingProxy, ProxyActor
from harness.sweep.spec import Cell, ProviderLimits, Sweep, SweepError
from harness.tournaments.resume import RunInterrupted
from harness.tournaments.tournament import _ignore_interrupts, end_workers

Backend = Literal["local", "ray"]
SWEEP_FILE, OUTCOMES_FILE = "sweep.json", "outcomes.jsonl"
RETRIES = 3


def run_sweep(
    sweep: Sweep,
    out: Path,
    *,
    backend: Backend = "local",
    jobs: int = 1,
    address: str | None = None,
    on_outcome: Callable[[CellOutcome], None] | None = None,
    stop: StopRequest | None = None,
) -> list[CellOutcome]:
    """Run every cell of ``sweep`` not finished yet under ``out``; returns one outcome per cell, in the sweep's order.

    Raises :class:`RunInterrupted` (after recording every outcome) when ``stop`` left cells unplayed."""
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise SweepError(f"--jobs {jobs!r}: give 1 or more workers")
    out.mkdir(parents=True, exist_ok=True)
    with writer_lock(out):  # one driver per sweep directory
        _record_sweep(sweep, out)
        outcomes = {c.id: CellOutcome(id=c.id, status="skipped") for c in sweep.cells if cell_state(cell_dir(out, c), c) == "finished"}
        todo = [c for c in sweep.cells if c.id not in outcomes]
        upstreams = _upstreams(sweep, todo)
        proxies: list[LimitingProxy] = []
        try:
            if backend == "ray":
                runner = _run_ray(todo, out, jobs, address, upstreams, sweep.file.limits, stop)
            else:
                proxies = [
                    LimitingProxy(base, Limiter(sweep.file.limits[name]), port=sweep.file.limits[name].port)
                    for name, base in upstreams.items()
                ]
                endpoints = {name: proxy.api_base(base) for proxy, (name, base) in zip(proxies, upstreams.items())}
                runner = _run_local(todo, out, jobs, endpoints, stop=stop)
            with (out / OUTCOMES_FILE).open("a", encoding="utf-8") as lines:
                for outcome in runner:
                    outcomes[outcome.id] = outcome
                    lines.write(outcome.model_dump_json() + "\n")
                    lines.flush()
                    if on_outcome is not None:
                        on_outcome(outcome)
            settle(stop)  # the cells have stopped: the wrap-up is not cut
        except KeyboardInterrupt:
            settle(stop)
            raise RunInterrupted(sum(o.status != "failed" for o in outcomes.values()), len(sweep.cells), forced=True) from None
        finally:
            for proxy in proxies:
                proxy.stop()
    if len(outcomes) < len(sweep.cells):
        raise RunInterrupted(sum(o.status != "failed" for o in outcomes.values()), len(sweep.cells), forced=False)
    return [outcomes[c.id] for c in sweep.cells if c.id in outcomes]


def _upstreams(sweep: Sweep, cells: Sequence[Cell]) -> dict[str, str]:
    """Provider -> the upstream ``api_base`` its limited cells call (one endpoint per provider)."""
    upstreams: dict[str, str] = {}
    for cell in cells:
        if cell.config is None or provider(cell.config.model) not in sweep.file.limits:
            continue
        name, base = provider(cell.config.model), cell.config.model_options.api_base
        if base is None:
            raise SweepError(
                f"limits.{name}: the limiter forwards to the models' endpoint: give their api_base "
                f'(options = {{ model_options = {{ api_base = "https://..." }} }})'
            )
        if upstreams.setdefault(name, base) != base:
            raise SweepError(f"limits.{name}: its models call two endpoints ({upstreams[name]}, {base}); give one")
    return upstreams


def _record_sweep(sweep: Sweep, out: Path) -> None:
    path = out / SWEEP_FILE
    if path.is_file():
        recorded = Sweep.model_validate_json(path.read_text(encoding="utf-8"))
        if [c.id for c in recorded.cells] != [c.id for c in sweep.cells]:
            raise SweepError(
                f"{out} holds another sweep ({len(recorded.cells)} cells, a different grid): "
                "give the same file to resume it, or another --out"
            )
        return
    path.write_text(json.dumps(sweep.model_dump(mode="json"), indent=2) + "\n", encoding="utf-8")


def read_sweep(out: Path) -> Sweep:
    """The sweep recorded in ``out/sweep.json``."""
    path = out / SWEEP_FILE
    if not path.is_file():
        raise SweepError(f"{out}: no {SWEEP_FILE} there (not a sweep directory?)")
    return Sweep.model_validate_json(path.read_text(encoding="utf-8"))


def _run_local(
    cells: Sequence[Cell], out: Path, jobs: int, endpoints: dict[str, str], retries: int = RETRIES, stop: StopRequest | None = None
) -> Iterator[CellOutcome]:
    """Cells in spawned worker processes; a pool broken by a dead worker is replaced and its unreported cells rerun.

    Workers ignore Ctrl-C and lead their own process group (as the tournament's): once ``stop`` is requested
    the cells not started are cancelled; a KeyboardInterrupt (a forced stop) ends the workers at once."""
    todo = list(cells)
    for _attempt in range(retries + 1):
        if not todo or (stop is not None and stop.requested):
            return
        if jobs == 1 and _attempt == 0 and len(todo) == 1 and stop is None:
            yield run_cell(todo[0], out, endpoints)
            return
        reported: set[str] = set()
        pool = ProcessPoolExecutor(
            max(1, min(jobs, len(todo))), mp_context=multiprocessing.get_context("spawn"), initializer=_ignore_interrupts
        )
        waiting = iter(todo)  # handed to the pool one at a time as cells finish: a stop leaves the rest unstarted
        try:
            running = {pool.submit(run_cell, cell, out, endpoints): cell for cell in itertools.islice(waiting, jobs)}
            while running:
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    running.pop(future)
                    try:
                        outcome = future.result()
                    except BrokenProcessPool:
                        continue  # a worker died: this cell runs again in a fresh pool
                    reported.add(outcome.id)
                    yield outcome
                    if stop is None or not stop.requested:
                        for cell in itertools.islice(waiting, 1):
                            running[pool.submit(run_cell, cell, out, endpoints)] = cell
        except BaseException:
            end_workers(pool)
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        todo = [cell for cell in todo if cell.id not in reported]
    for cell in todo:
        yield CellOutcome(id=cell.id, status="failed", error=f"its worker died {retries + 1} times; resume the sweep to retry")


def _run_ray(
    cells: Sequence[Cell],
    out: Path,
    jobs: int,
    address: str | None,
    upstreams: dict[str, str],
    limits: dict[str, ProviderLimits],
    stop: StopRequest | None = None,
) -> Iterator[CellOutcome]:
    """One Ray task per cell; Ray reruns a task whose worker or node died (``max_retries``); a limiter actor per provider."""
    import ray  # noqa: PLC0415 - only the Ray backend needs it

    address = address or os.environ.get("RAY_ADDRESS")
    started_here = not ray.is_initialized()
    if started_here:
        # a local instance: its workers at this command's own priority, as --backend local's are (Ray's default
        # worker_niceness of 15 lets any other job on the machine take their CPU)
        settings: dict[str, Any] = (
            {"address": address} if address else {"num_cpus": jobs, "include_dashboard": False, "_system_config": {"worker_niceness": 0}}
        )
        ray.init(**settings, log_to_driver=False, configure_logging=False)
    try:
        host = ray.util.get_node_ip_address()
        actor_class: Any = ray.remote(num_cpus=0)(ProxyActor)
        actors = {name: actor_class.remote(base, limits[name], host) for name, base in upstreams.items()}
        endpoints = {name: ray.get(actor.api_base.remote(upstreams[name])) for name, actor in actors.items()}
        task: Any = ray.remote(num_cpus=1, max_retries=RETRIES)(run_cell)
        refs = {task.remote(cell, str(out.resolve()), endpoints): cell for cell in cells}
        pending = list(refs)
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            if stop is not None and stop.requested and pending:  # no new cell: the queued ones are cancelled
                for ref in pending:
                    ray.cancel(ref)
                pending = []
            for ref in done:
                cell = refs[ref]
                try:
                    yield ray.get(ref)
                except ray.exceptions.RayError as error:
                    yield CellOutcome(id=cell.id, status="failed", error=f"{type(error).__name__}: {str(error)[:300]}")
    finally:
        if started_here:
            ray.shutdown()
