"""Running an ``arena bench paper`` plan: the run directory, resume, and pairs in parallel.

The worker for one pair is :func:`harness.bench.paper_worker.run_task`. Run
directory (default ``runs/<timestamp>-bench-paper``): ``manifest.json`` (the plan,
including whether agents adapted through the referee), ``results.jsonl`` (one
:class:`EnvAgentResult` per line, appended as each pair finishes, so an
interrupted run keeps them and ``resume`` skips them), then the report's
``results.json``, ``report.md`` and plots. Pairs run in spawned worker processes
as the tournament's games do; each starts its agent's own process.
"""

from __future__ import annotations

import json
import multiprocessing
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from engine import EnvKey
from harness.bench.paper_plan import SCHEMA, EnvAgentResult, PaperPlan
from harness.bench.paper_worker import run_task
from harness.records.interrupts import StopRequest, settle, shielded
from harness.records.lock import writer_lock
from harness.records.provenance import git_commit, versions
from harness.referee.isolation import agent_isolation
from harness.registry.plugins import loaded_plugins
from harness.tournaments.plan import TournamentError
from harness.tournaments.resume import RunInterrupted
from harness.tournaments.tournament import _ignore_interrupts, check_run_dir, end_workers
from harness.tournaments.tournament import default_run_dir as tournament_run_dir

RUNS_ROOT = Path("runs")
T = TypeVar("T")
R = TypeVar("R")


def parallel_map(function: Callable[[T], R], items: Sequence[T], jobs: int, stop: StopRequest | None = None) -> Iterator[R]:
    """``function`` over ``items`` in finishing order, in ``jobs`` spawned worker processes.

    The workers are not daemons (``ProcessPoolExecutor``), so each can start the agent
    process of its pair; spawn, not fork, as the tournament does: the parent's
    progress-bar thread must not be copied mid-lock. Once ``stop`` is requested no
    new item starts (those running finish); a KeyboardInterrupt ends the workers at once.
    One job without a ``stop`` (a library call) runs here; with one, the item runs in a
    worker even for one job, so that a forced stop lands in this process's wait, never
    inside the item's own code (where a callback could swallow it: seen in numba's cache).
    """
    jobs = max(1, min(jobs, len(items)))
    if jobs == 1 and stop is None:
        for item in items:
            yield function(item)
        return
    pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"), initializer=_ignore_interrupts)
    with shielded(stop):  # the submits start the workers
        futures = [pool.submit(function, item) for item in items]
    try:
        pending = set(futures)
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            if stop is not None and stop.requested:
                for future in pending:
                    future.cancel()
                pending = {future for future in pending if not future.cancelled()}
            for future in done:
                if not future.cancelled():
                    yield future.result()
    except BaseException:
        end_workers(pool)
        raise
    finally:
        for future in futures:
            future.cancel()
        pool.shutdown(wait=True, cancel_futures=True)


def default_run_dir(root: Path = RUNS_ROOT) -> Path:
    """``runs/<YYYYmmdd-HHMMSS>-bench-paper``, with a numeric suffix if that is taken."""
    return tournament_run_dir("bench-paper", root)


def read_plan(run_dir: Path) -> PaperPlan:
    """The plan recorded in ``run_dir/manifest.json`` (for ``--resume``)."""
    path = run_dir / "manifest.json"
    if not path.is_file():
        raise TournamentError(f"cannot resume {str(run_dir)!r}: no manifest.json there (not a bench-paper run?)")
    manifest = json.loads(path.read_text(encoding="utf-8"))
    if manifest.get("kind") != "bench-paper":
        raise TournamentError(f"cannot resume {str(run_dir)!r}: its manifest is a {manifest.get('kind')!r} run")
    return PaperPlan.model_validate(manifest["plan"])


def read_results(run_dir: Path) -> dict[tuple[EnvKey, str], EnvAgentResult]:
    """The pairs recorded in ``results.jsonl``, the latest line of each (a failed pair re-run on resume)."""
    path = run_dir / "results.jsonl"
    if not path.exists():
        return {}
    results = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            result = EnvAgentResult.model_validate_json(line)
            results[result.key] = result
    return results


