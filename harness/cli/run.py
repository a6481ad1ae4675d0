"""``arena run``: a model agent adapts within the budget, then plays frozen evaluation games.

Model options (``--api-base``, ``--temperature``, ..., ``--model-config FILE``) are read by
:mod:`harness.cli.model_options` and recorded in the run; ``--resume`` uses the recorded ones.
An endpoint that cannot answer stops the run: one ``error:`` line naming the endpoint, the
cause and the command that resumes it, and exit code 3 (:data:`ENDPOINT_DOWN_EXIT_CODE`).
A cost or token cap stops it with exit code 4 (:data:`CAP_EXIT_CODE`), the last line naming the
command that continues it with a higher cap; Ctrl-C (or SIGTERM) stops it cleanly with exit code
130 (:data:`~harness.records.interrupts.INTERRUPTED_EXIT_CODE`; what was kept, then the command that continues it). ``--resume``
takes new caps (``--max-tokens``, ``--max-cost-usd``) and refuses any other flag whose value
differs from the run's manifest, naming it (:func:`resume_caps`).
"""

from __future__ import annotations

import errno
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError

from harness.cli import model_options as mo
from harness.cli.console import print_error, stderr_console, stderr_progress, stdout_console
from harness.cli.options import ENV_HELP, PluginOption, UnsandboxedOption, parse_env, parse_specs, specs_option, use_plugins
from harness.models.errors import EndpointDown
from harness.records.interrupts import INTERRUPTED_EXIT_CODE
from harness.records.transcript import TranscriptReader
from harness.runs.estimate import RunEstimate, estimate_run
from harness.runs.llm_run import AgentFailed, CapReached, LlmRunConfig, RunInterruptedError, run_llm
from harness.runs.run_stop import DiskFull

ENDPOINT_DOWN_EXIT_CODE = 3  # the run stopped on its endpoint and can be resumed
CAP_EXIT_CODE = 4  # a cost or token cap stopped the run; --resume with a higher cap continues it
CAP_FLAGS = {"max_tokens": "--max-tokens", "max_cost_usd": "--max-cost-usd"}  # what --resume may change
RESUME_FREE = {"resume", "plugin", "latency_s", "dry_run", *CAP_FLAGS}  # flags --resume takes without a comparison


