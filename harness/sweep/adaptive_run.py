"""``arena tournament --adaptive``: the adaptive schedule (:mod:`harness.sweep.adaptive`) on real games, into a run directory.

The plan is the round robin the fixed schedule would play (pairings, environments, seed,
referee mode); the adaptive schedule picks which of its games to play. Game ``k`` of a
pairing is played on environment ``env_ids[(k // 2) % E]`` as that environment's game
``2 * (k // (2 E)) + k % 2``: pairs of games with colours swapped, the environments in turn,
and every game's seed the plan's own (:class:`~harness.tournaments.plan.GameTask`), so the
same game of the same pairing is the same game as in the fixed tournament.

Games are chosen ``batch`` at a time from the games before the batch and played by ``jobs``
workers (:mod:`harness.sweep.adaptive_play`); results are taken in the batch's order, so
the games, the decision and the ratings depend on the seed and ``batch`` only, never on
``jobs`` (a larger batch may overshoot the decision by up to ``batch - 2`` games; only the
order in which lines are written to ``games.jsonl`` and their wall times differ).

The run directory holds ``manifest.json`` (the plan and settings: a resume reads them),
``games.jsonl``, ``calls.jsonl`` (model agents) and ``adaptive.json`` with the decision: the
order, whether the test decided it, games- and cost-to-decision, and the fixed schedule's
games and (projected) cost beside them. ``resume``: the schedule is run again from the
start, and each game already on record is taken from ``games.jsonl`` instead of played (a
line torn by a kill is cut and its game played again): no game lost or played twice, and
the same games, decision and ratings as an uninterrupted run.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.records.interrupts import StopRequest, settle
from harness.records.lock import writer_lock
from harness.referee.seats import Seats
from harness.sweep.adaptive import ALPHA, GAMES_PER_PICK, GameOrder, Outcome, run_adaptive
from harness.sweep.adaptive_play import BatchPlayer
from harness.sweep.rating import Fit, Game, fit_ratings
from harness.tournaments.calls_log import CALLS_FILE, CallsLog
from harness.tournaments.plan import MANIFEST_SCHEMA, GameLine, GameTask, TournamentError, TournamentPlan, check_agents_on_seat
from harness.tournaments.resume import GAMES_FILE, RunInterrupted, cut_torn_line, keep_calls_of, plan_of, read_manifest
from harness.tournaments.tournament import IN_PROCESS_MODE, REFEREE_MODE, check_run_dir, spin_s

ADAPTIVE_FILE = "adaptive.json"
Key = tuple[Any, int, int]  # (env id, pairing index, game index)


@dataclass(frozen=True)
class AdaptiveSettings:
    """How the adaptive schedule runs: its level, caps and batch (recorded in the manifest, read back by a resume)."""

    alpha: float = ALPHA
    max_games: int | None = None  # default: the fixed schedule's total
    max_cost_usd: float | None = None
    batch: int = GAMES_PER_PICK


@dataclass(frozen=True)
class AdaptiveReport:
    """What an adaptive tournament found and what it took, beside the fixed schedule."""

    outcome: Outcome
    alpha: float
    fixed_games: int  # the round robin of the plan: pairings x environments x games
    fixed_cost_usd: float  # projected: the adaptive games' mean cost per game x fixed_games
    fit: Fit | None  # the rating fit of the games played (bootstrap intervals)


def run_adaptive_tournament(
    plan: TournamentPlan,
    run_dir: Path,
    settings: AdaptiveSettings | None = None,
    *,
    jobs: int = 1,
    resume: bool = False,
    command: str = "",
    on_game: Callable[[GameLine], None] | None = None,
    stop: StopRequest | None = None,
) -> AdaptiveReport:
    """Play the adaptive schedule over the plan's round robin (``resume``: continue the run in ``run_dir``)."""
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise TournamentError(f"jobs={jobs!r}: give 1 or more worker processes")
    if resume:
        recorded = read_adaptive_manifest(run_dir)[2]
        if settings is not None and settings != recorded:
            raise TournamentError(
                f"cannot resume {str(run_dir)!r} with other settings ({settings}) than its manifest's ({recorded}): leave them out"
            )
        settings = recorded
    else:
        check_run_dir(run_dir)
    settings = settings or AdaptiveSettings()
    with Seats(spin_s(1)) as seats:
        if plan.referee and len(plan.privileged_agents) < len(plan.agents):
            if jobs == 1:
                seats.start()
            check_agents_on_seat(plan, seats)  # before anything is written
            if jobs > 1:
                seats.close()  # the workers have their own
        with writer_lock(run_dir), BatchPlayer(plan, jobs, seats, stop) as player:
            return _record(plan, run_dir, settings, player, resume, command, on_game, stop)


