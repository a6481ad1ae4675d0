"""Ctrl-C on a sweep (issue 14's interrupts, for `arena sweep run`): no new cell starts once a stop is asked, the
cells finished are kept, and running the same sweep again finishes it as an uninterrupted one would."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from harness.records.interrupts import StopRequest
from harness.sweep.backends import run_sweep
from harness.sweep.cells import CELLS_DIR
from harness.sweep.spec import parse_sweep
from harness.tournaments.resume import RunInterrupted

SMALL = {
    "envs": [5, 12],
    "seeds": [0, 1],
    "budget": 3,
    "games": 2,
    "referee": False,
    "opponents": ["random"],
    "models": [{"model": "mock/random-legal", "options": {"concurrency": 1}}],
}


def _games(out: Path) -> dict[str, list[tuple[object, ...]]]:
    return {
        cell.name: [
            (g["phase"], g["game_index"], tuple(g["moves"]), tuple(g["rewards"]))
            for g in map(json.loads, (cell / "games.jsonl").read_text(encoding="utf-8").splitlines())
        ]
        for cell in sorted((out / CELLS_DIR).iterdir())
    }


def test_a_stop_after_the_first_cell_keeps_it_and_a_second_run_finishes_the_sweep(tmp_path: Path) -> None:
    sweep = parse_sweep(SMALL)
    assert len(sweep.cells) == 4
    stop = StopRequest(grace_s=None, say=lambda _: None)
    seen = []

    def first_then_stop(outcome) -> None:  # noqa: ANN001 - a CellOutcome
        seen.append(outcome.id)
        if not stop.requested:
            stop.handle(signal.SIGINT, None)  # the operator's first Ctrl-C, as the handler gets it

    with pytest.raises(RunInterrupted) as stopped:
        run_sweep(sweep, tmp_path / "cut", jobs=1, on_outcome=first_then_stop, stop=stop)
    # the pool had handed at most one more cell to its worker (in flight: it finishes); the others never started
    assert 1 <= stopped.value.recorded == len(seen) < stopped.value.total == 4 and not stopped.value.forced
    assert stop.settled
    again = run_sweep(sweep, tmp_path / "cut", jobs=1)
    assert sorted(o.status for o in again) == sorted(["skipped"] * len(seen) + ["ok"] * (4 - len(seen)))
    whole = run_sweep(sweep, tmp_path / "whole", jobs=2)
    assert [o.status for o in whole] == ["ok"] * 4
    assert _games(tmp_path / "cut") == _games(tmp_path / "whole")


def test_a_stop_before_the_start_runs_no_cell(tmp_path: Path) -> None:
    stop = StopRequest(grace_s=None, say=lambda _: None)
    stop.handle(signal.SIGTERM, None)
    with pytest.raises(RunInterrupted) as stopped:
        run_sweep(parse_sweep(SMALL), tmp_path / "none", jobs=2, stop=stop)
    assert (stopped.value.recorded, stopped.value.total) == (0, 4)
    assert not (tmp_path / "none" / CELLS_DIR).exists() or not any((tmp_path / "none" / CELLS_DIR).iterdir())
