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
from rich.text import Text

from engine import EnvKey
from engine.env_spec import env_slug
from harness.cli.console import print_error, stderr_console
from harness.cli.options import ENV_HELP, ENVS_HELP, at_least, check_spec, parse_env, parse_envs, parse_specs, specs_option, use_plugins
from harness.cli.tournament_adaptive import resume_adaptive_command, run_adaptive_command
from harness.cli.tournament_options import NO_FLAGS, TOURNAMENT_OPTIONS, TournamentFlags
from harness.cli.tournament_output import print_results, progress_bar
from harness.records.interrupts import INTERRUPTED_EXIT_CODE, stop_on_interrupt
from harness.registry.specs import canonical_spec
from harness.tournaments.plan import GameFailed, TournamentPlan, check_agents, make_plan, round_robin, versus
from harness.tournaments.resume import RunInterrupted, plan_of, read_manifest
from harness.tournaments.tournament import check_run_dir, default_jobs, default_run_dir, run_tournament

GAME_FAILED_EXIT_CODE = 1


@TOURNAMENT_OPTIONS.into("flags")
def match(
    agent_a: Annotated[str | None, typer.Argument(metavar="A", help="Agent spec, e.g. minimax:depth=5.", show_default=False)] = None,
    agent_b: Annotated[str | None, typer.Argument(metavar="B", help="Agent spec of the opponent.", show_default=False)] = None,
    env: Annotated[str | None, typer.Option("--env", metavar="ENV", help=ENV_HELP, show_default=False)] = None,
    flags: TournamentFlags = NO_FLAGS,  # --games, --seed, --jobs, --out, --plugin, --in-process, --resume: TOURNAMENT_OPTIONS
) -> None:
    """Play A against B on one environment and print A's win/draw/lose rates, overall and by colour.

    A is black in even-numbered games. Every game is recorded in DIR/games.jsonl;
    the summary in DIR/results.json and results.md. Agents marked * are privileged
    (simulator access to the true K). The game loop and K stay with the referee;
    every other agent plays from a player process that gets only the rules, its
    spec and its seed (--in-process: UNENFORCED, both in the process that holds K).
    A model agent is a spec too (llm-policy:model=M, llm-strategist:model=M): it
    plays frozen, and every model call it makes is recorded in DIR/calls.jsonl.
    Adaptive agents play unadapted here (a warning says so; tables mark them).
    Ctrl-C stops cleanly (a second one at once); --resume DIR finishes the run.
    """
    plugin_words = use_plugins(flags.plugin, flags.in_process, flags.unsandboxed_agents)
    given: dict[str, object] = {
        "A": canonical_spec(check_spec(agent_a, "A")) if agent_a is not None else None,
        "B": canonical_spec(check_spec(agent_b, "B")) if agent_b is not None else None,
        "--env": parse_env(env) if env is not None else None,
        **flags.given(),
    }
    if flags.resume is not None:
        _resume(flags.resume, "match", given, flags.out, flags.jobs, plugin_words)
        return
    if agent_a is None or agent_b is None:
        raise typer.BadParameter("give the two agents: arena match A B --env ID (or --resume DIR)")
    if env is None:
        raise typer.BadParameter("give the environment: --env ID (0-55; `arena envs` lists them) or --env SPEC (docs/environments.md)")
    env_ids = [parse_env(env)]
    plan = _plan(versus([agent_a], [agent_b]), env_ids, *flags.defaults(), flags.in_process)
    command = ["arena", "match", agent_a, agent_b, "--env", str(env_ids[0]), *flags.words(plugin_words)]
    name = f"match-{plan.pairings[0].a}-vs-{plan.pairings[0].b}-env{env_slug(env_ids[0])}"
    _run(plan, command, flags.jobs, flags.out, "match", name, settings=flags.settings(given))


