"""A run killed with SIGKILL in the middle replays as unsealed; resumed, it replays clean and equals an uninterrupted run."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from harness.cli.main import app
from harness.records.transcript import TranscriptReader
from harness.registry.importing import PLUGINS_ENV
from harness.registry.plugins import load_plugins
from harness.runs.llm_run import LlmRunConfig, run_llm
from tests import gate_agents
from tests.harness.cli.cli_args import options

pytestmark = pytest.mark.long  # end-to-end: collected first (tests/conftest.py)

REPO = Path(__file__).resolve().parents[3]
FINDINGS_EXIT = 1  # arena replay's exit code when the records show damage


GATE_PLUGIN = Path(gate_agents.__file__)


def config(**changes):
    base = dict(model="mock/first-legal", env=21, budget=60, eval_games=2, opponents=("gated-random",), seed=3, checkpoints=(60,))
    return LlmRunConfig(**{**base, **changes})


@pytest.fixture
def gated(monkeypatch) -> None:
    """The gated opponents known in this process (and so to the referee's); the plugin variable restored after."""
    monkeypatch.setenv(PLUGINS_ENV, os.environ.get(PLUGINS_ENV, ""))
    load_plugins([GATE_PLUGIN])


def arena(*args: str, gate: str | None = None, **kw) -> subprocess.Popen:
    """``arena ARGS --plugin tests/gate_agents.py``; with ``gate``, the evaluation opponent holds at that gate."""
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    env.pop(gate_agents.GATE_ENV, None)
    if gate is not None:
        env[gate_agents.GATE_ENV] = gate
    command = [sys.executable, "-m", "harness.cli.main", *args, "--plugin", str(GATE_PLUGIN)]
    return subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


def held_at(out: Path, games: int) -> str:
    """A gate that holds the run's evaluation games once it has ``games`` games, and never opens (the run is killed)."""
    return gate_agents.gate_value(out / "*" / "games.jsonl", games, out.parent / "never-opened")


def lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def wait_for_games(out: Path, games: int, process: subprocess.Popen, timeout: float = 120.0) -> Path:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        runs = list(out.glob("*/games.jsonl"))
        if runs and lines(runs[0]) >= games:
            return runs[0].parent
        if process.poll() is not None:
            pytest.fail(f"the run ended before it could be killed: {process.communicate()[1].decode()[-2000:]}")
        try:  # wait for the run to end, or 5 ms, whichever comes first
            process.wait(timeout=0.005)
        except subprocess.TimeoutExpired:
            pass
    pytest.fail("the run did not reach the kill point in time")


def replay(run_dir: Path) -> Result:
    """``arena replay RUN_DIR`` in this process."""
    return CliRunner().invoke(app, ["replay", str(run_dir)], env={"COLUMNS": "400"})


def comparable(run_dir: Path) -> list[dict]:
    return [game.model_dump() for game in TranscriptReader(run_dir).games()]


@pytest.mark.parametrize("agent, extra", [("llm-policy", ()), ("llm-strategist", ("--batch", "7"))])
def test_sigkill_then_resume_equals_an_uninterrupted_run(tmp_path, gated, agent, extra):
    model = "mock/first-legal" if agent == "llm-policy" else "mock/strategist"
    budget = 60 if agent == "llm-policy" else 24
    whole = run_llm(
        config(agent=agent, model=model, budget=budget, checkpoints=(budget,), batch=7, search_depth=1, endgame=4),
        out=tmp_path / "whole",
        run_id="r",
    )
    out = tmp_path / "killed"
    args = options(agent=agent, model=model, env=21, budget=budget, eval_games=2, opponents="gated-random", seed=3, out=out)
    args = ["run", *args, *options(checkpoints=budget, search_depth=1, endgame=4), *extra]
    process = arena(*args, gate=held_at(out, budget // 3))  # the kill lands mid-run even if the test is slow to send it
    run_dir = wait_for_games(out, budget // 3, process)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
    played = len(TranscriptReader(run_dir).games())
    assert 0 < played < budget + 2, "the kill must land in the middle of the run"
    unsealed = replay(run_dir)  # no close, so no seal: replay names the first unsealed line
    assert unsealed.exit_code == FINDINGS_EXIT, unsealed.output
    assert "games.jsonl:1: the manifest seals 0 line(s)" in unsealed.output and "written after the seal" in unsealed.output
    resumed = arena("run", "--resume", str(run_dir))
    stdout, stderr = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, stderr.decode()[-2000:]
    sealed = replay(run_dir)
    assert sealed.exit_code == 0, sealed.output
    assert f"complete: {budget} of {budget} adaptation games and 2 of 2 evaluation games" in sealed.output
    assert comparable(run_dir) == comparable(whole)
    games = TranscriptReader(run_dir).games()
    assert [g.game_index for g in games if g.phase == "adapt"] == list(range(budget))  # none lost, none twice
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["adapt_games"] == budget and metrics["eval_games"] == 2
