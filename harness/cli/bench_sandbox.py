"""``arena bench sandbox``: legal-move calls per second through one sandboxed worker, MCTS in it vs on the engine."""

from __future__ import annotations

from typing import Annotated

import typer
from rich import box
from rich.table import Table
from rich.text import Text

from agents.interval.agent import IntervalConfig
from harness.bench.sandbox import BENCH_ENV, CALLS_TARGET, ENGINE_MCTS_TARGET, SandboxBench, bench_sandbox
from harness.cli.bench_verdict import exit_if_any_failed
from harness.cli.console import stderr_console, stdout_console
from harness.cli.options import at_least


def sandbox(
    calls: Annotated[int, typer.Option("--calls", help="legal_actions calls timed each way (single, batched).")] = 20_000,
    batch: Annotated[int, typer.Option("--batch", help="Calls per message in the batched measurement.")] = 100,
    simulations: Annotated[int, typer.Option("--simulations", help="MCTS simulations per move.")] = 200,
    moves: Annotated[int, typer.Option("--moves", help="Positions searched (MCTS moves) each way.")] = 3,
    playouts: Annotated[int, typer.Option("--playouts", help="Random playouts timed each way.")] = 20,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the positions and the searches.")] = 0,
    depth: Annotated[int, typer.Option("--depth", help="Minimax depth (plies) of the minimax moves timed.")] = 2,
    engine_depth: Annotated[
        int, typer.Option("--engine-depth", help="The engine path's alpha-beta depth, beside minimax:depth=N (plies).")
    ] = 4,
) -> None:
    """Time generated code in the sandbox: calls per second (target >= 10,000/s), MCTS on it vs the true engine, minimax.

    The program is the reference Othello code world model (a correct one, as a model
    would write it) on the standard 8x8 board, in one persistent bubblewrap worker.
    MCTS runs inside the worker (one round trip per move); the same planner runs in
    this process on the true engine, and the ratio engine / sandbox is printed.
    """
    at_least(
        1,
        ("--calls", calls),
        ("--batch", batch),
        ("--simulations", simulations),
        ("--moves", moves),
        ("--playouts", playouts),
        ("--depth", depth),
        ("--engine-depth", engine_depth),
    )
    with stderr_console().status("bench sandbox") as status:
        result = bench_sandbox(
            calls,
            batch,
            simulations,
            moves,
            playouts,
            seed,
            minimax_depth=depth,
            engine_depth=engine_depth,
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
    exit_if_any_failed((result.calls_passed, engine_path_passed(result)))


def engine_path_passed(result: SandboxBench) -> bool | None:
    """Whether MCTS on the engine path kept within its target of the project's own MCTS (None: no engine path timed)."""
    return None if result.engine_path is None else result.engine_path.mcts_ratio <= ENGINE_MCTS_TARGET


def _engine_path_rows(table: Table, result: SandboxBench) -> None:
    """The cwm engine path's rows: the one table call, MCTS and alpha-beta on the engine beside the project's own agents."""
    path, n = result.engine_path, result.simulations
    assert path is not None
    table.add_row("engine path: the program's returns table", "1", f"{path.table.seconds:.2f} s", "one call", "")
    mark = Text("pass ✓", style="green") if engine_path_passed(result) else Text("FAIL ✗", style="bold red")
    table.add_row(
        f"engine path MCTS-{n} moves",
        f"{path.mcts.count}",
        f"{path.mcts.per_second:,.2f} moves/s",
        f"mcts:n={n} {path.own_mcts.per_second:,.2f} moves/s",
        Text.assemble(f"{path.mcts_ratio:.2f}x its time (<= {ENGINE_MCTS_TARGET:g}x) ", mark),
    )
    table.add_row(
        f"engine path alpha-beta from depth {path.depth} (deeper within {IntervalConfig().nodes:,} nodes)",
        f"{path.minimax.count}",
        f"{path.minimax.per_second:,.2f} moves/s",
        f"minimax:depth={path.depth} {path.own_minimax.per_second:,.2f} moves/s",
        f"{path.minimax_ratio:.2f}x its time",
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
    if result.engine_path is not None:
        _engine_path_rows(table, result)
    table.add_row(
        "random playouts",
        f"{result.playouts_sandbox.count}",
        f"{result.playouts_sandbox.per_second:,.0f} games/s",
        f"{result.playouts_engine.per_second:,.0f} games/s",
        f"engine/sandbox {result.playout_ratio:.2f}x",
    )
    return table
