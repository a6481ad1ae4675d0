"""``arena replay``, ``arena rerun``, ``arena compare``: checking and reading run directories offline."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from harness.cli.board import board_plain, board_rich, legend
from harness.cli.console import stdout_console
from harness.runs.compare import IncomparableRuns, compare_table
from harness.runs.replay import game_plies, replay_run
from harness.runs.rerun import rerun as rerun_run

MISMATCH_EXIT_CODE = 1
REPLY_WIDTH = 60


def replay(
    run: Annotated[Path, typer.Argument(help="A run directory (arena run or arena tournament).")],
    game: Annotated[int, typer.Option("--game", help="Step through this one game instead of checking all.")] = None,
    phase: Annotated[str, typer.Option("--phase", help="Phase of --game: adapt or eval.")] = "adapt",
    plain: Annotated[bool, typer.Option("--plain", help="Plain text, every ply at once (no waiting for a key).")] = False,
) -> None:
    """Check the records (hash chains, the manifest's seal, every game and call present once), then re-play every
    game through the engine: moves, counts, rewards. Exit 1 on any finding, each naming the file and line.

    With --game N: show game N ply by ply, the board after each move and the model's reply beside it.
    """
    if game is not None:
        if phase not in ("adapt", "eval"):
            raise typer.BadParameter(f"--phase {phase!r}: choose adapt or eval")
        _step(run, game, phase, plain)
        return
    report = replay_run(run)
    stdout_console().print(Text(report.summary()), soft_wrap=True)
    if not report.ok:
        raise typer.Exit(MISMATCH_EXIT_CODE)


def _step(run: Path, index: int, phase: str, plain: bool) -> None:
    entry, rules, plies = game_plies(run, index, phase)
    console = stdout_console()
    interactive = not plain and sys.stdin.isatty()
    console.print(Text(f"{phase} game {index}: {entry.black} (black) vs {entry.white} (white), {len(plies)} plies"), soft_wrap=True)
    for ply in plies:
        console.print(Text(f"\nply {ply.ply}: {ply.colour} plays {ply.notation}"), soft_wrap=True)
        replies = [_reply_line(call) for call in ply.replies]
        if not replies and ply.move != -1:
            replies = ["(no model call: the opponent's move)"]
        if plain:
            board_lines = board_plain(rules.layout, ply.state).split("\n")
            width = max(map(len, board_lines))
            notes = [line for reply in replies for line in textwrap.wrap(reply, REPLY_WIDTH) or [""]]
            rows = [
                f"{(board_lines[i] if i < len(board_lines) else ''):<{width}}   {notes[i] if i < len(notes) else ''}".rstrip()
                for i in range(max(len(board_lines), len(notes)))
            ]
            console.print(Text("\n".join(rows)), soft_wrap=True)
        else:
            grid = Table.grid(padding=(0, 3))
            grid.add_column(no_wrap=True)
            grid.add_column(max_width=REPLY_WIDTH)
            grid.add_row(board_rich(rules.layout, ply.state), Text("\n".join(replies)))
            console.print(grid)
        if interactive:
            typer.prompt("", default="", show_default=False, prompt_suffix="[Enter: next ply]")
    black, white = rules.counts(plies[-1].state) if plies else (entry.black_discs, entry.white_discs)
    forfeit = f", forfeited by {entry.forfeit_by}" if entry.forfeit_by else ""
    console.print(Text(f"\nfinal: black {black}, white {white}; rewards {entry.rewards}{forfeit}"), soft_wrap=True)
    console.print(Text(legend(plain), style="dim"))


def _reply_line(call: object) -> str:
    verdict = f" [{call.verdict}{', ' + call.failure_kind if call.failure_kind else ''}]" if call.verdict else ""
    reply = " ".join((call.reply or "").split()) or "(no reply)"
    return f"reply (attempt {call.attempt}){verdict}: {reply}"


def rerun(
    run: Annotated[Path, typer.Argument(help="An arena run directory with its cache.jsonl.")],
    out: Annotated[Path, typer.Option("--out", help="Parent directory of the rerun's directory.")] = Path("runs"),
) -> None:
    """Run the agent again from the run's cached replies only (no network) and compare the games; list the calls whose
    cached reply differs from the calls log (exit 1 if anything differs)."""
    report = rerun_run(run, out)
    stdout_console().print(Text(report.summary()), soft_wrap=True)
    if not report.reproduced:
        raise typer.Exit(MISMATCH_EXIT_CODE)


def compare(
    runs: Annotated[list[Path], typer.Argument(help="Run directories: arena run ones and arena tournament baselines.")],
    force: Annotated[
        bool,
        typer.Option(
            "--force", help="Put runs of different settings in one table anyway, grouped, with the fields that differ beside each row."
        ),
    ] = False,
) -> None:
    """Runs side by side: evaluation results per opponent with Wilson 95% intervals, beliefs, failures, tokens, cost.

    Only like with like: runs on different environments, budgets, evaluation
    opponents or games per opponent are refused (exit 2, one line naming the
    field that differs) unless --force.
    """
    try:
        table = compare_table(runs, force=force)
    except IncomparableRuns as error:
        raise typer.BadParameter(str(error)) from None
    stdout_console().print(Text(table), soft_wrap=True)
