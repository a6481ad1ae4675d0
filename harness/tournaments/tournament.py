"""Running a tournament plan over worker processes into a run directory.

A run directory holds ``manifest.json`` (written first, rewritten at the end
with the status), ``games.jsonl`` (one line per game, appended and flushed as
each finishes, in finishing order) and, once all games are in,
``results.json`` and ``results.md`` (:mod:`harness.tournaments.results`).
Plans, pairings, seeds and single games are :mod:`harness.tournaments.plan`.

Under the referee (the default) each worker holds the environments (K) and runs
the game loop, and keeps two long-lived player processes
(:class:`~harness.referee.seats.Seats`, one per side) in which every unprivileged
agent is built per game and asked for its moves; before anything is written, the
unprivileged agents are built once in a player process to check their specs.
The manifest's ``referee`` field says which mode the run used; an in-process run
is marked UNENFORCED there and in the results.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import multiprocessing
import multiprocessing.util
import os
import re
import signal
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.records.interrupts import StopRequest, settle, shielded
from harness.records.lock import writer_lock
from harness.records.provenance import git_commit, versions
from harness.referee.isolation import agent_isolation
from harness.referee.seats import Seats
from harness.registry.plugins import load_worker_plugins, loaded_plugins, plugin_sources
from harness.registry.specs import parse_spec
from harness.tournaments.calls_log import CALLS_FILE, CallsLog
from harness.tournaments.plan import (
    MANIFEST_SCHEMA,
    RUNS_ROOT,
    GameFailed,
    GameLine,
    GameTask,
    TournamentError,
    TournamentPlan,
    check_agents_on_seat,
    play_task,
)
from harness.tournaments.results import TournamentResults, results_markdown, summarise
from harness.tournaments.resume import CallsSoFar, RunInterrupted, keep_calls_of, read_manifest, recorded_games

REFEREE_MODE = (
    "process: K, the game loop, the rewards and privileged agents in the tournament workers; every other "
    "agent built and asked for its moves in a player process given only the rules, its spec and its seed"
)
IN_PROCESS_MODE = "in-process (UNENFORCED: agents played in the process that holds K; a cheating agent could reach it)"
AHEAD = 4  # tasks queued per worker: enough to keep it busy, few to cancel when a game fails
SPIN_S = 0.002


def play_games(
    plan: TournamentPlan, jobs: int, seats: Seats | None = None, *, tasks: Sequence[GameTask] | None = None, stop: StopRequest | None = None
) -> Iterator[GameLine]:
    """Every game of the plan (or just ``tasks``), in finishing order; ``jobs`` worker processes (1: in this process).

    Under the referee each worker keeps its own two player processes (one per
    side) for all its games; with ``jobs`` 1 the games use ``seats`` (their
    processes are started here if not given, and closed at the end). Once
    ``stop`` is requested no new game starts; those playing finish and are yielded.
    """
    todo = list(plan.tasks()) if tasks is None else list(tasks)
    if not todo:
        return
    jobs = max(1, min(jobs, len(todo)))
    if jobs == 1:
        with contextlib.ExitStack() as stack:
            if seats is None:
                seats = stack.enter_context(Seats(spin_s(1)))
            for task in todo:
                if stop is not None and stop.requested:
                    return
                yield play_task(task, seats)
        return
    players = plan.referee and len(plan.privileged_agents) < len(plan.agents)
    yield from _pooled(todo, jobs, players, stop)


def _pooled(tasks: list[GameTask], jobs: int, players: bool, stop: StopRequest | None = None) -> Iterator[GameLine]:
    """The tasks over ``jobs`` spawned workers, a few at a time each; a failed game stops the run.

    After a failure (or once ``stop`` is requested) the games already playing
    finish and are yielded (so they are recorded), then the first failure is
    raised; a worker that dies is a GameFailed naming its game. A KeyboardInterrupt
    (a second Ctrl-C) ends the workers at once.

    Workers are ``concurrent.futures`` processes, which (unlike a ``multiprocessing.Pool``'s
    daemonic workers) may start the player processes of their seats.
    """
    # spawn, not fork: the parent may be running threads (the progress bar) that fork would copy mid-lock.
    context = multiprocessing.get_context("spawn")
    executor = ProcessPoolExecutor(jobs, mp_context=context, initializer=_start_worker, initargs=(plugin_sources(), spin_s(jobs), players))
    waiting = iter(tasks)
    running: dict[Future[GameLine], GameTask] = {}
    failure: GameFailed | None = None
    stopping = False
    try:
        with shielded(stop):  # the first submits start the workers
            for task in itertools.islice(waiting, AHEAD * jobs):
                running[executor.submit(_play_in_worker, task)] = task
        while running:
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            if not stopping and (failure is not None or (stop is not None and stop.requested)):
                stopping = True  # games not started are cancelled, those playing still finish
                for queued in running:
                    queued.cancel()
            for future in done:
                task = running.pop(future)
                if future.cancelled():
                    continue
                try:
                    line = _result(future, task)
                except GameFailed as error:
                    if failure is None:
                        failure = error
                        for queued in running:
                            queued.cancel()
                    continue
                yield line
                if failure is None and not (stop is not None and stop.requested):
                    for following in itertools.islice(waiting, 1):
                        running[executor.submit(_play_in_worker, following)] = following
            running = {future: task for future, task in running.items() if not future.cancelled()}
    except BaseException:
        end_workers(executor)
        raise
    finally:
        executor.shutdown(wait=True, cancel_futures=True)
    if failure is not None:
        raise failure


def end_workers(executor: ProcessPoolExecutor) -> None:
    """End the pool's workers now, with the player (or agent) processes they started: each worker leads its own
    process group (:func:`_ignore_interrupts`), which is killed whole, so no child is left reading a closed pipe."""
    processes = getattr(executor, "_processes", None) or {}
    for process in list(processes.values()):
        with contextlib.suppress(OSError, AttributeError, TypeError):
            if os.getpgid(process.pid) == process.pid:
                os.killpg(process.pid, signal.SIGKILL)
            else:  # killed before its initializer ran: it has no children yet
                process.terminate()
    executor.shutdown(wait=False, cancel_futures=True)


def _result(future: Future[GameLine], task: GameTask) -> GameLine:
    try:
        return future.result()
    except BrokenProcessPool as broken:
        where = f"env {task.env_id}, {task.pairing.a} vs {task.pairing.b}, game {task.game_index}"
        raise GameFailed(f"{where}: the worker process playing it exited ({broken})") from None


def spin_s(workers: int) -> float:
    """How long a worker waits awake for a player's answer: only with cores to spare (a worker and its busy
    player need two each; a spinning worker on a crowded machine slows the player it waits for)."""
    return SPIN_S if 4 * workers <= (os.cpu_count() or 1) else 0.0


_WORKER_SEATS: Seats | None = None  # a worker's own seats, started by _start_worker


def _start_worker(plugins: tuple[str, ...], spin: float = 0.0, players: bool = False) -> None:
    """Workers leave Ctrl-C to the parent, load the parent's plugins (``--plugin``), and set up their seats.

    A spawned worker starts with a fresh registry: without the plugins it would not
    know a plugin agent. With ``players`` its seats' player processes start now
    (otherwise at its first refereed game); they are closed when the worker exits.
    """
    global _WORKER_SEATS
    _ignore_interrupts()
    load_worker_plugins(plugins)
    _WORKER_SEATS = Seats(spin)
    multiprocessing.util.Finalize(_WORKER_SEATS, _WORKER_SEATS.close, exitpriority=10)
    if players:
        _WORKER_SEATS.start()


def _play_in_worker(task: GameTask) -> GameLine:
    return play_task(task, _WORKER_SEATS)


def _ignore_interrupts() -> None:
    """Workers leave Ctrl-C to the parent, which stops the pool; each leads a process group of its own children."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(OSError):
        os.setpgid(0, 0)


