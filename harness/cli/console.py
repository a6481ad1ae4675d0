"""The rich consoles the commands print to, created per call so redirected streams are honoured."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text


def stdout_console() -> Console:
    """Results go to stdout (colour only on a terminal)."""
    return Console(highlight=False)


def stderr_console() -> Console:
    """Errors and progress go to stderr."""
    return Console(stderr=True, highlight=False)


def print_error(message: str) -> None:
    """One red line ``error: <message>`` on stderr; the message is printed literally (no markup)."""
    stderr_console().print(Text(f"error: {message}", style="bold red"), soft_wrap=True)
