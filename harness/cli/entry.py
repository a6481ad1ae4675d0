"""The ``arena`` console script: the referee's process before any command runs.

:func:`main` makes this process one of the referee's
(:func:`harness.registry.outside.become_referee`: it and the workers it starts
import no plugin or installed agent's code; agent processes do) and blanks its
command line as other processes see it (``/proc/<pid>/cmdline``, ``ps``), which
would name the environment (``--env 26``) or the suite entry, before handing the
arguments, still whole in this process, to the typer app. Calling the app
directly (``typer.testing.CliRunner``, ``from harness.cli.main import app``)
skips both: that is the library's in-process use.
"""

from __future__ import annotations

import ctypes
import re
import sys

ARG_START, ARG_END = 47, 48  # fields 48 and 49 of /proc/self/stat (0-based, counting from the pid)


def blank_command_line(title: str) -> bool:
    """Overwrite this process's argument area (what ``/proc/self/cmdline`` shows) with ``title``; False where the
    area cannot be found (not Linux, an unusual ``/proc``)."""
    try:
        with open("/proc/self/stat", encoding="utf-8") as stat:
            after_name = stat.read().rsplit(")", 1)[1].split()
        start, end = int(after_name[ARG_START - 2]), int(after_name[ARG_END - 2])
    except (OSError, IndexError, ValueError):
        return False
    size = end - start
    if size <= 1:
        return False
    text = title.encode()[: size - 1]
    ctypes.memmove(start, text + b"\0" * (size - len(text)), size)
    return True


def main() -> None:
    """The console script's entry point (see the module docstring)."""
    from harness.registry.outside import become_referee

    become_referee()
    command = next((word for word in sys.argv[1:] if not word.startswith("-")), "")
    blank_command_line(f"arena {command}" if re.fullmatch(r"[a-z][a-z-]{0,19}", command) else "arena")
    from harness.cli.main import app

    app(prog_name="arena")


if __name__ == "__main__":
    main()
