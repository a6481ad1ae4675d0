"""The ``arena`` command line: one module per subcommand, registered here.

User errors (an unknown env id, a bad layout file, a bad depth or env range, an
invalid K, an unknown agent, agent parameter or value, ...) are caught in one
place, :func:`reporting_user_errors`, which every command is wrapped in: they
print one red ``error: ...`` line on stderr and exit with code 2, never a
traceback. So do the errors of the file system (a missing or unwritable path, a full
disk: :func:`os_error_message`) and records of a newer schema version. The global
``arena --debug COMMAND ...`` shows the traceback instead.
"""

from __future__ import annotations

import errno
import functools
import inspect
from collections.abc import Callable
from typing import Any

import typer
from typer.core import TyperGroup

from agents.spec import AgentSpecError
from engine import ConditionError, EnvSpecError, IllegalMoveError, LayoutError, NotationError, UnknownEnvironmentError
from engine.suite import SuiteError
from harness.cli import (
    agents,
    bench,
    bench_adaptive,
    bench_az,
    bench_cwm,
    bench_env,
    bench_league,
    bench_paper,
    bench_replot,
    bench_sandbox,
    demo,
    envs,
    perft,
    run,
    show,
    tournament,
    train,
)
from harness.cli import audit as audit_cli
from harness.cli import leaderboard as leaderboard_cli
from harness.cli import replay as replay_cli
from harness.cli import stub_server as stub_server_cli
from harness.cli import sweep as sweep_cli
from harness.cli import train_az as train_az_cli
from harness.cli import view as view_cli
from harness.cli.console import print_error
from harness.installation.data import DISTRIBUTION, version
from harness.models.errors import ModelConfigError
from harness.records.lock import RunLocked
from harness.records.transcript import TranscriptError
from harness.runs.llm_run import RunConfigError
from harness.tournaments.plan import TournamentError

USER_ERROR_EXIT_CODE = 2
USER_ERRORS = (
    LayoutError,
    UnknownEnvironmentError,
    ConditionError,
    NotationError,
    IllegalMoveError,
    typer.BadParameter,
    AgentSpecError,
    TournamentError,
    RunConfigError,
    ModelConfigError,
    TranscriptError,
    RunLocked,
    EnvSpecError,
    SuiteError,
)


_debug = {"on": False}  # set by the app's --debug flag for the command it runs


def reporting_user_errors(command: Callable[..., Any]) -> Callable[..., Any]:
    """``command`` with user errors (and OSErrors) turned into ``error: <message>`` and exit code 2.

    With ``arena --debug`` the error propagates, traceback and all.
    """

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except (*USER_ERRORS, OSError) as error:
            if _debug["on"]:
                raise
            print_error(_message(error))
            raise typer.Exit(USER_ERROR_EXIT_CODE) from None

    return wrapper


def _message(error: Exception) -> str:
    if isinstance(error, typer.BadParameter):
        return error.message
    if isinstance(error, OSError):
        return os_error_message(error)
    return str(error) or type(error).__name__


def os_error_message(error: OSError) -> str:
    """One line for a file-system error: the path and the reason; a full disk says what was kept and how to go on."""
    reason = error.strerror or str(error) or type(error).__name__
    where = " -> ".join(str(name) for name in (error.filename, error.filename2) if name is not None)
    if error.errno == errno.ENOSPC:
        return (
            f"the disk is full ({reason}{' writing ' + where if where else ''}): stopped; every record written "
            "before it is kept; free some space, then continue it (--resume DIR, where the command takes it)"
        )
    return f"{where}: {reason}" if where else reason


# What a user came to do, the main job first: the panels of `arena --help`, and each command's place in them.
PANELS: dict[str, tuple[str, ...]] = {
    "Evaluate a model": ("run", "demo", "sweep", "stub-server", "calls-to-script"),
    "Play and compare baselines": ("agents", "match", "tournament", "leaderboard"),
    "Look at and check runs": ("view", "replay", "compare", "rerun", "audit"),
    "Benchmarks": ("bench",),
    "Environments and training": ("envs", "show", "perft", "train"),
}
COMMAND_ORDER = [name for names in PANELS.values() for name in names]


def panel_of(name: str) -> str | None:
    """The help panel of top-level command ``name``."""
    return next((panel for panel, names in PANELS.items() if name in names), None)


class _PanelOrder(TyperGroup):
    """Lists the commands in :data:`PANELS`' order (typer lists them as registered, sub-command groups last)."""

    def list_commands(self, ctx: Any) -> list[str]:
        listed = super().list_commands(ctx)
        return sorted(listed, key=lambda name: COMMAND_ORDER.index(name) if name in COMMAND_ORDER else len(COMMAND_ORDER))