def default_jobs() -> int:
    return os.cpu_count() or 1


def default_run_dir(name: str, root: Path = RUNS_ROOT) -> Path:
    """``runs/<YYYYmmdd-HHMMSS>-<name>``, with a numeric suffix if that is taken."""
    slug = re.sub(r"[^A-Za-z0-9.=-]+", "-", name).strip("-")[:60] or "run"
    base = root / f"{datetime.now().strftime('%Y%m%d-%H%M%S')}-{slug}"
    path, suffix = base, 2
    while path.exists():
        path, suffix = base.with_name(f"{base.name}-{suffix}"), suffix + 1
    return path


def check_run_dir(path: Path) -> None:
    """Refuse a path that is a file or a directory already holding something (nothing is written here)."""
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise TournamentError(f"run directory {str(path)!r} already exists and is not empty: choose another --out")


def run_tournament(
    plan: TournamentPlan,
    run_dir: Path,
    jobs: int | None = None,
    *,
    command: str = "",
    kind: str = "tournament",
    on_game: Callable[[GameLine], None] | None = None,
    resume: bool = False,
    stop: StopRequest | None = None,
    settings: dict[str, object] | None = None,
) -> TournamentResults:
    """Play the plan, recording everything under ``run_dir``; returns the summary (also written there).

    With ``jobs`` > 1 the games run in that many spawned worker processes (at
    most one per game), so a script calling this needs the usual
    ``if __name__ == "__main__":`` guard. ``on_game`` is called in this process
    after each game is written; ``settings`` (the command's flags) go into the manifest. ``resume``: ``run_dir`` holds this plan's run
    (:mod:`harness.tournaments.resume`); only the games not on record are played.
    Once ``stop`` is requested no new game starts; when games are left unplayed
    the run is marked interrupted and :class:`RunInterrupted` is raised.
    """
    jobs = default_jobs() if jobs is None else jobs
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise TournamentError(f"jobs={jobs!r}: give 1 or more worker processes")
    if not resume:
        check_run_dir(run_dir)
    with Seats(spin_s(1)) as seats:
        if plan.referee and len(plan.privileged_agents) < len(plan.agents):
            with shielded(stop):  # a forced stop waits for the player processes to start
                if jobs == 1:
                    seats.start()
                check_agents_on_seat(plan, seats)  # before anything is written; raises AgentSpecError
            if jobs > 1:
                seats.close()  # the workers have their own
        with writer_lock(run_dir):  # one writer per run directory: a second command fails at once, naming the holder
            return _record(plan, run_dir, jobs, seats, command, kind, on_game, resume, stop, settings)