@mo.MODEL_OPTIONS.into("model_flags")
def run(
    ctx: typer.Context,
    agent: str = typer.Option(
        "llm-policy", "--agent", help="Model agent: llm-policy, llm-strategist or cwm (a code world model: docs/cwm.md)."
    ),
    model: str = typer.Option(None, "--model", help="litellm model string (provider/model, e.g. openai/gpt-4o-mini), or mock/<name>."),
    env: str = typer.Option(None, "--env", help=ENV_HELP),
    budget: int = typer.Option(2000, "--budget", help="Adaptation games."),
    eval_games: int = typer.Option(20, "--eval-games", help="Evaluation games per opponent."),
    opponents: Annotated[
        list[str] | None,
        specs_option(
            "--opponents",
            "Evaluation opponent, one agent spec per flag; repeat the flag (--opponents random --opponents mcts:n=30,c=1.0). "
            "Default: random.",
        ),
    ] = None,
    seed: int = typer.Option(0, "--seed", help="Seed of the run (the agent's generators, the opponents')."),
    out: Path = typer.Option(Path("runs"), "--out", help="Parent directory of the run directory."),
    max_retries: int = typer.Option(
        2,
        "--max-retries",
        help="Re-asks after an unusable reply (a failed call is retried by the model client itself, with backoff), then --on-failure.",
    ),
    on_failure: str = typer.Option("forfeit", "--on-failure", help="forfeit or random."),
    hint: str = typer.Option("ratio", "--hint", help="none, ratio or family."),
    legal_moves: str = typer.Option(
        "shown",
        "--legal-moves",
        help="llm-policy: shown (each move prompt lists the legal moves) or hidden (a harder track; compare never pools the two).",
    ),
    move_format: str = typer.Option(
        "text",
        "--move-format",
        help="llm-policy: text (a final MOVE: line), tool (a required play_move function call) or json (an object by "
        "JSON Schema, structured output); compare never pools formats.",
    ),
    max_cost_usd: float = typer.Option(None, "--max-cost-usd", help="Stop cleanly (resumable) once the model calls cost this much."),
    max_tokens: int = typer.Option(
        None, "--max-tokens", help="Stop cleanly once this many tokens in all were used (a reply's length: --max-reply-tokens)."
    ),
    resume: Path = typer.Option(None, "--resume", help="Continue this run directory, with the config and model options it recorded."),
    batch: int = typer.Option(50, "--batch", help="llm-strategist: games per strategy (one model call each)."),
    wave: int = typer.Option(
        1,
        "--wave",
        help="llm-policy: adaptation games played at once, their prompts carrying the "
        "memory of the games before the wave (1: one game after another; "
        "llm-strategist's waves are its --batch).",
    ),
    search_depth: int = typer.Option(3, "--search-depth", help="llm-strategist: Minimax depth in plies."),
    endgame: int = typer.Option(10, "--endgame", help="llm-strategist: solve exactly at this many empty cells or fewer."),
    jobs: int = typer.Option(
        1,
        "--jobs",
        min=1,
        help="llm-strategist: worker processes that search a batch's games (the same games at any --jobs; --resume may give another).",
    ),
    concurrency: int = typer.Option(
        32,
        "--concurrency",
        help="The ceiling of model calls in flight at once (lowered on 429s and "
        "timeouts, grown again on success; evaluation games and a "
        "--wave's games run concurrently).",
    ),
    checkpoints: str = typer.Option(
        None,
        "--checkpoints",
        metavar="N,N,...",
        help="Games after which the agent states its belief (default 10,50,200,2000 within the budget).",
    ),
    model_flags: mo.ModelFlags = mo.NO_FLAGS,  # --model-config, --api-base, ...: mo.MODEL_OPTIONS
    plugin: PluginOption = None,
    unsandboxed_agents: UnsandboxedOption = False,
    in_process: bool = typer.Option(
        False,
        "--in-process",
        help="Play the agent in this process, which holds K (UNENFORCED: "
        "for quick experiments; the run and its report say so). Default: a process of its own, "
        "every game scored by the referee.",
    ),
    cwm_mode: str = typer.Option("tree", "--cwm-mode", help="cwm: refine programs by REx tree search (tree) or by conversation."),
    cwm_explore: int = typer.Option(20, "--cwm-explore", help="cwm: exploration games (at most) before the first program."),
    cwm_random: int = typer.Option(
        8,
        "--cwm-random",
        help="cwm: of which uniformly random; the rest are steered towards final shares that split the K values the outcomes still allow.",
    ),
    cwm_calls: int = typer.Option(12, "--cwm-calls", help="cwm: model calls over the whole adaptation."),
    cwm_simulations: int = typer.Option(1000, "--cwm-simulations", help="cwm: MCTS simulations per move in its evaluation games."),
    cwm_adapt_simulations: int = typer.Option(
        50, "--cwm-adapt-simulations", help="cwm: MCTS simulations per move in its self-play games after exploration."
    ),
    cwm_planner: str = typer.Option(
        "mcts", "--cwm-planner", help="cwm: search on the program: mcts or minimax (iterative-deepening alpha-beta)."
    ),
    cwm_depth: int = typer.Option(4, "--cwm-depth", help="cwm: minimax's deepest iteration (plies)."),
    cwm_reject: int = typer.Option(
        3,
        "--cwm-reject",
        help="cwm: the best distinct programs of a refinement episode that play each other, clear losers discarded (0: no rejection).",
    ),
    cwm_heldout: int = typer.Option(10_000, "--cwm-heldout", help="cwm: random-play transitions of the true engine in the held-out tests."),
    cwm_transitions: str = typer.Option(
        "engine",
        "--cwm-transitions",
        help="cwm: engine (plan with the project's kernels on the public rules, scoring finished games with the program's "
        "returns, once the program passes every transition test) or program (plan on the program in the sandbox).",
    ),
    cwm_spot_check: float = typer.Option(
        0.1, "--cwm-spot-check", help="cwm, engine path: the share of moves whose transition is checked against the program."
    ),
    unsandboxed: bool = typer.Option(
        False,
        "--unsandboxed",
        help="cwm: run generated code without bubblewrap (rlimits "
        "only; the report says UNSANDBOXED). Without bubblewrap, cwm refuses to run otherwise.",
    ),
    dry_run: bool = typer.Option(
        False,
        "--dry-run",
        help="Print the estimate (games, model calls, tokens, dollars from "
        "litellm's local price table, wall time) and exit: no network, no key, nothing written.",
    ),
    latency_s: float = typer.Option(1.0, "--latency-s", help="The estimate's assumed seconds per model call."),
) -> None:
    """Adapt a model agent on one environment, evaluate it, and write runs/<id>/.

    An endpoint that cannot answer (connection refused, DNS, HTTP 401/403/404, unknown
    provider, or --max-consecutive-failures calls in a row failing) stops the run at once
    with exit code 3; the game in progress is not counted, and --resume continues it.
    """
    # before the opponents' specs are read (with --resume too: plugins are code, not settings)
    use_plugins(plugin, unsandboxed=unsandboxed_agents)
    config = None
    given = [*model_flags.given(), *(["--in-process"] if in_process else [])]
    if resume is not None and given:
        raise typer.BadParameter(
            f"--resume continues {resume} with the model options (and referee mode) recorded in its "
            f"manifest; leave out {', '.join(given)} (or start a new run to change them)"
        )
    if resume is None:
        model, options = mo.resolve(model_flags)
        if model is None or env is None:
            raise typer.BadParameter("give --model and --env (or --resume RUN)")
        try:
            config = LlmRunConfig(
                agent=agent,
                model=model,
                env=parse_env(env),
                budget=budget,
                eval_games=eval_games,
                opponents=tuple(parse_specs(opponents or ["random"], "--opponents")),
                seed=seed,
                max_retries=max_retries,
                on_failure=on_failure,
                hint=hint,
                legal_moves=legal_moves,
                move_format=move_format,
                max_cost_usd=max_cost_usd,
                max_tokens=max_tokens,
                batch=batch,
                wave=wave,
                search_depth=search_depth,
                endgame=endgame,
                jobs=jobs,
                checkpoints=_checkpoints(checkpoints),
                concurrency=concurrency,
                model_options=options,
                referee=not in_process,
                cwm_mode=cwm_mode,
                cwm_explore=cwm_explore,
                cwm_calls=cwm_calls,
                cwm_simulations=cwm_simulations,
                cwm_adapt_simulations=cwm_adapt_simulations,
                cwm_random=cwm_random,
                cwm_heldout=cwm_heldout,
                cwm_planner=cwm_planner,
                cwm_depth=cwm_depth,
                cwm_reject=cwm_reject,
                cwm_transitions=cwm_transitions,
                cwm_spot_check=cwm_spot_check,
                unsandboxed=unsandboxed,
            )
        except ValidationError as error:
            raise typer.BadParameter(config_error_message(error)) from None
    elif dry_run:
        raise typer.BadParameter("--dry-run estimates a new run: leave out --resume")
    caps = resume_caps(ctx, resume) if resume is not None else None
    if config is not None and _estimate_or_exit(config, latency_s, dry_run):
        return
    run_dir = run_with_progress(config, out=out, resume=resume, caps=caps)
    console = stdout_console()
    console.print((run_dir / "report.md").read_text(encoding="utf-8"), markup=False)
    console.print(f"run directory: {run_dir}", markup=False)


