"""Every ``arena bench ...`` with targets ends the same way: exit code 1 when a row it printed failed its target.

A row that could not be judged (n/a: nothing measured, a machine without the tool) is no failure;
a row that was judged and missed its target is, so a CI job (or a script) can tell from the exit code alone.
"""

from __future__ import annotations

from collections.abc import Iterable

import typer

FAILED_ROW_EXIT_CODE = 1  # a row printed FAIL (0: every judged row passed; 2: a user error)


def exit_if_any_failed(verdicts: Iterable[bool | None]) -> None:
    """Raise ``typer.Exit(1)`` when a verdict is False (None: not judged, not a failure); call after printing the rows."""
    if any(verdict is False for verdict in verdicts):
        raise typer.Exit(FAILED_ROW_EXIT_CODE)
