"""``arena audit RUN [RUN...]``: every recorded model reply re-read by a strict reader (:mod:`harness.runs.audit`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from harness.cli.console import stdout_console
from harness.runs.audit import audit_run, harness_version

FINDINGS_EXIT_CODE = 1


def audit(runs: Annotated[list[Path], typer.Argument(help="Run directories (arena run, arena tournament or match).")]) -> None:
    """Re-read every model reply of each run with a strict reader, independent of the harness's parser, and flag:
    a move taken from anything but the reply's final answer, replies with conflicting answers, a reply that
    repeats the prompt's legal moves, and a move that differs from its reply with no failure recorded.
    Exit 1 when there is any finding, 0 when every run is clean, 2 on a missing or unreadable run.
    """
    reports = [audit_run(run) for run in runs]  # every run read before anything is printed: a bad path is exit 2
    console = stdout_console()
    for report in reports:
        console.print(Text(report.summary()), soft_wrap=True)
    findings = sum(len(report.findings) for report in reports)
    verdict = "clean" if not findings else f"{findings} finding(s)"
    console.print(Text(f"Audit: {len(reports)} run(s), {verdict} (this harness: version {harness_version()})"), soft_wrap=True)
    if findings:
        raise typer.Exit(FINDINGS_EXIT_CODE)
