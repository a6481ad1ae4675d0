"""``bench_sandbox`` and its table: the report's shape, never its timings."""

from __future__ import annotations

from rich.console import Console

from harness.bench.sandbox import SandboxBench, bench_sandbox
from harness.cli.bench_sandbox import sandbox_table


def test_bench_reports_every_figure(sandbox_ready):
    steps: list[str] = []
    result = bench_sandbox(calls=20, batch=10, simulations=5, moves=2, playouts=2, minimax_depth=1, progress=steps.append, engine_depth=2)
    assert isinstance(result, SandboxBench) and result.sandboxed and result.failures == {}
    assert (result.single_calls.count, result.batched_calls.count, result.batch) == (20, 20, 10)
    assert result.mcts_sandbox.count == result.mcts_engine.count == 2 and result.simulations == 5
    assert result.playouts_sandbox.count == result.playouts_engine.count == 2
    assert min(result.mcts_ratio, result.playout_ratio, result.single_calls.per_second) > 0
    assert result.minimax_sandbox.count == 2 and result.minimax_depth == 1
    assert len(steps) == 9 and steps[0] == "starting the worker" and "minimax depth 1 in the sandbox" in steps
    path = result.engine_path
    assert path is not None and path.table.count == 1 and path.depth == 2
    assert path.mcts.count == path.own_mcts.count == path.minimax.count == path.own_minimax.count == 2
    assert min(path.mcts_ratio, path.minimax_ratio) > 0
    console = Console(record=True, width=200)
    console.print(sandbox_table(result))
    text = console.export_text()
    for expected in (
        "legal_actions, 10 per message",
        "MCTS-5 moves",
        "minimax depth 1 moves",
        "engine path: the program's returns table",
        "engine path MCTS-5 moves",
        "mcts:n=5",
        "engine path alpha-beta from depth 2",
        "minimax:depth=2",
        "engine/sandbox",
        ">= 10,000/s",
        "bubblewrap",
    ):
        assert expected in text