app = typer.Typer(
    name="arena",
    cls=_PanelOrder,
    help="Expanded Othello Arena: Othello on arbitrary layouts with a hidden winning threshold K.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)
bench_app = typer.Typer(
    help=(
        "Run the paper's benchmark ('bench paper') and measure the engine, the agents, the harness and more "
        "('arena bench --help' lists them)."
    ),
    no_args_is_help=True,
)


def version_line() -> str:
    """The distribution's version and the harness version every run manifest records (templates and reply parser)."""
    from harness.records.provenance import harness_version

    return f"{DISTRIBUTION} {version()} (harness {harness_version()}: the prompt templates and the reply parser)"


def _print_version(show: bool) -> None:
    if show:
        print(version_line())
        raise typer.Exit()


@app.callback()
def _options(
    debug: bool = typer.Option(False, "--debug", help="Show the traceback of an error instead of its one-line message."),
    show_version: bool = typer.Option(
        False, "--version", callback=_print_version, is_eager=True, help="Print the version (and the prompt templates' hash) and exit."
    ),
) -> None:
    """Expanded Othello Arena: Othello on arbitrary layouts with a hidden winning threshold K."""
    _debug["on"] = debug


def reflowed(doc: str | None) -> str | None:
    """A docstring with each paragraph's line breaks joined: rich help keeps them, breaking lines mid-sentence at
    any width. Lists (paragraphs of lines starting with '-' or '*') keep theirs."""
    if not doc:
        return doc
    paragraphs = inspect.cleandoc(doc).split("\n\n")
    return "\n\n".join(part if part.lstrip().startswith(("-", "*")) else " ".join(part.split()) for part in paragraphs)


def _register(typer_app: typer.Typer, name: str, command: Callable[..., Any]) -> None:
    panel = panel_of(name) if typer_app is app else None
    typer_app.command(name, rich_help_panel=panel, help=reflowed(command.__doc__))(reporting_user_errors(command))


def _add_group(group: typer.Typer, name: str) -> None:
    app.add_typer(group, name=name, rich_help_panel=panel_of(name))


envs.envs_app.callback(invoke_without_command=True)(reporting_user_errors(envs.envs))
_register(envs.envs_app, "new", envs.new)
_register(envs.envs_app, "list", envs.list_suite)
_add_group(envs.envs_app, "envs")
_register(app, "show", show.show)
_register(app, "perft", perft.perft)
_register(app, "demo", demo.demo)
_register(app, "agents", agents.agents)
_register(app, "match", tournament.match)
_register(app, "tournament", tournament.tournament)
_register(app, "run", run.run)
_register(app, "replay", replay_cli.replay)
_register(app, "rerun", replay_cli.rerun)
_register(app, "compare", replay_cli.compare)
_register(app, "audit", audit_cli.audit)
_register(app, "stub-server", stub_server_cli.stub_server)
_register(app, "calls-to-script", stub_server_cli.calls_to_script)
_register(app, "view", view_cli.view)
_add_group(bench_app, "bench")
_register(bench_app, "engine", bench.engine)
_register(bench_app, "agents", bench.agents)
_register(bench_app, "harness", bench.harness)
_register(bench_app, "referee", bench.referee)
_register(bench_app, "paper", bench_paper.paper)
_register(bench_app, "replot", bench_replot.replot)
_register(bench_app, "sandbox", bench_sandbox.sandbox)
_register(bench_app, "cwm", bench_cwm.cwm)
_register(bench_app, "league", bench_league.league_command)
_register(bench_app, "az", bench_az.az_command)
_register(bench_app, "env", bench_env.env)
_register(bench_app, "view", view_cli.bench_view_command)
_register(bench_app, "adaptive", bench_adaptive.adaptive)
train_app = typer.Typer(help="Train the learned baselines: 'train posnet' meta-learns PosNet, 'train ppo' PPO-2K.", no_args_is_help=True)
_add_group(train_app, "train")
_register(train_app, "posnet", train.posnet)
_register(train_app, "ppo", train.ppo)
_register(train_app, "ntuple", train.ntuple)
_register(train_app, "az", train_az_cli.az)
_add_group(sweep_cli.sweep_app, "sweep")
_register(sweep_cli.sweep_app, "plan", sweep_cli.plan)
_register(sweep_cli.sweep_app, "run", sweep_cli.run)
_register(app, "leaderboard", leaderboard_cli.leaderboard)


if __name__ == "__main__":
    app()