def _record(
    plan: TournamentPlan,
    run_dir: Path,
    jobs: int,
    seats: Seats,
    command: str,
    kind: str,
    on_game: Callable[[GameLine], None] | None,
    resume: bool = False,
    stop: StopRequest | None = None,
    settings: dict[str, object] | None = None,
) -> TournamentResults:
    run_dir.mkdir(parents=True, exist_ok=True)
    lines: list[GameLine] = recorded_games(run_dir, plan) if resume else []
    so_far = keep_calls_of(run_dir, lines, CALLS_FILE) if resume else CallsSoFar()
    manifest = _manifest(plan, run_dir, jobs, command, kind) | ({"settings": settings} if settings else {})
    if resume:
        manifest = read_manifest(run_dir, kind)
        earlier: Any = manifest.get("resumes") or []
        manifest["resumes"] = [*earlier, {"at": _now(), "games_on_record": len(lines), "command": command, "jobs": jobs}]
        manifest["status"] = "running"
    _write_json(run_dir / "manifest.json", manifest)
    done = {(line.env_id, line.pairing, line.game) for line in lines}
    todo = [task for task in plan.tasks() if (task.env_id, task.pairing_index, task.game_index) not in done]
    calls = CallsLog(run_dir / CALLS_FILE, so_far)
    try:
        with (run_dir / "games.jsonl").open("a", encoding="utf-8") as games_file:
            for line in play_games(plan, jobs, seats, tasks=todo, stop=stop):
                calls.write(line)  # a game's model calls before the game
                games_file.write(line.model_dump_json() + "\n")
                games_file.flush()
                lines.append(line)
                if on_game is not None:
                    on_game(line)
        settle(stop)  # the games have stopped: neither a grace timer still running nor a signal cuts the wrap-up
        if len(lines) < plan.total_games:
            raise RunInterrupted(len(lines), plan.total_games, forced=False)
        results = summarise(plan, lines)
        (run_dir / "results.json").write_text(results.model_dump_json(indent=2) + "\n", encoding="utf-8")
        (run_dir / "results.md").write_text(results_markdown(results) + calls.summary(), encoding="utf-8")
    except BaseException as error:
        settle(stop)
        interrupted = isinstance(error, KeyboardInterrupt | RunInterrupted)
        status = "interrupted" if interrupted else "failed"
        _finish(run_dir, manifest, status, len(lines), f"{type(error).__name__}: {error}")
        if isinstance(error, KeyboardInterrupt):
            raise RunInterrupted(len(lines), plan.total_games, forced=True) from None
        raise
    finally:
        calls.close()
    _finish(run_dir, manifest, "complete", len(lines))
    return results