def _estimate_or_exit(config: LlmRunConfig, latency_s: float, dry_run: bool) -> bool:
    """Print the run's estimate (``--dry-run``: the table, then True: done); refuse a run estimated over ``--max-cost-usd``."""
    try:
        estimate: RunEstimate = estimate_run(config, latency_s=latency_s)
    except (KeyError, ValueError) as error:
        raise typer.BadParameter(str(error)) from None
    if dry_run:
        stdout_console().print(estimate.table(), markup=False, highlight=False, soft_wrap=True)
        return True
    stderr_console().print(estimate.line(), markup=False, highlight=False, soft_wrap=True)
    if config.max_cost_usd is not None and estimate.cost_usd is not None and estimate.cost_usd > config.max_cost_usd:
        print_error(
            f"the run is estimated to cost {estimate.cost_text()}, over --max-cost-usd {config.max_cost_usd:g}: "
            f"not started (raise --max-cost-usd, or lower --budget/--eval-games; --dry-run shows the estimate)"
        )
        raise typer.Exit(2)
    return False


def resume_caps(ctx: typer.Context, resume: Path) -> dict[str, float | int]:
    """The caps given with ``--resume``; any other flag given must match the manifest's config (else one line naming it)."""
    recorded = LlmRunConfig.model_validate(TranscriptReader(resume).manifest().config)
    caps: dict[str, float | int] = {}
    for name, value in ctx.params.items():
        source = ctx.get_parameter_source(name)
        if source is None or source.name not in ("COMMANDLINE", "ENVIRONMENT"):  # a default: nothing was asked
            continue
        if name in CAP_FLAGS or name == "jobs":  # --jobs changes how fast, not what, is played
            caps[name] = value
            continue
        if name in RESUME_FREE or name in mo.FILE_KEYS or name == "model_config" or name == "in_process":
            continue  # the model flags and --in-process are refused above, naming them
        flag = "--" + name.replace("_", "-")
        if name == "out":
            raise typer.BadParameter(f"--out {value}: a resumed run stays in its directory {resume}; leave out --out")
        wanted = _as_recorded(name, value)
        have = getattr(recorded, "referee" if name == "in_process" else name, None)
        if wanted != have:
            raise typer.BadParameter(
                f"{flag} {value!r} differs from the run's {have!r} (recorded in {resume}/manifest.json): --resume continues "
                f"the run as it was configured; only {', '.join(CAP_FLAGS.values())} and --jobs may change (start a new run to "
                f"change {flag})"
            )
    return caps


