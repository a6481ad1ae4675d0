"""``arena perft``: count the leaves of the game tree to a depth, with the time it took."""

from __future__ import annotations

import time
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from engine import Rules, State, format_move
from harness.cli.console import stdout_console
from harness.cli.options import EnvArgument, LayoutOption, at_least, resolve_target


def perft(
    depth: Annotated[int, typer.Option("--depth", "-d", help="Plies to search (0 or more).")],
    env: EnvArgument = None,
    layout: LayoutOption = None,
    divide: Annotated[bool, typer.Option("--divide", help="Also print the leaf count under each first move.")] = False,
) -> None:
    """Count the leaves of the game tree DEPTH plies deep from the start (move-generator check).

    A forced pass is one ply and a finished game one leaf; an environment's turn
    limit is respected. Prints the leaf count, the time and the leaves per second.
    """
    at_least(0, ("--depth", depth))
    target = resolve_target(env, layout)
    rules = target.rules
    state = rules.initial_state()
    rules.perft(state, 1)  # compile (or load) the kernel for this board size before timing
    start = time.perf_counter()
    parts = divide_counts(rules, state, depth) if divide else None
    total = sum(count for _, count in parts) if parts else rules.perft(state, depth)
    seconds = time.perf_counter() - start
    console = stdout_console()
    console.print(Text(target.title), soft_wrap=True)
    if parts is not None:
        console.print(divide_table(rules, parts))
    rate = f"{total / seconds:,.0f} nodes/s" if seconds > 0 else "n/a nodes/s"
    console.print(Text(f"perft({depth}) = {total}   {duration(seconds)}   {rate}"))


def duration(seconds: float) -> str:
    """``12.3 ms`` under a second, ``4.56 s`` above."""
    return f"{seconds * 1000:.3g} ms" if seconds < 1 else f"{seconds:.3g} s"


def divide_counts(rules: Rules, state: State, depth: int) -> list[tuple[int, int]]:
    """(first move, leaves below it) for every legal first move; ``[]`` at depth 0 or a finished game.

    The counts add up to the perft total, except at depth 0 or on a finished
    game, where the total is 1 (the root itself is the leaf).
    """
    if depth == 0:
        return []
    return [(move, rules.perft(rules.play(state, move), depth - 1)) for move in rules.legal_moves(state)]


def divide_table(rules: Rules, parts: list[tuple[int, int]]) -> Table:
    table = Table(title="divide")
    table.add_column("move")
    table.add_column("leaves", justify="right")
    for move, count in parts:
        table.add_row(format_move(move, rules.layout), str(count))
    return table
