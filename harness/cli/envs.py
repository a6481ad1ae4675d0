"""``arena envs``: the 56 benchmark environments in a table; ``envs new`` makes a held-out suite, ``envs list`` shows one.

A suite (``engine.suite``) is a directory with a public file (layouts, turn limits,
commitments) and a sealed one (conditions, salts, seed); these commands print the
public part only. The sealed conditions are revealed by the report of a finished run.
"""

from __future__ import annotations

import re
import secrets
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from engine import all_envs
from engine.condition_grammar import FAMILIES
from engine.environments import Environment
from engine.suite import DEFAULT_DENSITY, DEFAULT_SIZES, SuiteSettings, read_public, suite_directory, write_suite
from harness.cli.console import stdout_console
from harness.cli.options import turn_limit_text

HIDDEN = "hidden"
SEED_BITS = 63
_RANGE = re.compile(r"^\s*([0-9.]+)\s*(?:-\s*([0-9.]+))?\s*$")

envs_app = typer.Typer(help="The 56 environments (no subcommand), or a held-out suite: 'envs new', 'envs list SUITE'.")


def envs(
    ctx: typer.Context,
    reveal: Annotated[
        bool, typer.Option("--reveal", help="Show each environment's condition and its threshold K (hidden by default).")
    ] = False,
) -> None:
    """List the 56 environments: id, layout, size, obstacles, turn limit, and with --reveal the condition and K.

    The condition (its threshold K) is what agents must discover; it is shown only with --reveal.
    'arena envs new' makes a held-out suite; 'arena envs list SUITE' shows its public part.
    """
    if ctx.invoked_subcommand is None:
        stdout_console().print(envs_table(all_envs(), reveal))


def new(
    out: Annotated[Path, typer.Option("--out", metavar="DIR", help="Directory for public.json and sealed.json (new).")],
    count: Annotated[int, typer.Option("--count", help="Environments in the suite.")] = 16,
    seed: Annotated[
        int | None,
        typer.Option(
            "--seed",
            show_default=False,
            help=(
                "Seed of the layouts, conditions and salts: the same seed gives the same files byte for byte. Default: a fresh "
                "random 63-bit seed (kept in the sealed file); anyone who knows the seed can remake the sealed conditions."
            ),
        ),
    ] = None,
    sizes: Annotated[
        str, typer.Option("--sizes", metavar="LOW-HIGH", help="Board sides (rows and cols independently).")
    ] = f"{DEFAULT_SIZES[0]}-{DEFAULT_SIZES[1]}",
    density: Annotated[
        str, typer.Option("--density", metavar="LOW-HIGH", help="Obstacle density range.")
    ] = f"{DEFAULT_DENSITY[0]}-{DEFAULT_DENSITY[1]}",
    families: Annotated[
        str, typer.Option("--families", metavar="F,F,...", help=f"Condition families to draw from (each uniformly): {', '.join(FAMILIES)}.")
    ] = ",".join(FAMILIES),
    name: Annotated[str, typer.Option("--name", help="The suite's name (in the public file and the entries' names).")] = "suite",
) -> None:
    """Make a held-out suite: random layouts and sealed conditions (K from continuous ranges per family).

    Writes DIR/public.json (layouts, turn limits, a salted sha256 commitment per
    condition; no K, no family) and DIR/sealed.json (conditions, salts, seed). Use it
    with --env SUITE:ENTRY, --envs SUITE or arena bench paper --suite SUITE.
    """
    settings = SuiteSettings(
        count=count,
        seed=secrets.randbits(SEED_BITS) if seed is None else seed,
        sizes=_int_range(sizes, "--sizes"),
        density=_float_range(density, "--density"),
        families=tuple(f.strip() for f in families.split(",") if f.strip()),
        name=name.strip() or "suite",
    )
    public, sealed = write_suite(settings, out)
    console = stdout_console()
    console.print(suite_table(out))
    console.print(
        f"public: {public}\nsealed: {sealed} (keep it from the agents; the report of a run reveals it)", markup=False, soft_wrap=True
    )


def list_suite(suite: Annotated[str, typer.Argument(metavar="SUITE", help="A suite directory (or its public.json).")]) -> None:
    """Show a suite's public part: entries, layouts, turn limits and commitments (never a condition)."""
    stdout_console().print(suite_table(suite))


def suite_table(suite: str | Path) -> Table:
    """A rich table of a suite's public entries."""
    directory = suite_directory(suite)
    name, entries = read_public(directory)
    given = Path(suite).parent if Path(suite).name == "public.json" else Path(suite)  # as the user wrote it
    table = Table(title=f"Suite {name!r} ({directory}): use --env {given}:ENTRY; conditions sealed")
    for column, justify in (
        ("entry", "right"),
        ("layout", "left"),
        ("size", "center"),
        ("obstacles", "right"),
        ("turn limit", "left"),
        ("commitment", "left"),
    ):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for entry in entries:
        limit = f"{entry.turn_limit} per player" if entry.turn_limit else "none"
        table.add_row(
            str(entry.entry),
            entry.layout.name,
            f"{entry.layout.rows}x{entry.layout.cols}",
            str(len(entry.layout.obstacles)),
            limit,
            entry.commitment[:16] + "...",
        )
    return table


def _int_range(text: str, option: str) -> tuple[int, int]:
    low, high = _float_range(text, option)
    if low != int(low) or high != int(high):
        raise typer.BadParameter(f"{option} {text!r}: give whole numbers, e.g. 6-16")
    return int(low), int(high)


def _float_range(text: str, option: str) -> tuple[float, float]:
    match = _RANGE.match(text)
    if not match:
        raise typer.BadParameter(f"{option} {text!r}: give LOW-HIGH (e.g. 6-16 or 0.1-0.25) or one value")
    low = float(match.group(1))
    high = float(match.group(2)) if match.group(2) else low
    if high < low:
        raise typer.BadParameter(f"{option} {text!r} runs backwards: write {match.group(2)}-{match.group(1)}")
    return low, high


def envs_table(environments: list[Environment], reveal: bool) -> Table:
    """A rich table of ``environments``; the condition and K are the word ``hidden`` unless ``reveal``."""
    table = Table(title="Expanded Othello Arena environments (id = 7 * condition + layout)")
    table.add_column("id", justify="right")
    table.add_column("layout")
    table.add_column("size", justify="center")
    table.add_column("obstacles", justify="right")
    table.add_column("condition")
    table.add_column("K", justify="right")
    table.add_column("turn limit")
    for env in environments:
        table.add_row(
            str(env.id),
            env.layout.name,
            f"{env.layout.rows}x{env.layout.cols}",
            str(len(env.layout.obstacles)),
            env.condition.label if reveal else HIDDEN,
            f"{float(env.condition.k):g}" if reveal else HIDDEN,
            turn_limit_text(env),
        )
    return table
