"""``arena show``: draw an environment's (or a layout file's) starting board."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.text import Text

from engine import PASS, format_move
from harness.cli.board import board_plain, board_rich, legend
from harness.cli.console import stdout_console
from harness.cli.options import EnvArgument, LayoutOption, resolve_target


def show(
    env: EnvArgument = None,
    layout: LayoutOption = None,
    moves: Annotated[bool, typer.Option("--moves", help="Mark black's legal first moves with *.")] = False,
    plain: Annotated[bool, typer.Option("--plain", help="Plain text with the layout-file symbols B/W/#/. (no colour).")] = False,
) -> None:
    """Draw the starting board of environment ENV or of --layout FILE.

    Columns are lettered a.. across the top and rows numbered 1.. down the side
    (a1 is the top-left cell, as in the move notation). Black moves first.
    """
    target = resolve_target(env, layout)
    rules = target.rules
    state = rules.initial_state()
    legal = [m for m in rules.legal_moves(state) if m != PASS] if moves else []
    console = stdout_console()
    console.print(Text(target.title), soft_wrap=True)
    mark_label = "legal move" if moves else None
    if plain:
        console.print(Text(board_plain(rules.layout, state, legal)))
    else:
        console.print(board_rich(rules.layout, state, legal))
    console.print(Text(legend(plain, mark_label), style="dim"))
    if moves:
        listed = ", ".join(format_move(m, rules.layout) for m in legal) or "none"
        console.print(Text(f"legal first moves for black ({len(legal)}): {listed}"))
