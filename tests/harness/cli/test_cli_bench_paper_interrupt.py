"""Ctrl-C on ``arena bench paper`` through a real process: pairs in flight are stopped after the grace period,
the run is marked interrupted, and the last line is the command that continues it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.records.interrupts import INTERRUPTED_EXIT_CODE

pytestmark = pytest.mark.long  # end-to-end: collected first (tests/conftest.py)

REPO = Path(__file__).resolve().parents[3]
HANG_GUARD_S = 120.0


def wait_for_file(path: Path, process: subprocess.Popen[str]) -> None:
    """Block until ``path`` exists (polling on the process's own exit, 5 ms at a time)."""
    deadline = time.monotonic() + HANG_GUARD_S
    while not path.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            pytest.fail(f"the run did not start in time (exit {process.returncode})")
        try:
            process.wait(timeout=0.005)
        except subprocess.TimeoutExpired:
            pass


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_stops_the_pairs_in_flight_and_ends_with_the_resume_command(tmp_path, jobs):
    out = tmp_path / "run"
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "COLUMNS": "200", "NO_COLOR": "1"}
    # Two pairs of a few seconds each or more (depth-3 search, 40 games against each of 5 opponents).
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "harness.cli.main",
            "bench",
            "paper",
            "--envs",
            "5,12",
            "--agents",
            "minimax:depth=3",
            "--budget",
            "4",
            "--games",
            "40",
            "--checkpoint-games",
            "4",
            "--jobs",
            jobs,
            "--out",
            str(out),
        ],
        cwd=REPO,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    wait_for_file(out / "manifest.json", process)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=HANG_GUARD_S)
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert process.returncode == INTERRUPTED_EXIT_CODE, stderr[-2000:]
    assert any("stopping (SIGINT)" in line for line in lines), lines
    # A pair still starting when the signal lands is dropped at once; one already playing runs out its grace
    # ("did not finish within 5 s") or, with a warm numba cache on a quiet machine, finishes within it: which
    # happens depends on load, so the line must say what results.jsonl holds, whichever it was.
    recorded = [line for line in (out / "results.jsonl").read_text().splitlines() if line.strip()]
    said = [line for line in lines if line.startswith("interrupted: ")]
    assert len(said) == 1, lines
    kept = said[0].removeprefix("interrupted: ").split(" (environment")[0]
    assert kept in ({f"{len(recorded)} of 2 pairs"} | ({"no pairs"} if not recorded else set())), (said, recorded)
    assert all(json.loads(line)["status"] == "ok" for line in recorded)  # a finished pair, never a cut one
    assert lines[-1] == f"continue with: arena bench paper --resume {out}", lines
    assert "Traceback" not in stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "interrupted"
