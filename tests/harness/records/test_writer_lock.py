"""One writer per run directory, through real processes: a second writer fails at once naming the holder; a killed
holder's lock is taken over."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from harness.records.lock import RunLocked, writer_lock
from harness.runs.llm_run import LlmRunConfig, run_llm

HOLDER = Path(__file__).with_name("lock_holder.py")
ARENA = [sys.executable, "-c", "from harness.cli.main import app; app()"]
ROOT = Path(__file__).parents[3]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}


@pytest.fixture
def holder(tmp_path):
    """A run directory and a process holding its lock (killed at the end, whatever happens)."""
    run_dir = run_llm(LlmRunConfig(model="mock/first-legal", env=3, budget=2, eval_games=0, checkpoints=()), out=tmp_path, run_id="r")
    process = subprocess.Popen([sys.executable, str(HOLDER), str(run_dir)], stdout=subprocess.PIPE, text=True, env=_env(), cwd=ROOT)
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "locked"
        yield run_dir, process
    finally:
        process.kill()
        process.wait(timeout=30)


def test_a_second_writer_fails_at_once_naming_the_holder_and_takes_over_once_it_is_killed(holder):
    run_dir, process = holder
    second = subprocess.run(
        [*ARENA, "run", "--resume", str(run_dir)], capture_output=True, text=True, env=_env(), cwd=ROOT, timeout=120
    )  # a writer that waited for the lock would hit this timeout
    assert second.returncode == 2, second.stderr
    assert f"is being written by another process (pid {process.pid} on " in second.stderr
    assert "Traceback" not in second.stderr
    process.send_signal(signal.SIGKILL)  # the holder dies without unlocking: its lock goes with it
    process.wait(timeout=30)
    third = subprocess.run([*ARENA, "run", "--resume", str(run_dir)], capture_output=True, text=True, env=_env(), cwd=ROOT, timeout=300)
    assert third.returncode == 0, third.stderr
    assert (run_dir / "report.md").exists()


def test_the_lock_is_exclusive_within_a_process_too_and_released_after(tmp_path):
    with writer_lock(tmp_path / "run"):
        with pytest.raises(RunLocked, match=rf"pid {os.getpid()} on "):
            with writer_lock(tmp_path / "run"):
                pass
    with writer_lock(tmp_path / "run"):  # released: taken again
        assert (tmp_path / "run" / ".writer.lock").read_text().startswith(f"pid {os.getpid()} on ")
