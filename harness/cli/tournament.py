"""``arena match`` and ``arena tournament``: agent specs against each other, recorded under ``runs/``.

Everything the user gives (specs, environments, games, jobs, seed, the run
directory) is checked before anything is written; a bad spec is an
``AgentSpecError`` listing the valid agents or parameters.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer
from rich import box
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from harness.cli.console import print_error, stderr_console, stdout_console
from harness.cli.options import (
    PluginOption,
    check_spec,
    parse_env_id,
    parse_env_range,
    parse_specs,
    use_plugins,
)
from harness.tournaments.plan import (
    GameFailed,
    TournamentPlan,
    make_plan,
    round_robin,
    versus,
)
from harness.tournaments.results import (
    CELL_NOTE,
    OVERALL_COLUMNS,
    PER_ENV_COLUMNS,
    SCOPES,
    TournamentResults,
    describe,
    overall_rows,
    per_env_rows,
)
from harness.tournaments.tournament import (
    check_run_dir,
    default_jobs,
    default_run_dir,
    run_tournament,
)

GAME_FAILED_EXIT_CODE = 1

GamesOption = Annotated[int, typer.Option("--games", help="Games per pairing and environment, colours alternating.")]
SeedOption = Annotated[int, typer.Option("--seed", help="Seed every game's seed is derived from (0 or more).")]
JobsOption = Annotated[
    int | None, typer.Option("--jobs", help="Worker processes (default: all cores; 1 plays in this process).",
                             show_default=False)
]
InProcessOption = Annotated[bool, typer.Option(
    "--in-process", help="Build the agents in the process that holds K instead of in player processes (quick "
                         "experiments; UNENFORCED: a cheating agent could read K; the results say so).")]
OutOption = Annotated[
    Path | None, typer.Option("--out", metavar="DIR", help="Run directory (default: runs/<timestamp>-<name>).",
                              show_default=False)
]


def match(
    agent_a: Annotated[str, typer.Argument(metavar="A", help="Agent spec, e.g. minimax:depth=5.")],
    agent_b: Annotated[str, typer.Argument(metavar="B", help="Agent spec of the opponent.")],
    env: Annotated[str | None, typer.Option("--env", metavar="ID", help="Environment id, 0-55.",
                                            show_default=False)] = None,
    games: GamesOption = 20,
    seed: SeedOption = 0,
    jobs: JobsOption = None,
    out: OutOption = None,
    plugin: PluginOption = None,
    in_process: InProcessOption = False,
) -> None:
    """Play A against B on one environment and print A's win/draw/lose rates, overall and by colour.

    A is black in even-numbered games. Every game is recorded in DIR/games.jsonl;
    the summary in DIR/results.json and results.md. Agents marked * are privileged
    (simulator access to the true K). The game loop and K stay with the referee;
    every other agent plays from a player process that gets only the rules, its
    spec and its seed (--in-process: UNENFORCED, both in the process that holds K).
    A model agent is a spec too (llm-policy:model=M, llm-strategist:model=M): it
    plays frozen, and every model call it makes is recorded in DIR/calls.jsonl.
    """
    if env is None:
        raise typer.BadParameter("give the environment: --env ID (0-55; `arena envs` lists them)")
    plugin_words = use_plugins(plugin)
    env_ids = [parse_env_id(env)]
    check_spec(agent_a, "A")
    check_spec(agent_b, "B")
    plan = _plan(versus([agent_a], [agent_b]), env_ids, games, seed, in_process)
    command = ["arena", "match", agent_a, agent_b, "--env", str(env_ids[0]), "--games", str(games),
               "--seed", str(seed), *plugin_words, *(["--in-process"] if in_process else [])]
    _run(plan, command, jobs, out, "match", f"match-{plan.pairings[0].a}-vs-{plan.pairings[0].b}-env{env_ids[0]}")


def tournament(
    agents: Annotated[list[str] | None, typer.Option(
        "--agents", metavar="SPEC", show_default=False,
        help="Agent spec, one per flag; repeat the flag (--agents random --agents mcts:n=50,c=1.0). "
             "A spec's own parameters follow its colon; commas inside a spec never split it.",
    )] = None,
    envs: Annotated[str | None, typer.Option("--envs", help="Environments: a range 0-6, a list 0,3,5, or all.",
                                             show_default=False)] = None,
    vs: Annotated[list[str] | None, typer.Option(
        "--vs", metavar="SPEC", show_default=False,
        help="Play each of --agents against this agent instead of a round robin (repeatable, one spec per flag).",
    )] = None,
    games: GamesOption = 20,
    seed: SeedOption = 0,
    jobs: JobsOption = None,
    out: OutOption = None,
    plugin: PluginOption = None,
    in_process: InProcessOption = False,
) -> None:
    """A round robin of --agents (every pair once, the earlier-listed agent as A), or each against --vs.

    Prints A's win/draw/lose rates with Wilson 95% intervals per environment and
    over all of them, overall and by colour. Every game is recorded in
    DIR/games.jsonl; the summary in DIR/results.json and results.md. Agents
    marked * are privileged (simulator access to the true K). The game loop and
    K stay with the referee; every other agent plays from a player process that
    gets only the rules, its spec and its seed (--in-process: UNENFORCED, all in
    the process that holds K).
    """
    if agents is None:
        raise typer.BadParameter("give the agents: --agents SPEC --agents SPEC ... (`arena agents` lists them)")
    if envs is None:
        raise typer.BadParameter("give the environments: --envs 0-6, 0,3,5 or all")
    plugin_words = use_plugins(plugin)
    specs = parse_specs(agents, "--agents")
    opponents = parse_specs(vs, "--vs") if vs is not None else None
    pairings = round_robin(specs) if opponents is None else versus(specs, opponents)
    plan = _plan(pairings, parse_env_range(envs), games, seed, in_process)
    command = ["arena", "tournament", *spec_words("--agents", specs), "--envs", envs]
    command += spec_words("--vs", opponents) if opponents is not None else []
    command += ["--games", str(games), "--seed", str(seed), *plugin_words, *(["--in-process"] if in_process else [])]
    name = "tournament-" + "-".join(plan.agents)
    _run(plan, command, jobs, out, "tournament", name)


def spec_words(option: str, specs: Sequence[str]) -> list[str]:
    """The option repeated once per spec, as a recorded command line writes it."""
    return [word for spec in specs for word in (option, spec)]


def _plan(pairings: Sequence, env_ids: list[int], games: int, seed: int, in_process: bool) -> TournamentPlan:
    if games < 1:
        raise typer.BadParameter(f"--games must be 1 or more, got {games}")
    if seed < 0:
        raise typer.BadParameter(f"--seed must be 0 or more, got {seed}")
    return make_plan(pairings, env_ids, games, seed, referee=not in_process)


def _run(plan: TournamentPlan, command: list[str], jobs: int | None, out: Path | None, kind: str, name: str) -> None:
    if jobs is not None and jobs < 1:
        raise typer.BadParameter(f"--jobs must be 1 or more, got {jobs}")
    jobs = default_jobs() if jobs is None else jobs
    run_dir = out if out is not None else default_run_dir(name)
    check_run_dir(run_dir)
    command += ["--jobs", str(jobs), "--out", str(run_dir)]
    progress = _progress()
    task = progress.add_task(kind, total=plan.total_games)

    def advance(line: object) -> None:
        if not progress.live.is_started:  # from the first game on: a spec error before it prints no bar
            progress.reset(task)
            progress.start()
        progress.advance(task)

    try:
        results = run_tournament(plan, run_dir, jobs, command=shlex.join(command), kind=kind, on_game=advance)
    except GameFailed as error:
        progress.stop()
        print_error(f"a game failed, the run stopped: {error} (games so far in {run_dir / 'games.jsonl'})")
        raise typer.Exit(GAME_FAILED_EXIT_CODE) from None
    finally:
        progress.stop()
    print_results(results, run_dir)


class RateColumn(ProgressColumn):
    """Games finished per second."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:.2f} games/s" if speed else "- games/s", style="progress.data.speed")


