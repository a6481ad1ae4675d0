"""``arena bench sandbox``: legal-move calls per second through one sandboxed worker, MCTS in it vs on the engine."""

from __future__ import annotations

from typing import Annotated

import typer
from rich import box
from rich.table import Table
from rich.text import Text

from harness.bench.sandbox import BENCH_ENV, CALLS_TARGET, SandboxBench, bench_sandbox
from harness.cli.console import stderr_console, stdout_console


def sandbox(
    calls: Annotated[int, typer.Option("--calls", help="legal_actions calls timed each way (single, batched).")] = 20_000,
    batch: Annotated[int, typer.Option("--batch", help="Calls per message in the batched measurement.")] = 100,
    simulations: Annotated[int, typer.Option("--simulations", help="MCTS simulations per move.")] = 200,
    moves: Annotated[int, typer.Option("--moves", help="Positions searched (MCTS moves) each way.")] = 3,
    playouts: Annotated[int, typer.Option("--playouts", help="Random playouts timed each way.")] = 20,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the positions and the searches.")] = 0,
    depth: Annotated[int, typer.Option("--depth", help="Minimax depth (plies) of the minimax moves timed.")] = 2,
) -> None:
    """Time generated code in the sandbox: calls per second (target >= 10,000/s), MCTS on it vs the true engine, minimax.

    The program is the reference Othello code world model (a correct one, as a model
    would write it) on the standard 8x8 board, in one persistent bubblewrap worker.
    MCTS runs inside the worker (one round trip per move); the same planner runs in
    this process on the true engine, and the ratio engine / sandbox is printed.
    """
    for name, value in (
        ("--calls", calls),
        ("--batch", batch),
        ("--simulations", simulations),
        ("--moves", moves),
        ("--playouts", playouts),
        ("--depth", depth),
    ):
        if value < 1:
            raise typer.BadParameter(f"{name} must be 1 or more, got {value}")
    with stderr_console().status("bench sandbox") as status:
        result = bench_sandbox(
            calls,
            batch,
            simulations,
            moves,
            playouts,
            seed,
            minimax_depth=depth,
            progress=lambda step: status.update(f"bench sandbox: {step}"),
        )
    stdout_console().print(sandbox_table(result))
    if not result.sandboxed:
        stdout_console().print(
            Text(
                "UNSANDBOXED: bubblewrap cannot run here; the worker ran with rlimits only (apt-get install -y bubblewrap, as root)",
                style="bold red",
            )
        )


def sandbox_table(result: SandboxBench) -> Table:
    """The figures, each with its target or its counterpart on the true engine."""
    where = "bubblewrap" if result.sandboxed else "UNSANDBOXED"
    table = Table(
        title=f"Generated code in the sandbox ({where}): reference 8x8 program, env {BENCH_ENV}",
        caption=f"worker start {result.start_seconds:.2f} s; failures {result.failures or 'none'}; "
        "MCTS: the same planner in the worker on the program and here on the true engine",
        box=box.SIMPLE_HEAD,
    )
    for header in ("measurement", "n", "rate", "target / engine", "result"):
        table.add_column(header, justify="left" if header == "measurement" else "right")
    single, batched = result.single_calls, result.batched_calls
    table.add_row("legal_actions, 1 per message", f"{single.count:,}", f"{single.per_second:,.0f} calls/s", "", "")
    mark = Text("pass ✓", style="green") if result.calls_passed else Text("FAIL ✗", style="bold red")
    table.add_row(
        f"legal_actions, {result.batch} per message",
        f"{batched.count:,}",
        f"{batched.per_second:,.0f} calls/s",
        f">= {CALLS_TARGET:,}/s",
        mark,
    )
    table.add_row(
        f"MCTS-{result.simulations} moves",
        f"{result.mcts_sandbox.count}",
        f"{result.mcts_sandbox.per_second:,.2f} moves/s",
        f"{result.mcts_engine.per_second:,.2f} moves/s",
        f"engine/sandbox {result.mcts_ratio:.2f}x",
    )
    table.add_row(
        f"minimax depth {result.minimax_depth} moves",
        f"{result.minimax_sandbox.count}",
        f"{result.minimax_sandbox.per_second:,.2f} moves/s",
        "",
        "",
    )
    table.add_row(
        "random playouts",
        f"{result.playouts_sandbox.count}",
        f"{result.playouts_sandbox.per_second:,.0f} games/s",
        f"{result.playouts_engine.per_second:,.0f} games/s",
        f"engine/sandbox {result.playout_ratio:.2f}x",
    )
    return table
