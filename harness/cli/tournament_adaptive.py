"""``arena tournament --adaptive``: run the adaptive schedule and print its decision beside the fixed schedule's."""

from __future__ import annotations

import shlex
from pathlib import Path

import typer
from rich.table import Table
from rich.text import Text

from harness.cli.console import print_error, stderr_console, stdout_console
from harness.cli.options import at_least
from harness.records.interrupts import INTERRUPTED_EXIT_CODE, stop_on_interrupt
from harness.sweep.adaptive_run import ADAPTIVE_FILE, AdaptiveReport, AdaptiveSettings, read_adaptive_manifest, run_adaptive_tournament
from harness.tournaments.plan import GameFailed, TournamentPlan, check_agents
from harness.tournaments.resume import RunInterrupted
from harness.tournaments.tournament import check_run_dir, default_run_dir

GAME_FAILED_EXIT_CODE = 1


def run_adaptive_command(
    plan: TournamentPlan,
    command: list[str],
    out: Path | None,
    *,
    alpha: float,
    max_games: int | None,
    max_cost_usd: float | None,
    jobs: int | None = None,
    batch: int | None = None,
) -> None:
    """Check the options, play, print; a failed game exits 1, Ctrl-C 130 (what was played stays recorded, resumes)."""
    if not 0 < alpha < 1:
        raise typer.BadParameter(f"--alpha must be between 0 and 1, got {alpha}")
    if max_games is not None and max_games < 2:
        raise typer.BadParameter(f"--max-games must be 2 or more (games are played in pairs), got {max_games}")
    if max_cost_usd is not None and not max_cost_usd > 0:
        raise typer.BadParameter(f"--max-cost-usd must be more than 0, got {max_cost_usd}")
    jobs = _jobs(jobs)
    batch = default_batch(jobs) if batch is None else batch
    if batch < 2 or batch % 2:
        raise typer.BadParameter(f"--batch must be an even number of games, 2 or more (two per pick), got {batch}")
    run_dir = out if out is not None else default_run_dir("tournament-adaptive-" + "-".join(plan.agents))
    check_run_dir(run_dir)
    command = [*command, "--batch", str(batch), "--jobs", str(jobs), "--out", str(run_dir)]
    _play(plan, run_dir, AdaptiveSettings(alpha, max_games, max_cost_usd, batch), jobs, False, command)


def resume_adaptive_command(run_dir: Path, jobs: int | None, plugin_words: list[str], given: dict[str, object], out: Path | None) -> None:
    """Continue the adaptive tournament in ``run_dir`` with the plan and settings its manifest recorded.

    Every setting comes from the manifest: a plan or schedule flag in ``given`` (not None) is refused."""
    named = [name for name, value in given.items() if value is not None]
    if out is not None and out.resolve() != run_dir.resolve():
        named.append("--out")
    if named:
        raise typer.BadParameter(
            f"--resume takes its settings from {run_dir / 'manifest.json'} (an adaptive "
            f"tournament): leave out {', '.join(named)} (--jobs and --plugin may be given)"
        )
    _manifest, plan, settings = read_adaptive_manifest(run_dir)
    check_agents(plan.agents, plan.env_ids[0], unprivileged=not plan.referee)
    jobs = _jobs(jobs)
    _play(plan, run_dir, settings, jobs, True, ["arena", "tournament", "--resume", str(run_dir), *plugin_words, "--jobs", str(jobs)])


def default_batch(jobs: int) -> int:
    """Games chosen at a time when --batch is not given: 2 (the most adaptive), or --jobs rounded up to even."""
    return max(2, jobs + jobs % 2)


def _jobs(jobs: int | None) -> int:
    at_least(1, ("--jobs", jobs))
    return 1 if jobs is None else jobs


def _play(plan: TournamentPlan, run_dir: Path, settings: AdaptiveSettings, jobs: int, resume: bool, command: list[str]) -> None:
    played = {"games": 0}

    def advance(line: object) -> None:
        played["games"] += 1
        if played["games"] % 20 == 0:
            stderr_console().print(Text(f"{played['games']} games played"), soft_wrap=True)

    try:
        with stop_on_interrupt() as stop:
            report = run_adaptive_tournament(
                plan, run_dir, settings, jobs=jobs, resume=resume, command=shlex.join(command), on_game=advance, stop=stop
            )
    except GameFailed as error:
        print_error(f"a game failed, the run stopped: {error} (games so far in {run_dir / 'games.jsonl'})")
        raise typer.Exit(GAME_FAILED_EXIT_CODE) from None
    except (RunInterrupted, KeyboardInterrupt):
        console = stderr_console()
        console.print(
            Text(
                f"interrupted: {played['games']} games played and recorded in {run_dir / 'games.jsonl'} "
                "(a resume takes them from there and plays the rest, as an uninterrupted run would)"
            ),
            soft_wrap=True,
        )
        console.print(Text(f"continue with: {shlex.join(['arena', 'tournament', '--resume', str(run_dir)])}"), soft_wrap=True)
        raise typer.Exit(INTERRUPTED_EXIT_CODE) from None
    print_report(report, run_dir)


def print_report(report: AdaptiveReport, run_dir: Path) -> None:
    """The order with ratings, then games- and cost-to-decision beside the fixed round robin's."""
    console = stdout_console()
    outcome = report.outcome
    table = Table(
        title="Adaptive tournament",
        caption=f"ratings: Davidson-Bradley-Terry of the games played, 95% bootstrap intervals; order decided at alpha {report.alpha:g}",
    )
    for header in ("#", "agent", "rating", "95% interval", "games"):
        table.add_column(header, justify="left" if header == "agent" else "right")
    ratings = {r.agent: r for r in report.fit.ratings} if report.fit else {}
    for place, agent in enumerate(outcome.ranking, 1):
        r = ratings.get(agent)
        table.add_row(
            str(place), agent, f"{r.rating:.0f}" if r else "-", f"{r.low:.0f} .. {r.high:.0f}" if r else "-", str(r.games) if r else "0"
        )
    console.print(table)
    verdict = "decided: every neighbour pair separated" if outcome.decided else f"NOT decided (stopped by the {outcome.stopped_by})"
    console.print(
        Text(
            f"{verdict}; games to decision {outcome.games} (fixed round robin: {report.fixed_games}); "
            f"cost ${outcome.cost_usd:.4f} (fixed round robin, projected: ${report.fixed_cost_usd:.4f})"
        ),
        soft_wrap=True,
    )
    console.print(Text(f"run recorded in {run_dir} (decision in {ADAPTIVE_FILE})"))
