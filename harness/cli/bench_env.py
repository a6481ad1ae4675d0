"""``arena bench env``: steps per second of the PettingZoo AEC, Gymnasium and vector environments beside the bare engine."""

from __future__ import annotations

import os
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from harness.cli.bench_verdict import exit_if_any_failed
from harness.cli.console import stdout_console
from harness.cli.options import at_least, parse_env_range
from harness.envs.speed import CLOCKS, FACES, Speed

TARGETS = {"vector env": 1_000_000, "PettingZoo AEC": 50_000}  # env-steps/s on 8x8
REFERENCE_NOTE = (
    "the paper's public AEC environment (a few thousand games per second, as it reports) is not installed "
    "here, so no ratio to it is measured"
)


def env(
    envs: Annotated[str, typer.Option("--envs", help="Environments: a list 0,4 (8x8 and 12x10), a range, or all.")] = "0,4",
    seconds: Annotated[float, typer.Option("--seconds", help="About how long to time each environment face.")] = 2.0,
    num_envs: Annotated[int, typer.Option("--num-envs", help="Games the vector env steps at once.")] = 4096,
    clock: Annotated[
        str, typer.Option("--clock", help="wall: wall time; cpu: this process's CPU seconds (all threads), for a loaded shared machine.")
    ] = "wall",
) -> None:
    """Env-steps per second with random masked actions: the AEC env, the Gymnasium env and the vector env, beside the bare engine.

    An env-step is one placement; the bare engine is the random-playout kernel on one core.
    Targets: the vector env >= 1,000,000 env-steps/s on 8x8 on two cores, the
    AEC env >= 50,000.
    """
    env_ids = parse_env_range(envs)
    if not seconds > 0:
        raise typer.BadParameter(f"--seconds must be more than 0, got {seconds}")
    at_least(1, ("--num-envs", num_envs))
    if clock not in CLOCKS:
        raise typer.BadParameter(f"--clock {clock!r}: choose wall or cpu")
    load = os.getloadavg()[0]
    rows: list[Speed] = []
    for env_id in env_ids:
        for name, measure in FACES.items():
            extra = {"num_envs": num_envs} if name == "vector" else {}
            rows.append(measure(env_id, seconds, CLOCKS[clock], **extra))
    console = stdout_console()
    console.print(speed_table(rows, seconds, clock, (load + os.getloadavg()[0]) / 2))
    console.print(Text(REFERENCE_NOTE), soft_wrap=True)
    exit_if_any_failed(target_met(row) for row in rows)


def target_met(row: Speed) -> bool | None:
    """Whether a face met its env-steps/s target (None: no target for this face or board)."""
    target = TARGETS.get(row.face) if row.env_id in (0, 1, 2, 3) else None
    return None if target is None else row.steps_per_second >= target


def speed_table(rows: list[Speed], seconds: float, clock: str = "wall", load: float | None = None) -> Table:
    per = "per CPU second of this process" if clock == "cpu" else "per second of wall time"
    machine = "" if load is None else f"; load average {load:.1f} on {os.cpu_count()} cores"
    table = Table(
        title=f"Environment speed, random masked actions ({per})", caption=f"about {seconds:g} s per row, timed after a warm-up{machine}"
    )
    for header in ("env", "face", "env-steps/s", "games/s", "x bare engine", "target", "how"):
        table.add_column(header, justify="right" if header not in ("face", "how") else "left")
    bare = {row.env_id: row.steps_per_second for row in rows if row.face == "bare engine"}
    for row in rows:
        target, met = TARGETS.get(row.face), target_met(row)
        verdict = "" if met is None else f">= {target:,} {'met' if met else 'NOT met'}"
        ratio = row.steps_per_second / bare[row.env_id] if bare.get(row.env_id) else float("nan")
        table.add_row(
            str(row.env_id), row.face, f"{row.steps_per_second:,.0f}", f"{row.games_per_second:,.0f}", f"{ratio:.2g}", verdict, row.note
        )
    return table
