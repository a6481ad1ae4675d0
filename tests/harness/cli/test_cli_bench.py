"""``arena bench engine``: runs quickly and prints the figures (timings are never asserted)."""

from __future__ import annotations

import re

from harness.bench import engine as bench_engine
from harness.bench.engine import REFERENCE_UNAVAILABLE, EngineBenchRow
from harness.cli import bench as cli_bench


def test_bench_engine_prints_the_figures_it_measured(invoke, monkeypatch):
    """Every printed figure is the measured row's, in the column's unit (no timing is asserted)."""
    measured: list[EngineBenchRow] = []

    def recording(*args, **kwargs):
        rows = bench_engine.bench_engine(*args, **kwargs)
        measured.extend(rows)
        return rows

    monkeypatch.setattr(cli_bench, "bench_engine", recording)
    result = invoke("bench", "engine", "--envs", "0", "--games", "40", "--reference-games", "5")
    assert result.exit_code == 0, result.output
    (measured_row,) = measured
    assert (measured_row.env_id, measured_row.games, measured_row.reference_games) == (0, 40, 5)  # the counts asked for
    row = re.search(r"│\s*0\s*│\s*Standard 8x8 / Majority\s*│\s*8x8\s*│(.*)│", result.output)
    assert row, result.output
    cells = [cell.strip() for cell in row.group(1).split("│")]
    assert cells == [
        f"{measured_row.games_per_second:,.0f}",
        f"{measured_row.mean_plies:.1f}",
        f"{measured_row.reference_games_per_second:,.1f}",
        f"{measured_row.ratio:,.0f}x",
    ]
    assert 50 <= measured_row.mean_plies <= 60  # placements per 8x8 game: the plies column counts moves, not passes
    assert measured_row.ratio == measured_row.games_per_second / measured_row.reference_games_per_second
    assert "fast: 40 games per env" in result.output and "reference: 5 games per env" in result.output
    assert "games per second" in result.output


def test_bench_engine_fixed_games_without_reference(invoke):
    result = invoke("bench", "engine", "--envs", "5,42", "--games", "50", "--reference-games", "0")
    assert result.exit_code == 0, result.output
    assert "Random Board 2 (6x8)" in result.output
    assert "Standard 8x8 / Majority/Blitz" in result.output
    assert "n/a" in result.output


def test_bench_engine_without_a_source_checkout(invoke, monkeypatch):
    monkeypatch.setattr(bench_engine, "load_reference", lambda: None)
    result = invoke("bench", "engine", "--envs", "0", "--games", "10", "--reference-games", "3")
    assert result.exit_code == 0, result.output
    assert REFERENCE_UNAVAILABLE in result.output


def test_blitz_games_stop_at_the_turn_limit():
    (row,) = bench_engine.bench_engine([42], games=200, reference_games=3)
    assert 15 < row.mean_plies <= 20  # at most 10 placements per player (a wipe-out may end a game sooner)
    assert row.reference_games == 3 and row.ratio is not None


def test_row_figures():
    row = EngineBenchRow(0, "x", "8x8", games=100, seconds=0.5, plies=6000, reference_games=10, reference_seconds=1.0)
    assert row.games_per_second == 200 and row.mean_plies == 60
    assert row.reference_games_per_second == 10 and row.ratio == 20
    assert EngineBenchRow(0, "x", "8x8", 1, 1.0, 60).ratio is None


def test_bench_harness_prints_overhead_and_calls_in_flight(invoke):
    result = invoke("bench", "harness", "--games", "1", "--concurrency", "3", "--concurrent-games", "2", "--latency", "0.05")
    assert result.exit_code == (1 if "FAIL" in result.output else 0), result.output  # a timing: either, told by the exit code
    assert re.search(r"harness overhead\s.*\d+ moves\s.*[\d.]+ ms/move\s.*< 2 ms/move\s.*(pass|FAIL)", result.output)
    assert re.search(r"model calls in flight\s.*peak 2 \(2\)\s.*>= 32 in flight\s.*n/a", result.output)  # 2 games at once
    bad = invoke("bench", "harness", "--concurrency", "0")
    assert bad.exit_code == 2 and "--concurrency must be 1 or more" in bad.output