@TOURNAMENT_OPTIONS.into("flags")
def tournament(
    agents: Annotated[
        list[str] | None,
        specs_option(
            "--agents",
            "Agent spec, one per flag; repeat the flag (--agents random --agents mcts:n=50,c=1.0). "
            "A spec's own parameters follow its colon; commas inside a spec never split it.",
        ),
    ] = None,
    envs: Annotated[str | None, typer.Option("--envs", help=ENVS_HELP, show_default=False)] = None,
    vs: Annotated[
        list[str] | None,
        specs_option("--vs", "Play each of --agents against this agent instead of a round robin (repeatable, one spec per flag)."),
    ] = None,
    flags: TournamentFlags = NO_FLAGS,  # --games, --seed, --jobs, --out, --plugin, --in-process, --resume: TOURNAMENT_OPTIONS
    adaptive: Annotated[
        bool,
        typer.Option(
            "--adaptive",
            help="Play the widest undecided neighbour pair next and stop once an anytime-valid test "
            "separates every neighbour in the order (or at --max-games / --max-cost-usd); reports games "
            "and cost to decision beside the fixed round robin's (--games).",
        ),
    ] = False,
    alpha: Annotated[float, typer.Option("--alpha", help="--adaptive: family-wise error of the order.")] = 0.05,
    max_games: Annotated[
        int | None, typer.Option("--max-games", show_default=False, help="--adaptive: game cap (default: the fixed round robin's).")
    ] = None,
    max_cost_usd: Annotated[
        float | None, typer.Option("--max-cost-usd", show_default=False, help="--adaptive: no game starts once model calls cost this.")
    ] = None,
    batch: Annotated[
        int | None,
        typer.Option(
            "--batch",
            show_default=False,
            help="--adaptive: games chosen at a time, each batch from the games before it (even; default 2, or --jobs "
            "rounded up to even). The games played depend on the seed and --batch, never on --jobs "
            "(--jobs 1 is the default with --adaptive).",
        ),
    ] = None,
) -> None:
    """A round robin of --agents (every pair once, the earlier-listed agent as A), or each against --vs.

    Prints A's win/draw/lose rates with Wilson 95% intervals per environment and
    over all of them, overall and by colour. Every game is recorded in
    DIR/games.jsonl; the summary in DIR/results.json and results.md. Agents
    marked * are privileged (simulator access to the true K). The game loop and
    K stay with the referee; every other agent plays from a player process that
    gets only the rules, its spec and its seed (--in-process: UNENFORCED, all in
    the process that holds K). Adaptive agents play unadapted here (a warning
    says so; tables mark them). Ctrl-C stops cleanly (a second one at once);
    --resume DIR finishes the run (an --adaptive one too: its recorded games are
    kept, the rest played as an uninterrupted run would). --adaptive plays
    --batch games at a time over --jobs workers; `arena leaderboard DIR` rates
    the games of any tournament run.
    """
    plugin_words = use_plugins(flags.plugin, flags.in_process, flags.unsandboxed_agents)
    specs = parse_specs(agents, "--agents") if agents is not None else None
    opponents = parse_specs(vs, "--vs") if vs is not None else None
    given: dict[str, object] = {
        "--agents": [canonical_spec(spec) for spec in specs] if specs is not None else None,
        "--vs": [canonical_spec(spec) for spec in opponents] if opponents is not None else None,
        "--envs": list(parse_envs(envs)) if envs is not None else None,
        **flags.given(),
    }
    if flags.resume is not None and (read_manifest(flags.resume, "tournament").get("schedule") == "adaptive" or adaptive):
        resume_adaptive_command(flags.resume, flags.jobs, plugin_words, given | {"--batch": batch}, flags.out)
        return
    if flags.resume is not None:
        _resume(flags.resume, "tournament", given, flags.out, flags.jobs, plugin_words)
        return
    if specs is None:
        raise typer.BadParameter("give the agents: --agents SPEC --agents SPEC ... (`arena agents` lists them)")
    if envs is None:
        raise typer.BadParameter("give the environments: --envs 0-6, 0,3,5 or all")
    games, seed = flags.defaults()
    if adaptive and opponents is not None:
        raise typer.BadParameter("--adaptive orders a round robin of --agents: leave out --vs")
    pairings = round_robin(specs) if opponents is None else versus(specs, opponents)
    plan = _plan(pairings, parse_envs(envs), games, seed, flags.in_process)
    command = ["arena", "tournament", *spec_words("--agents", specs), "--envs", envs]
    if adaptive:
        words = [*command, "--adaptive", "--alpha", str(alpha), "--games", str(games), "--seed", str(seed), *plugin_words]
        words += [
            *(["--max-games", str(max_games)] if max_games is not None else []),
            *(["--max-cost-usd", str(max_cost_usd)] if max_cost_usd is not None else []),
        ]
        run_adaptive_command(
            plan,
            words + (["--in-process"] if flags.in_process else []),
            flags.out,
            alpha=alpha,
            max_games=max_games,
            max_cost_usd=max_cost_usd,
            jobs=flags.jobs,
            batch=batch,
        )
        return
    command += spec_words("--vs", opponents) if opponents is not None else []
    command += flags.words(plugin_words)
    name = "tournament-" + "-".join(plan.agents)
    _run(plan, command, flags.jobs, flags.out, "tournament", name, settings=flags.settings(given))