def _as_recorded(name: str, value: object) -> object:
    """A flag's value as the run's config holds it."""
    if name == "opponents":
        return tuple(parse_specs(list(value) if isinstance(value, (list, tuple)) else [str(value)], "--opponents"))
    if name == "checkpoints":
        return _checkpoints(str(value))
    return value


def _checkpoints(text: str | None) -> tuple[int, ...] | None:
    """``--checkpoints 10,50,200`` as numbers (checked against the budget by the run config)."""
    if text is None:
        return None
    try:
        return tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise typer.BadParameter(f"--checkpoints {text!r}: give game counts separated by commas, e.g. 10,50,200") from None


def config_error_message(error: ValidationError) -> str:
    """A run config's validation errors as ``--option value: what is wrong`` lines joined by '; '."""
    parts = []
    for item in error.errors():
        option = "--" + "-".join(str(part) for part in item["loc"][:1]).replace("_", "-")
        parts.append(f"{option} {item.get('input')!r}: {item['msg'].lower()}")
    return "; ".join(parts)


def run_with_progress(
    config: LlmRunConfig | None, *, out: Path, resume: Path | None = None, caps: dict[str, float | int] | None = None
) -> Path:
    """:func:`run_llm` with a progress bar per phase (adaptation, evaluation) on stderr; the run directory.

    A dead endpoint (:class:`EndpointDown`) is one ``error:`` line and exit code 3; a cap, the report,
    then the line that raises it on resume, and exit code 4; an interrupt, what was kept, then the
    command that continues it, and exit code 130.
    """
    before = _children(out)
    try:
        return _run_with_progress(config, out=out, resume=resume, caps=caps)
    except OSError as error:
        if error.errno != errno.ENOSPC:
            raise
        raise typer.BadParameter(disk_full_message(error, resume or _new_run_dir(out, before))) from error
    except DiskFull as full:  # stopped at its first failed write, every paid call on record (exit 2, as any full disk)
        print_error(
            f"{full}; the run stopped before its next model call, every call it paid for is on record; "
            f"free some space, then continue with: arena run --resume {full.run_dir}"
        )
        raise typer.Exit(2) from None
    except EndpointDown as down:
        print_error(str(down))
        raise typer.Exit(ENDPOINT_DOWN_EXIT_CODE) from None
    except AgentFailed as failed:
        print_error(str(failed))
        raise typer.Exit(1) from None
    except CapReached as capped:
        stdout_console().print((capped.run_dir / "report.md").read_text(encoding="utf-8"), markup=False)
        print_error(str(capped))
        raise typer.Exit(CAP_EXIT_CODE) from None
    except RunInterruptedError as interrupted:
        console = stderr_console()
        console.print(f"{interrupted}; every record is written.", markup=False, highlight=False, soft_wrap=True)
        console.print(f"continue with: arena run --resume {interrupted.run_dir}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(INTERRUPTED_EXIT_CODE) from None


def disk_full_message(error: OSError, run_dir: Path | None) -> str:
    """What a full disk (ENOSPC while writing a record) stopped, what was kept, and the command that continues."""
    where = f" in {run_dir}" if run_dir is not None else ""
    again = f"arena run --resume {run_dir}" if run_dir is not None else "arena run --resume DIR"
    return (
        f"the disk is full ({error.strerror or error}): the run stopped; every game and call recorded before it "
        f"is kept{where}; free some space, then continue with: {again}"
    )


def _children(folder: Path) -> set[Path]:
    return set(folder.iterdir()) if folder.is_dir() else set()


def _new_run_dir(out: Path, before: set[Path]) -> Path | None:
    """The run directory this command created under ``out`` (None when it cannot tell)."""
    created = [path for path in _children(out) - before if path.is_dir()]
    return created[0] if len(created) == 1 else None


def _run_with_progress(config: LlmRunConfig | None, *, out: Path, resume: Path | None, caps: dict[str, float | int] | None) -> Path:
    with stderr_progress("{task.description}") as bar:
        tasks: dict[str, int] = {}

        def progress(phase: str, done: int, total: int) -> None:
            if phase not in tasks:
                tasks[phase] = bar.add_task(phase, total=total)
            bar.update(tasks[phase], completed=done)

        return run_llm(config, out=out, resume=resume, progress=progress, caps=caps)