def read_adaptive_manifest(run_dir: Path) -> tuple[dict[str, Any], TournamentPlan, AdaptiveSettings]:
    """An adaptive tournament's manifest, its plan and its settings; a TournamentError names what is wrong."""
    manifest = read_manifest(run_dir, "tournament")
    if manifest.get("schedule") != "adaptive" or "games_per_pairing_and_env" not in manifest:
        raise TournamentError(
            f"cannot resume {str(run_dir)!r} as an adaptive tournament: its manifest is not one (resume a round robin without --adaptive)"
        )
    settings = AdaptiveSettings(
        float(manifest["alpha"]), manifest.get("max_games"), manifest.get("max_cost_usd"), int(manifest.get("batch", GAMES_PER_PICK))
    )
    return manifest, plan_of(manifest), settings


def _record(
    plan: TournamentPlan,
    run_dir: Path,
    settings: AdaptiveSettings,
    player: BatchPlayer,
    resume: bool,
    command: str,
    on_game: Callable[[GameLine], None] | None,
    stop: StopRequest | None,
) -> AdaptiveReport:
    run_dir.mkdir(parents=True, exist_ok=True)
    cap = plan.total_games if settings.max_games is None else settings.max_games
    on_record = _recorded(run_dir, plan) if resume else {}
    costs = _call_costs(run_dir) if resume else {}
    if resume:
        manifest = read_manifest(run_dir, "tournament")
        manifest["resumes"] = [
            *(manifest.get("resumes") or []),
            {"at": _now(), "games_on_record": len(on_record), "command": command, "jobs": player.jobs},
        ]
        manifest["status"] = "running"
    else:
        manifest = _manifest(plan, settings, cap, command, player.jobs)
    _write(run_dir / "manifest.json", manifest)
    index = {(p.a, p.b): i for i, p in enumerate(plan.pairings)}
    schedule: list[GameLine] = []  # the schedule's games, in its order
    calls = CallsLog(run_dir / CALLS_FILE, keep_calls_of(run_dir, list(on_record.values()), CALLS_FILE) if resume else None)

    def task(order: GameOrder) -> GameTask:
        a, b, k = order
        envs = len(plan.env_ids)
        return GameTask(
            plan.env_ids[(k // 2) % envs],
            index[(a, b)],
            plan.pairings[index[(a, b)]],
            2 * (k // (2 * envs)) + k % 2,
            plan.seed,
            plan.referee,
        )

    def play_batch(orders: list[GameOrder]) -> list[tuple[float, float]]:
        tasks = [task(order) for order in orders]
        todo = [t for t in tasks if _key(t) not in on_record]
        if todo and stop is not None and stop.requested:
            raise RunInterrupted(len(on_record), cap, forced=False)
        for line in player.play(todo):
            calls.write(line)  # a game's model calls before the game
            games_file.write(line.model_dump_json() + "\n")
            games_file.flush()
            on_record[(line.env_id, line.pairing, line.game)] = line
            costs[(line.env_id, line.pairing, line.game)] = sum(float(c.get("cost_usd") or 0.0) for c in line.calls)
            if on_game is not None:
                on_game(line)
        if any(_key(t) not in on_record for t in tasks):  # stopped mid-batch: what finished is recorded
            raise RunInterrupted(len(on_record), cap, forced=False)
        schedule.extend(on_record[_key(t)] for t in tasks)
        return [((on_record[_key(t)].a_reward + 1) / 2, costs.get(_key(t), 0.0)) for t in tasks]

    try:
        with (run_dir / GAMES_FILE).open("a", encoding="utf-8") as games_file:
            outcome = run_adaptive(
                plan.agents,
                alpha=settings.alpha,
                max_games=cap,
                max_cost_usd=settings.max_cost_usd,
                batch=settings.batch,
                play_batch=play_batch,
            )
        settle(stop)
    except BaseException as error:
        settle(stop)
        manifest |= {
            "status": "interrupted" if isinstance(error, RunInterrupted | KeyboardInterrupt) else "failed",
            "games_played": len(on_record),
            "error": f"{type(error).__name__}: {error}",
            "finished_at": _now(),
        }
        _write(run_dir / "manifest.json", manifest)
        if isinstance(error, KeyboardInterrupt):
            raise RunInterrupted(len(on_record), cap, forced=True) from None
        raise
    finally:
        calls.close()
    report = _report(plan, outcome, settings.alpha, schedule)
    _write(run_dir / ADAPTIVE_FILE, report_json(report))
    manifest.pop("error", None)
    manifest |= {"status": "complete", "games_played": len(schedule), "finished_at": _now()}
    _write(run_dir / "manifest.json", manifest)
    return report


def _manifest(plan: TournamentPlan, settings: AdaptiveSettings, cap: int, command: str, jobs: int) -> dict[str, Any]:
    return {
        "schema_version": MANIFEST_SCHEMA,
        "kind": "tournament",
        "schedule": "adaptive",
        "command": command,
        "agents": list(plan.agents),
        "pairings": [{"a": p.a, "b": p.b} for p in plan.pairings],
        "envs": list(plan.env_ids),
        "games_per_pairing_and_env": plan.games,
        "seed": plan.seed,
        "referee": REFEREE_MODE if plan.referee else IN_PROCESS_MODE,
        "alpha": settings.alpha,
        "max_games": cap,
        "max_cost_usd": settings.max_cost_usd,
        "batch": settings.batch,
        "jobs": jobs,
        "games": "chosen a batch at a time from the games before it; the same for any jobs given the same batch",
        "fixed_schedule_games": plan.total_games,
        "started_at": _now(),
        "status": "running",
    }


def _key(task: GameTask) -> Key:
    return task.env_id, task.pairing_index, task.game_index


def _recorded(run_dir: Path, plan: TournamentPlan) -> dict[Key, GameLine]:
    """The games on record, each once, checked against the plan's seeds (a torn last line is cut first)."""
    path = run_dir / GAMES_FILE
    if not path.exists():
        return {}
    cut_torn_line(path)
    games: dict[Key, GameLine] = {}
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not text.strip():
            continue
        line = GameLine.model_validate_json(text)
        if (
            not 0 <= line.pairing < len(plan.pairings)
            or line.env_id not in plan.env_ids
            or GameTask(line.env_id, line.pairing, plan.pairings[line.pairing], line.game, plan.seed).game_seed != line.game_seed
        ):
            raise TournamentError(
                f"cannot resume: {path} line {number} (env {line.env_id}, pairing {line.pairing}, "
                f"game {line.game}) is not a game of the plan in manifest.json"
            )
        games.setdefault((line.env_id, line.pairing, line.game), line)
    return games


def _call_costs(run_dir: Path) -> dict[Key, float]:
    """Each recorded game's model-call dollars, from ``calls.jsonl`` (a game line does not carry its calls)."""
    path = run_dir / CALLS_FILE
    costs: dict[Key, float] = {}
    if not path.is_file():
        return costs
    cut_torn_line(path)
    for text in path.read_text(encoding="utf-8").splitlines():
        if text.strip():
            call = json.loads(text)
            key = (call.get("env_id"), int(call.get("pairing", -1)), int(call.get("game", -1)))
            costs[key] = costs.get(key, 0.0) + float(call.get("cost_usd") or 0.0)
    return costs


def _report(plan: TournamentPlan, outcome: Outcome, alpha: float, lines: list[GameLine]) -> AdaptiveReport:
    per_game = outcome.cost_usd / outcome.games if outcome.games else 0.0
    games = [Game(line.agent_a, line.agent_b, (line.a_reward + 1) / 2) for line in lines]
    played = {g.a for g in games} | {g.b for g in games}
    anchor = "random" if "random" in played else None  # the leaderboard's anchor, as the tournament spells it
    fit = fit_ratings(games, anchor=anchor, bootstrap=200) if len(played) >= 2 else None
    return AdaptiveReport(outcome, alpha, plan.total_games, per_game * plan.total_games, fit)


def report_json(report: AdaptiveReport) -> dict[str, object]:
    """``adaptive.json``: the decision and its cost beside the fixed schedule's."""
    return {
        "alpha": report.alpha,
        **asdict(report.outcome),
        "test": "anytime-valid confidence sequence per pair (Robbins' normal mixture, sub-Gaussian scores in "
        "[0, 1]), Bonferroni over the N(N-1)/2 pairs (harness/sweep/adaptive.py)",
        "fixed_schedule": {"games": report.fixed_games, "cost_usd_projected": report.fixed_cost_usd},
        "ratings": [asdict(rating) for rating in report.fit.ratings] if report.fit else [],
    }


def _write(path: Path, data: object) -> None:
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
