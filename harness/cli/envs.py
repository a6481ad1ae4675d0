"""``arena envs``: the 56 benchmark environments in a table."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from engine import all_envs
from engine.environments import Environment
from harness.cli.console import stdout_console
from harness.cli.options import turn_limit_text

HIDDEN = "hidden"


def envs(
    reveal: Annotated[
        bool, typer.Option("--reveal", help="Show each environment's condition and its threshold K (hidden by default).")
    ] = False,
) -> None:
    """List the 56 environments: id, layout, size, obstacles, turn limit, and with --reveal the condition and K.

    The condition (its threshold K) is what agents must discover; it is shown only with --reveal.
    """
    stdout_console().print(envs_table(all_envs(), reveal))


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