def _progress() -> Progress:
    return Progress(
        TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(), RateColumn(),
        TimeElapsedColumn(), TimeRemainingColumn(), console=stderr_console(),
    )


def print_results(results: TournamentResults, run_dir: Path) -> None:
    """The per-environment table (when there are several), the over-all table, footnotes and the run directory."""
    console = stdout_console()
    if len(results.env_ids) > 1:
        console.print(per_env_table(results))
    console.print(overall_table(results))
    for note in results.notes:
        console.print(Text(note))
    console.print(Text(f"run recorded in {run_dir}"))


def overall_table(results: TournamentResults) -> Table:
    """A's results over all environments: overall, as black, as white, for each pairing."""
    envs = results.over_envs[0].env_name if results.over_envs else ""
    table = _table(f"Over {envs}", OVERALL_COLUMNS, f"{describe(results)}\n{CELL_NOTE}")
    rows = overall_rows(results)
    for start in range(0, len(rows), len(SCOPES)):
        if start:
            table.add_section()
        for offset, row in enumerate(rows[start:start + len(SCOPES)]):
            table.add_row(*(row if offset == 0 else ["", "", *row[2:]]))
    return table


def per_env_table(results: TournamentResults) -> Table:
    """A's results on each environment, with the counts and win rate by colour (env ids as in `arena envs`)."""
    table = _table("Per environment", PER_ENV_COLUMNS, f"{CELL_NOTE}; env ids as in `arena envs`")
    previous = None
    for row in per_env_rows(results):
        if previous is not None and row[0] != previous:
            table.add_section()
        previous = row[0]
        table.add_row(*row)
    return table


def _table(title: str, columns: Sequence[str], caption: str) -> Table:
    table = Table(title=title, caption=caption, box=box.SIMPLE_HEAD)
    for column in columns:
        # Rate cells stay on one line; the agent specs wrap when the terminal is narrow.
        table.add_column(column, justify="left" if column in ("A", "B", "scope") else "right",
                         no_wrap=column not in ("A", "B"))
    return table