def run_bench_paper(
    plan: PaperPlan,
    run_dir: Path,
    jobs: int,
    *,
    command: str = "",
    resume: bool = False,
    on_result: Callable[[EnvAgentResult], None] | None = None,
    stop: StopRequest | None = None,
    shared_dir: Path | None = None,
) -> list[EnvAgentResult]:
    """Run the plan's pairs not finished yet (``resume``: those without an ``ok`` line), streaming each line.

    Returns every pair's latest result in plan order. With ``jobs`` > 1 the pairs
    run in spawned worker processes (a script calling this needs the usual
    ``if __name__ == "__main__":`` guard); ``on_result`` runs here after each line is written.
    Once ``stop`` is requested no new pair starts; with pairs left unplayed the run is
    marked interrupted and :class:`~harness.tournaments.resume.RunInterrupted` is raised.
    ``shared_dir``: where each environment's one PPO-2K training is kept (default ``run_dir/ppo-2k``; a sweep gives
    one directory to all its cells, so two agents' cells on one environment train it once).
    """
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise TournamentError(f"jobs={jobs!r}: give 1 or more worker processes")
    if not resume:
        check_run_dir(run_dir)
    with writer_lock(run_dir):  # one writer per run directory: a second command fails at once, naming the holder
        _run_pairs(plan, run_dir, jobs, command, resume, on_result, stop, shared_dir or run_dir / "ppo-2k")
    recorded = read_results(run_dir)
    return [recorded[task.key] for task in plan.tasks() if task.key in recorded]


def _run_pairs(
    plan: PaperPlan,
    run_dir: Path,
    jobs: int,
    command: str,
    resume: bool,
    on_result: Callable[[EnvAgentResult], None] | None,
    stop: StopRequest | None,
    shared_dir: Path,
) -> None:
    """Play the pairs not finished yet and append their lines (the caller holds the writer lock)."""
    if resume:
        _drop_partial_line(run_dir / "results.jsonl")
    finished = {k for k, r in read_results(run_dir).items() if r.status == "ok"} if resume else set()
    todo = [task.model_copy(update={"shared_dir": str(shared_dir)}) for task in plan.tasks() if task.key not in finished]
    manifest = _manifest(plan, run_dir, jobs, command, resumed=len(finished))
    _write_json(run_dir / "manifest.json", manifest)
    status, error, played = "complete", None, 0
    try:
        with (run_dir / "results.jsonl").open("a", encoding="utf-8") as lines:
            for result in parallel_map(run_task, todo, jobs, stop):
                lines.write(result.model_dump_json() + "\n")
                lines.flush()
                played += 1
                if on_result is not None:
                    on_result(result)
        settle(stop)  # the pairs have stopped: neither a grace timer still running nor a signal cuts the wrap-up
        if played < len(todo):
            raise RunInterrupted(len(finished) + played, len(plan.tasks()), forced=False)
    except BaseException as failure:
        settle(stop)
        status = "interrupted" if isinstance(failure, KeyboardInterrupt | RunInterrupted) else "failed"
        error = f"{type(failure).__name__}: {failure}"
        if isinstance(failure, KeyboardInterrupt):
            raise RunInterrupted(len(finished) + played, len(plan.tasks()), forced=True) from None
        raise
    finally:
        _write_json(run_dir / "manifest.json", manifest | {"status": status, "finished_at": _now()} | ({"error": error} if error else {}))


def _drop_partial_line(path: Path) -> None:
    """Cut a line left half-written by a killed run, so the next line starts clean (its pair is re-run)."""
    if path.exists() and (text := path.read_text(encoding="utf-8")) and not text.endswith("\n"):
        path.write_text(text[: text.rfind("\n") + 1], encoding="utf-8")


def _manifest(plan: PaperPlan, run_dir: Path, jobs: int, command: str, resumed: int) -> dict[str, object]:
    return {
        "schema_version": SCHEMA,
        "kind": "bench-paper",
        "run_id": run_dir.name,
        "command": command,
        "plan": plan.model_dump(mode="json"),
        "pairs": len(plan.tasks()),
        "already_finished": resumed,
        "jobs": jobs,
        "privileged_opponents": [o.label for o in plan.opponents if o.privileged],
        "referee": "process: K, the ledger and the opponents in the referee; each agent in its own process"
        if plan.referee
        else "in-process (UNENFORCED: a cheating agent could reach K or the ledger)",
        "agent_processes": agent_isolation(),
        "seeding": "agent and match seeds = SeedSequence([seed, env_id, sha256(agent spec), ...]): "
        "independent of --jobs and of the other pairs",
        "plugins": {
            name: source
            for name, source in loaded_plugins().items()
            if any(spec.split(":")[0] == name for spec in (*plan.agents, *(o.spec for o in plan.opponents)))
        },
        "versions": versions(),
        "git": git_commit(),
        "started_at": _now(),
        "status": "running",
    }


def _write_json(path: Path, data: object) -> None:
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