def spec_words(option: str, specs: Sequence[str]) -> list[str]:
    """The option repeated once per spec, as a recorded command line writes it."""
    return [word for spec in specs for word in (option, spec)]


def _plan(pairings: Sequence, env_ids: list[EnvKey], games: int, seed: int, in_process: bool) -> TournamentPlan:
    at_least(1, ("--games", games))
    at_least(0, ("--seed", seed))
    return make_plan(pairings, env_ids, games, seed, referee=not in_process)


def _resume(run_dir: Path, kind: str, given: dict[str, object], out: Path | None, jobs: int | None, plugin_words: list[str]) -> None:
    """Finish the run in ``run_dir`` with its recorded plan; a given flag that differs from the manifest is refused."""
    manifest = read_manifest(run_dir, kind)
    recorded = manifest.get("settings", {})
    differing = [
        f"{name} ({value} given, {recorded[name] if name in recorded else 'not recorded'} recorded)"
        for name, value in given.items()
        if value is not None and recorded.get(name) != value
    ]
    if out is not None and out.resolve() != run_dir.resolve():
        differing.append(f"--out ({out} given; the run is {run_dir})")
    if differing:
        raise typer.BadParameter(
            f"--resume takes its settings from {run_dir / 'manifest.json'}; these differ from it: {'; '.join(differing)} (leave them out)"
        )
    plan = plan_of(manifest)
    check_agents(plan.agents, plan.env_ids[0], unprivileged=not plan.referee)
    command = ["arena", kind, "--resume", str(run_dir), *plugin_words]
    _run(plan, command, jobs, run_dir, kind, "", resume=True)


def _run(
    plan: TournamentPlan,
    command: list[str],
    jobs: int | None,
    out: Path | None,
    kind: str,
    name: str,
    *,
    settings: dict[str, object] | None = None,
    resume: bool = False,
) -> None:
    at_least(1, ("--jobs", jobs))
    jobs = default_jobs() if jobs is None else jobs
    run_dir = out if out is not None else default_run_dir(name)
    if not resume:
        check_run_dir(run_dir)
    command += ["--jobs", str(jobs), *([] if resume else ["--out", str(run_dir)])]
    if plan.unadapted_agents:
        _warn(
            f"{', '.join(plan.unadapted_agents)} adapt{'s' if len(plan.unadapted_agents) == 1 else ''} "
            f"within a game budget, which arena {kind} does not give: playing unadapted, marked "
            "(unadapted) in the tables (arena run or arena bench paper adapts first)"
        )
    progress = progress_bar()
    task = progress.add_task(kind, total=plan.total_games)

    def advance(line: object) -> None:
        if not progress.live.is_started:  # from the first game on: a spec error before it prints no bar
            progress.reset(task)
            progress.start()
        progress.advance(task)

    again = shlex.join(["arena", kind, "--resume", str(run_dir), *_plugin_words(command)])
    try:
        with stop_on_interrupt() as stop:
            results = run_tournament(
                plan, run_dir, jobs, command=shlex.join(command), kind=kind, on_game=advance, resume=resume, stop=stop, settings=settings
            )
    except GameFailed as error:
        progress.stop()
        print_error(f"a game failed, the run stopped: {error} (games so far in {run_dir / 'games.jsonl'})")
        raise typer.Exit(GAME_FAILED_EXIT_CODE) from None
    except (RunInterrupted, KeyboardInterrupt) as stopped:
        progress.stop()
        kept = f"{stopped.recorded} of {stopped.total} games" if isinstance(stopped, RunInterrupted) else "no games"
        how = "the games in flight were stopped" if getattr(stopped, "forced", True) else "the games in flight finished"
        stderr_console().print(
            Text(
                f"interrupted: {kept} recorded in {run_dir / 'games.jsonl'} ({how}; a resume plays the rest, "
                "game for game as an uninterrupted run would)"
            ),
            soft_wrap=True,
        )
        stderr_console().print(Text(f"continue with: {again}"), soft_wrap=True)
        raise typer.Exit(INTERRUPTED_EXIT_CODE) from None
    finally:
        progress.stop()
    print_results(results, run_dir)


def _warn(message: str) -> None:
    stderr_console().print(Text(f"warning: {message}", style="yellow"), soft_wrap=True)


def _plugin_words(command: list[str]) -> list[str]:
    """The --plugin words of a command line (a resume needs the plugins again: they are code, not settings)."""
    return [word for index, word in enumerate(command) if word == "--plugin" or (index and command[index - 1] == "--plugin")]