def _manifest(plan: TournamentPlan, run_dir: Path, jobs: int, command: str, kind: str) -> dict[str, object]:
    return {
        "schema_version": MANIFEST_SCHEMA,
        "kind": kind,
        "run_id": run_dir.name,
        "command": command,
        "agents": list(plan.agents),
        "agent_parameters": {spec: parse_spec(spec)[1] for spec in plan.agents},  # defaults included
        "privileged_agents": list(plan.privileged_agents),
        "plugins": _plugin_origins(plan),
        "pairings": [{"a": p.a, "b": p.b} for p in plan.pairings],
        "envs": list(plan.env_ids),
        "games_per_pairing_and_env": plan.games,
        "total_games": plan.total_games,
        "seed": plan.seed,
        "jobs": jobs,
        "workers": max(1, min(jobs, plan.total_games)),
        "referee": REFEREE_MODE if plan.referee else IN_PROCESS_MODE,
        "agent_processes": agent_isolation(),
        "colours": "A is black in even-numbered games, white in odd ones",
        "seeding": "game seed = SeedSequence([seed, env_id, pairing key, game index]); pairing key = "
        "first 8 bytes of sha256('A\\nB'); agent generators = SeedSequence(game_seed).spawn(2)",
        "versions": versions(),
        "git": git_commit(),
        "started_at": _now(),
        "status": "running",
    }


def _plugin_origins(plan: TournamentPlan) -> dict[str, str]:
    """Where each plan agent from a plugin came from: entry point, module name or file path."""
    origins = loaded_plugins()
    names = dict.fromkeys(parse_spec(spec)[0].name for spec in plan.agents)
    return {name: origins[name] for name in names if name in origins}


def _finish(run_dir: Path, manifest: dict[str, object], status: str, games: int, error: str | None = None) -> None:
    manifest |= {"status": status, "finished_at": _now(), "games_played": games}
    manifest.pop("error", None)  # an earlier interruption's, on a resumed run
    if error is not None:
        manifest["error"] = error
    _write_json(run_dir / "manifest.json", manifest)


def _write_json(path: Path, data: object) -> None:
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def read_games(run_dir: Path) -> list[GameLine]:
    """The game lines of a run directory, validated."""
    with (run_dir / "games.jsonl").open(encoding="utf-8") as games_file:
        return [GameLine.model_validate_json(line) for line in games_file if line.strip()]
