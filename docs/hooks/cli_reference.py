"""The command-line reference, rendered from the `arena` command itself (never written by hand).

Walks the command that typer builds from ``harness.cli.main.app`` and writes, for every command
and subcommand, its usage line, its help text and a table of its arguments and options as
``arena COMMAND --help`` shows them (name and metavar, help with the default). The docs hook
puts the result where a page says ``<!-- generated: cli -->``.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator
from typing import Any

ROOT_NAME = "arena"


def root_command() -> Any:
    """The click command of the `arena` program (imported here, so that only the docs build pays for it)."""
    import typer.main

    from harness.cli.main import app

    return typer.main.get_command(app)


def walk(command: Any, path: tuple[str, ...], parent: Any = None) -> Iterator[tuple[tuple[str, ...], Any, Any]]:
    """Every command under ``command`` with its context, depth first, in the order the program lists them."""
    context = command.context_class(command, info_name=path[-1], parent=parent)
    yield path, command, context
    for name in command.list_commands(context) if hasattr(command, "list_commands") else []:
        sub = command.get_command(context, name)
        if sub is not None and not sub.hidden:
            yield from walk(sub, (*path, name), context)


CODE_SPAN = re.compile(r"(``?[^`]+``?)")


def _escaped(text: str) -> str:
    """``<`` and ``>`` outside code spans as entities (``runs/<id>/`` would otherwise be read as an HTML tag)."""
    pieces = CODE_SPAN.split(text)
    return "".join(piece if CODE_SPAN.fullmatch(piece) else piece.replace("<", "&lt;").replace(">", "&gt;") for piece in pieces)


def _cell(text: str) -> str:
    return _escaped(" ".join(text.split())).replace("|", "\\|")


def command_markdown(path: tuple[str, ...], command: Any, context: Any) -> str:
    """One command's section: heading, usage, help text, then its parameters as a table."""
    level = "#" * min(len(path) + 1, 4)
    usage = " ".join([*path, *command.collect_usage_pieces(context)])
    lines = [f"{level} `{' '.join(path)}`", "", "```text", usage, "```", ""]
    text = _escaped(inspect.cleandoc(command.help or "").replace("\b\n", ""))
    if text:
        lines += [text, ""]
    records = [param.get_help_record(context) for param in command.get_params(context)]
    rows = [record for record in records if record is not None and "--help" not in record[0]]
    if rows:
        lines += ["| argument or option | what it does |", "|---|---|"]
        lines += [f"| `{' '.join(names.split())}` | {_cell(help_text)} |" for names, help_text in rows]
        lines.append("")
    return "\n".join(lines)


def reference_markdown(command: Any = None) -> str:
    """Every command of the program, in the order `arena --help` lists them."""
    root = command if command is not None else root_command()
    return "\n".join(command_markdown(path, sub, context) for path, sub, context in walk(root, (ROOT_NAME,)))
