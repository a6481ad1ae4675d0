"""``arena tournament --adaptive``: the adaptive schedule (:mod:`harness.sweep.adaptive`) on real games, into a run directory.

The plan is the round robin the fixed schedule would play (pairings, environments, seed,
referee mode); the adaptive schedule picks which of its games to play. Game ``k`` of a
pairing is played on environment ``env_ids[(k // 2) % E]`` as that environment's game
``2 * (k // (2 E)) + k % 2``: pairs of games with colours swapped, the environments in turn,
and every game's seed the plan's own (:class:`~harness.tournaments.plan.GameTask`), so the
same game of the same pairing is the same game as in the fixed tournament. Games are
played one at a time in this process under the referee (its two player processes); the
run directory holds ``manifest.json``, ``games.jsonl``, ``calls.jsonl`` (model agents) and
``adaptive.json`` with the decision: the order, whether the test decided it, games- and
cost-to-decision, and the fixed schedule's games and (projected) cost beside them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from harness.records.interrupts import StopRequest
from harness.records.lock import writer_lock
from harness.referee.seats import Seats
from harness.sweep.adaptive import ALPHA, Outcome, run_adaptive
from harness.sweep.rating import Fit, Game, fit_ratings
from harness.tournaments.plan import GameLine, GameTask, TournamentPlan, check_agents_on_seat, play_task
from harness.tournaments.resume import RunInterrupted
from harness.tournaments.tournament import CALLS_FILE, CallsLog, check_run_dir, spin_s

ADAPTIVE_FILE = "adaptive.json"


@dataclass(frozen=True)
class AdaptiveReport:
    """What an adaptive tournament found and what it took, beside the fixed schedule."""

    outcome: Outcome
    alpha: float
    fixed_games: int  # the round robin of the plan: pairings x environments x games
    fixed_cost_usd: float  # projected: the adaptive games' mean cost per game x fixed_games
    fit: Fit | None  # the rating fit of the games played (bootstrap intervals)


def run_adaptive_tournament(plan: TournamentPlan, run_dir: Path, *, alpha: float = ALPHA, max_games: int | None = None,
                            max_cost_usd: float | None = None, command: str = "",
                            on_game: Callable[[GameLine], None] | None = None,
                            stop: StopRequest | None = None) -> AdaptiveReport:
    """Play the adaptive schedule over the plan's round robin; ``max_games`` defaults to the fixed schedule's total."""
    check_run_dir(run_dir)
    cap = plan.total_games if max_games is None else max_games
    with Seats(spin_s(1)) as seats:
        if plan.referee and len(plan.privileged_agents) < len(plan.agents):
            seats.start()
            check_agents_on_seat(plan, seats.a)  # before anything is written
        with writer_lock(run_dir):
            return _record(plan, run_dir, seats, alpha, cap, max_cost_usd, command, on_game, stop)


def _record(plan: TournamentPlan, run_dir: Path, seats: Seats, alpha: float, max_games: int,
            max_cost_usd: float | None, command: str, on_game: Callable[[GameLine], None] | None,
            stop: StopRequest | None) -> AdaptiveReport:
    run_dir.mkdir(parents=True, exist_ok=True)
    manifest: dict[str, object] = {
        "kind": "tournament", "schedule": "adaptive", "command": command, "agents": list(plan.agents),
        "pairings": [{"a": p.a, "b": p.b} for p in plan.pairings], "envs": list(plan.env_ids), "seed": plan.seed,
        "alpha": alpha, "max_games": max_games, "max_cost_usd": max_cost_usd,
        "fixed_schedule_games": plan.total_games, "started_at": _now(), "status": "running"}
    _write(run_dir / "manifest.json", manifest)
    index = {(p.a, p.b): i for i, p in enumerate(plan.pairings)}
    lines: list[GameLine] = []
    calls = CallsLog(run_dir / CALLS_FILE)

    def play(a: str, b: str, k: int) -> tuple[float, float]:
        if stop is not None and stop.requested:
            raise RunInterrupted(len(lines), max_games, forced=False)
        envs = len(plan.env_ids)
        task = GameTask(plan.env_ids[(k // 2) % envs], index[(a, b)], plan.pairings[index[(a, b)]],
                        2 * (k // (2 * envs)) + k % 2, plan.seed, plan.referee)
        line = play_task(task, seats)
        calls.write(line)
        games_file.write(line.model_dump_json() + "\n")
        games_file.flush()
        lines.append(line)
        if on_game is not None:
            on_game(line)
        return (line.a_reward + 1) / 2, sum(float(call.get("cost_usd") or 0.0) for call in line.calls)

    try:
        with (run_dir / "games.jsonl").open("a", encoding="utf-8") as games_file:
            outcome = run_adaptive(plan.agents, play, alpha=alpha, max_games=max_games, max_cost_usd=max_cost_usd)
    except BaseException as error:
        manifest |= {"status": "interrupted" if isinstance(error, RunInterrupted | KeyboardInterrupt) else "failed",
                     "games_played": len(lines), "error": f"{type(error).__name__}: {error}", "finished_at": _now()}
        _write(run_dir / "manifest.json", manifest)
        raise
    finally:
        calls.close()
    report = _report(plan, outcome, alpha, lines)
    _write(run_dir / ADAPTIVE_FILE, report_json(report))
    manifest |= {"status": "complete", "games_played": len(lines), "finished_at": _now()}
    _write(run_dir / "manifest.json", manifest)
    return report


def _report(plan: TournamentPlan, outcome: Outcome, alpha: float, lines: list[GameLine]) -> AdaptiveReport:
    per_game = outcome.cost_usd / outcome.games if outcome.games else 0.0
    games = [Game(line.agent_a, line.agent_b, (line.a_reward + 1) / 2) for line in lines]
    played = {g.a for g in games} | {g.b for g in games}
    anchor = "random" if "random" in played else None  # the leaderboard's anchor, as the tournament spells it
    fit = fit_ratings(games, anchor=anchor, bootstrap=200) if len(played) >= 2 else None
    return AdaptiveReport(outcome, alpha, plan.total_games, per_game * plan.total_games, fit)


def report_json(report: AdaptiveReport) -> dict[str, object]:
    """``adaptive.json``: the decision and its cost beside the fixed schedule's."""
    return {"alpha": report.alpha, **asdict(report.outcome),
            "test": "anytime-valid confidence sequence per pair (Robbins' normal mixture, sub-Gaussian scores in "
                    "[0, 1]), Bonferroni over the N(N-1)/2 pairs (harness/sweep/adaptive.py)",
            "fixed_schedule": {"games": report.fixed_games, "cost_usd_projected": report.fixed_cost_usd},
            "ratings": [asdict(rating) for rating in report.fit.ratings] if report.fit else []}


def _write(path: Path, data: object) -> None:
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
