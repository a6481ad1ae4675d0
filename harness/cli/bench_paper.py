"""``arena bench paper``: the paper's benchmark for the adaptive agents, our numbers beside the paper's.

Everything the user gives is checked before anything runs. The run directory
(default ``runs/<timestamp>-bench-paper``) receives one JSON line per
(environment, agent) as it finishes, then ``results.json``, ``report.md`` and
the plots; ``--resume DIR`` finishes an interrupted run with the settings
recorded in its manifest. ``--dry-run`` prints the plan and its estimate
(:mod:`harness.bench.paper_estimate`) and writes nothing.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated

import typer
from rich import box
from rich.console import Console
from rich.progress import Progress, TextColumn
from rich.table import Table
from rich.text import Text

from engine import EnvKey
from engine.env_spec import is_paper_env
from harness.bench.paper_estimate import estimate_paper
from harness.bench.paper_gap import GAP_COLUMNS, gap_rows, has_held_out
from harness.bench.paper_plan import DEFAULT_AGENTS, FULL, QUICK, QUICK_ENVS, SCHEMA, PaperPlan, make_paper_plan
from harness.bench.paper_report import (
    BELIEF_COLUMNS,
    COST_COLUMNS,
    belief_rows,
    condition_rows,
    convergence_rows,
    cost_rows,
    describe,
    failures,
    per_env_rows,
    write_outputs,
)
from harness.bench.paper_run import default_run_dir, read_plan, read_results, run_bench_paper
from harness.bench.paper_summary import DEFAULT_PAPER_TABLE2, PaperSummary, check_line, targets_title
from harness.cli.console import DESCRIPTION, print_error, stacked_tables, stderr_console, stderr_progress, stdout_console
from harness.cli.options import PluginOption, UnsandboxedOption, parse_envs, parse_specs, refuse_newer_schema, specs_option, use_plugins
from harness.prompting.waves import wave_label
from harness.records.interrupts import INTERRUPTED_EXIT_CODE, stop_on_interrupt
from harness.tournaments.results import PRIVILEGED_MARK, PRIVILEGED_NOTE
from harness.tournaments.resume import RunInterrupted
from harness.tournaments.tournament import check_run_dir

FAILED_EXIT_CODE = 1  # a pair failed or a target row says FAIL (0: every row PASS or n/a, or a quick run; 2: a user error)
DEFAULT_JOBS = 2


def paper(
    envs: Annotated[
        str | None,
        typer.Option(
            "--envs",
            show_default=False,
            help=f"Environments: a range 0-6, a list 0,3,5, or all (default: all; --quick: {','.join(map(str, QUICK_ENVS))}); "
            "or a suite / environment spec (docs/environments.md).",
        ),
    ] = None,
    suite: Annotated[
        str | None,
        typer.Option(
            "--suite",
            metavar="SUITE",
            show_default=False,
            help="A held-out suite (`arena envs new`; SUITE or SUITE:0-7): its entries are played after --envs and the "
            "report compares each agent's win rate on them with the published ones (the generalisation gap).",
        ),
    ] = None,
    agents: Annotated[
        list[str] | None,
        specs_option("--agents", f"Adaptive agent, one spec per flag; repeat the flag (default: {' '.join(DEFAULT_AGENTS)})."),
    ] = None,
    opponents: Annotated[
        list[str] | None,
        specs_option(
            "--opponents",
            "Evaluation opponents instead of the paper's (Random, PosNet, PPO-2K, MCTS-30/50/100), one spec per flag; "
            "repeat the flag (commas inside a spec never split it). Checkpoints play those labelled Random and MCTS-100.",
        ),
    ] = None,
    budget: Annotated[
        int | None,
        typer.Option(
            "--budget",
            show_default=False,
            help=f"Games each agent may play per environment (default {FULL['budget']}; --quick {QUICK['budget']}).",
        ),
    ] = None,
    games: Annotated[
        int | None,
        typer.Option(
            "--games", show_default=False, help=f"Final evaluation games per opponent (default {FULL['games']}; --quick {QUICK['games']})."
        ),
    ] = None,
    checkpoint_games: Annotated[
        int | None,
        typer.Option(
            "--checkpoint-games",
            show_default=False,
            help=f"Games per opponent at each checkpoint (default {FULL['checkpoint_games']}; --quick {QUICK['checkpoint_games']}).",
        ),
    ] = None,
    jobs: Annotated[int, typer.Option("--jobs", help="Worker processes; 1 runs everything in this process.")] = DEFAULT_JOBS,
    seed: Annotated[
        int | None, typer.Option("--seed", show_default=False, help="Seed all agent and match seeds derive from (default 0).")
    ] = None,
    quick: Annotated[bool, typer.Option("--quick", help="A few small environments and small budgets (for CI).")] = False,
    paper_mcts: Annotated[
        bool | None,
        typer.Option(
            "--paper-mcts/--standard-mcts",
            show_default=False,
            help="MCTS opponents back up values as the paper's code does (default), or the standard two-player way.",
        ),
    ] = None,
    paper_table: Annotated[
        Path,
        typer.Option(
            "--paper-table",
            metavar="FILE",
            show_default=False,
            help="The paper's Table 2 as JSON (default: the copy shipped in harness/bench/data/paper_table2.json).",
        ),
    ] = DEFAULT_PAPER_TABLE2,
    out: Annotated[
        Path | None, typer.Option("--out", metavar="DIR", show_default=False, help="Run directory (default: runs/<timestamp>-bench-paper).")
    ] = None,
    resume: Annotated[
        Path | None,
        typer.Option("--resume", metavar="DIR", show_default=False, help="Finish an interrupted run with the settings it recorded."),
    ] = None,
    plugin: PluginOption = None,
    unsandboxed_agents: UnsandboxedOption = False,
    in_process: Annotated[
        bool,
        typer.Option(
            "--in-process",
            help="Adapt agents in this process instead of through the referee (quick experiments; "
            "UNENFORCED: a cheating agent could read K; the report says so).",
        ),
    ] = False,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Print the plan (pairs, adaptation, checkpoint and evaluation games), an estimated wall time "
            "at --jobs (a few games timed here) and model agents' calls, tokens and cost; "
            "play nothing, write nothing.",
        ),
    ] = False,
) -> None:
    """Adapt each adaptive agent on each environment within its budget, then evaluate it, as in the paper.

    Checkpoints at 5/25/50% of the budget (generations 1, 5, 10 of 100 games)
    play Random and MCTS-100; after adaptation the frozen agent plays Random,
    PosNet, MCTS-30/50/100, colours alternating. Prints the paper's Table 2 and
    Table 1 layouts with the paper's Adaptive Minimax beside ours, and the
    targets as PASS/FAIL lines (exit code 1 on a FAIL); a --quick run judges
    none (they are sized for the full run) and shows its numbers beside the
    paper's. Opponents marked * are privileged.
    """
    if jobs < 1:
        raise typer.BadParameter(f"--jobs must be 1 or more, got {jobs}")
    # with --resume too: the plugins are code, not settings the manifest holds
    plugin_words = use_plugins(plugin, in_process, unsandboxed_agents)
    given = {
        "--envs": envs,
        "--suite": suite,
        "--agents": agents,
        "--opponents": opponents,
        "--budget": budget,
        "--games": games,
        "--checkpoint-games": checkpoint_games,
        "--seed": seed,
        "--out": out,
        "--quick": quick or None,
        "--paper-mcts/--standard-mcts": paper_mcts,
        "--in-process": in_process or None,
    }
    if dry_run and resume is not None:
        raise typer.BadParameter("--dry-run estimates a new run: leave out --resume")
    if resume is not None:
        clashing = [name for name, value in given.items() if value is not None]
        if clashing:
            raise typer.BadParameter(f"--resume takes its settings from {resume / 'manifest.json'}; leave out {', '.join(clashing)}")
        refuse_newer_schema(resume / "manifest.json", SCHEMA)
        plan, run_dir = read_plan(resume), resume
    else:
        plan = _plan(envs, suite, agents, budget, games, checkpoint_games, seed, quick, paper_mcts, dry_run, opponents)
        plan = plan.model_copy(update={"referee": not in_process})
        if dry_run:
            _dry_run(plan, jobs)
            return
        run_dir = out if out is not None else default_run_dir()
        check_run_dir(run_dir)
    command = _command(resume, given, jobs, run_dir, plugin_words)
    finished = sum(r.status == "ok" for r in read_results(run_dir).values()) if resume is not None else 0
    try:
        with _progress() as progress, stop_on_interrupt(unit="pairs") as stop:
            task = progress.add_task("bench paper", total=len(plan.tasks()), completed=min(finished, len(plan.tasks())))
            results = run_bench_paper(
                plan,
                run_dir,
                jobs,
                command=command,
                resume=resume is not None,
                stop=stop,
                on_result=lambda r: progress.update(task, advance=1, description=f"env {r.env_id} {r.agent} {r.status}"),
            )
    except (RunInterrupted, KeyboardInterrupt) as stopped:
        _interrupted(stopped, run_dir, plugin_words)
    summary, plots = write_outputs(plan, results, run_dir, paper_table)
    print_summary(summary, run_dir, plots)
    if failures(summary) or any(check.passed is False for check in summary.checks):
        raise typer.Exit(FAILED_EXIT_CODE)  # a failed pair or a FAIL target row: a CI job can tell


def _dry_run(plan: PaperPlan, jobs: int) -> None:
    """Print the plan and its estimate (nothing played for the record, nothing written)."""
    for line in estimate_paper(plan, jobs).lines():
        stdout_console().print(Text(line), soft_wrap=True)


def _interrupted(stopped: BaseException, run_dir: Path, plugin_words: list[str]) -> None:
    """What a Ctrl-C kept, and on the last line the command that continues the run; exit code 130."""
    kept = f"{stopped.recorded} of {stopped.total} pairs" if isinstance(stopped, RunInterrupted) else "no pairs"
    how = "the pairs in flight were stopped" if getattr(stopped, "forced", True) else "the pairs in flight finished"
    console = stderr_console()
    console.print(
        Text(
            f"interrupted: {kept} (environment x agent) recorded in {run_dir / 'results.jsonl'} ({how}; "
            "a resume plays the rest with the same seeds)"
        ),
        soft_wrap=True,
    )
    console.print(
        Text(f"continue with: {shlex.join(['arena', 'bench', 'paper', '--resume', str(run_dir), *plugin_words])}"), soft_wrap=True
    )
    raise typer.Exit(INTERRUPTED_EXIT_CODE) from None


def _command(resume: Path | None, given: dict[str, object], jobs: int, run_dir: Path, plugin_words: list[str]) -> str:
    """The command line that reproduces this run, as recorded in the manifest."""
    words = ["arena", "bench", "paper", *(["--resume", str(resume)] if resume is not None else [])]
    for name, value in given.items():
        if value is None or name == "--out":
            continue
        if isinstance(value, bool):
            words.append(name.split("/")[0 if value else 1])
        elif isinstance(value, list):
            words += [word for item in value for word in (name, str(item))]
        else:
            words += [name, str(value)]
    return shlex.join([*words, *plugin_words, "--jobs", str(jobs), "--out", str(run_dir)])


def _plan(
    envs: str | None,
    suite: str | None,
    agents: list[str] | None,
    budget: int | None,
    games: int | None,
    checkpoint_games: int | None,
    seed: int | None,
    quick: bool,
    paper_mcts: bool | None,
    dry_run: bool = False,
    opponents: list[str] | None = None,
) -> PaperPlan:
    for name, value in (("--budget", budget), ("--games", games), ("--checkpoint-games", checkpoint_games)):
        if value is not None and value < 1:
            raise typer.BadParameter(f"{name} must be 1 or more, got {value}")
    if seed is not None and seed < 0:
        raise typer.BadParameter(f"--seed must be 0 or more, got {seed}")
    return make_paper_plan(
        parse_envs(envs) if envs is not None else None,
        parse_specs(agents, "--agents") if agents is not None else None,
        budget=budget,
        games=games,
        checkpoint_games=checkpoint_games,
        seed=seed or 0,
        quick=quick,
        paper_mcts=True if paper_mcts is None else paper_mcts,
        held_out=_suite_keys(suite) if suite is not None else (),
        dry_run=dry_run,
        opponents=parse_specs(opponents, "--opponents") if opponents is not None else None,
    )


def _suite_keys(suite: str) -> list[EnvKey]:
    """The entries of ``--suite`` (a suite, or SUITE:RANGE); anything else is named as not a suite."""
    keys = parse_envs(suite, "--suite")
    if any(is_paper_env(key) for key in keys):
        raise typer.BadParameter(
            f"--suite {suite!r}: give a suite directory made by `arena envs new` (the published environments go to --envs)"
        )
    return keys


def _progress() -> Progress:
    return stderr_progress(DESCRIPTION, TextColumn("env x agent"), remaining=True, transient=False)


def print_summary(summary: PaperSummary, run_dir: Path, plots: Sequence[str]) -> None:
    """Per-environment and per-condition tables, convergence, beliefs, costs, the target checks, notes."""
    console = stdout_console()
    for agent in summary.plan.agents:
        columns, rows = per_env_rows(summary, agent)
        _print_table(console, f"Per environment: {wave_label(agent)}, W/D/L %", columns, rows)
        columns, rows = convergence_rows(summary, agent)
        _print_table(console, f"Convergence of {wave_label(agent)}: win % at each checkpoint (@ games played)", columns, rows)
    columns, rows = condition_rows(summary, "win")
    _print_table(console, "Per condition: win rate % (mean ± std over layouts)", columns, rows, labels=3)
    if has_held_out(summary.plan):
        _print_table(
            console,
            "Generalisation: win % on the published 56 vs held-out environments [95% CI] (games)",
            GAP_COLUMNS,
            gap_rows(summary.plan, summary.pairs),
        )
    if beliefs := belief_rows(summary):
        _print_table(console, "Beliefs about K at the end of adaptation", BELIEF_COLUMNS, beliefs, sections=None)
    _print_table(console, "Budget and time (seconds: mean per environment)", COST_COLUMNS, cost_rows(summary), sections=None, labels=1)
    console.print(Text(targets_title(summary.plan), style="bold"))
    for check in summary.checks:
        style = {True: "green", False: "bold red", None: "yellow"}[check.passed]
        verdict = check_line(check, summary.plan).removesuffix(check.text)  # "PASS " / "FAIL " / "n/a  "; none on a quick run
        console.print(Text(f"  {verdict}", style=style).append(Text(check.text, style="default")))
    for line in failures(summary):
        print_error(f"failed: {line}")
    console.print(Text(describe(summary.plan), style="dim"))
    for note in (f"{PRIVILEGED_MARK} {PRIVILEGED_NOTE}", *summary.notes):
        console.print(Text(note, style="dim"))
    console.print(
        Text(f"run recorded in {run_dir} (results.jsonl, results.json, report.md, {len(plots)} plot{'s' if len(plots) != 1 else ''})")
    )


def _first_column(row: Sequence[str]) -> bool:
    return bool(row[0])


def _print_table(
    console: Console,
    title: str,
    columns: Sequence[str],
    rows: Sequence[Sequence[str]],
    sections: Callable[[Sequence[str]], bool] | None = _first_column,
    labels: int = 2,
) -> None:
    """The table, or (too wide for the terminal) its figure columns over stacked tables: no name or figure is cut."""

    def build(figures: Sequence[int]) -> Table:
        return _table(title, columns, rows, sections, labels, figures)

    for table in stacked_tables(build, len(columns) - labels, console):
        console.print(table)


def _table(
    title: str,
    columns: Sequence[str],
    rows: Sequence[Sequence[str]],
    sections: Callable[[Sequence[str]], bool] | None = _first_column,
    labels: int = 2,
    figures: Sequence[int] | None = None,
) -> Table:
    """A table with left-aligned label columns (never cut: agents' names), right-aligned figures, a section line before
    each new condition. ``figures``: which of the figure columns (counted after the labels) to show; all by default."""
    every = range(len(columns) - labels)
    shown = [*range(labels), *(labels + index for index in (every if figures is None else figures))]
    part = "" if len(shown) == len(columns) else f" (columns {', '.join(columns[i] for i in shown[labels:])})"
    table = Table(title=title + part, box=box.SIMPLE_HEAD, title_justify="left")
    for index in shown:
        table.add_column(columns[index], justify="left" if index < labels else "right", no_wrap=True)
    for index, row in enumerate(rows):
        if sections is not None and index and sections(row):
            table.add_section()
        table.add_row(*(row[i] for i in shown))
    return table
