"""Ctrl-C on ``arena tournament``/``arena match`` through real processes, then ``--resume``.

A tournament is interrupted once a given number of games are recorded: its agents
(``tests/gate_agents.py``, a plugin) hold every move while the run has that many games and
the test has not opened the gate, so the signal lands in the middle of the run however
the machine schedules the test (under load, the quick games used to finish before the
signal came). It exits with 130 within a hang guard, its last line is the command that
continues it, and that command completes a run whose games and results equal an
uninterrupted run with the same seed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from harness.records.interrupts import INTERRUPTED_EXIT_CODE
from harness.tournaments.resume import plan_of, recorded_games
from tests import gate_agents
from tests.process_watch import HANG_GUARD_S, StderrWatch, wait_for_lines

pytestmark = pytest.mark.long  # end-to-end: collected first (tests/conftest.py)

REPO = Path(__file__).resolve().parents[3]
GATE_PLUGIN = Path(gate_agents.__file__)
AGENTS = ("gated-random", "gated-greedy", "gated-corner")
ENV, GAMES, SEED = 5, 12, 7  # env 5 is the smallest board (6x8): 3 pairings x 12 games = 36 quick games


def arena(*args: str, gate: str | None = None) -> subprocess.Popen[str]:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "COLUMNS": "200", "NO_COLOR": "1"}
    env.pop(gate_agents.GATE_ENV, None)
    if gate is not None:
        env[gate_agents.GATE_ENV] = gate
        # the gated agents play behind the walls: they get the gate's variable, and the test's folder (the run's
        # games file, the release file) is bound into their sandboxes
        folder = Path(gate.rsplit(":", 2)[2]).parent
        folder.chmod(0o755)
        env["OTHELLO_ARENA_AGENT_ENV"] = gate_agents.GATE_ENV
        env["ARENA_AGENT_WRITABLE"] = str(folder)
    return subprocess.Popen(
        [sys.executable, "-m", "harness.cli.main", *args], cwd=REPO, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def games_of(run_dir: Path) -> list[tuple[object, ...]]:
    """Every game's identity, seed, moves and rewards, in plan order (the finishing order may differ)."""
    lines = [json.loads(text) for text in (run_dir / "games.jsonl").read_text().splitlines() if text.strip()]
    return sorted((g["env_id"], g["pairing"], g["game"], g["game_seed"], tuple(g["moves"]), tuple(g["rewards"])) for g in lines)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same tournament, played through without a stop and without a gate (the reference)."""
    run_dir = tmp_path_factory.mktemp("whole") / "run"
    whole = arena(*tournament_args(run_dir, 1))
    _, stderr = whole.communicate(timeout=HANG_GUARD_S)
    assert whole.returncode == 0, stderr[-2000:]
    return run_dir


def tournament_args(out: Path, jobs: int) -> list[str]:
    return [
        "tournament",
        *(word for agent in AGENTS for word in ("--agents", agent)),
        "--envs",
        str(ENV),
        "--games",
        str(GAMES),
        "--seed",
        str(SEED),
        "--jobs",
        str(jobs),
        "--out",
        str(out),
        "--plugin",
        str(GATE_PLUGIN),
    ]


@pytest.mark.parametrize("jobs, cut, signum", [(1, 3, signal.SIGINT), (2, 17, signal.SIGTERM)])
def test_a_stopped_tournament_says_how_to_continue_and_resumes_to_the_uninterrupted_run(tmp_path, uninterrupted, jobs, cut, signum):
    run_dir, release = tmp_path / "run", tmp_path / "release"
    process = arena(*tournament_args(run_dir, jobs), gate=gate_agents.gate_value(run_dir / "games.jsonl", cut, release))
    watch = StderrWatch(process)
    wait_for_lines(run_dir, "games.jsonl", cut, process)  # from here every game in flight holds still
    process.send_signal(signum)
    watch.wait_for(f"stopping ({signal.Signals(signum).name})")
    release.touch()  # the games in flight finish; the stop cancels the rest
    process.wait(timeout=HANG_GUARD_S)
    stderr = watch.finish()
    assert process.returncode == INTERRUPTED_EXIT_CODE, stderr
    assert stderr[-1] == f"continue with: arena tournament --resume {run_dir} --plugin {GATE_PLUGIN}", stderr
    kept = len(recorded_games(run_dir, plan_of(json.loads((run_dir / "manifest.json").read_text()))))
    assert cut <= kept < 3 * GAMES, "the stop must land in the middle of the run"
    assert any(f"interrupted: {kept} of {3 * GAMES} games recorded" in line for line in stderr), stderr
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "interrupted" and manifest["games_played"] == kept
    assert not (run_dir / "results.json").exists()

    resumed = arena(*stderr[-1].removeprefix("continue with: arena ").split())
    stdout, resumed_err = resumed.communicate(timeout=HANG_GUARD_S)
    assert resumed.returncode == 0, resumed_err[-2000:]
    assert games_of(run_dir) == games_of(uninterrupted)  # each game once, the same games
    assert json.loads((run_dir / "results.json").read_text()) == json.loads((uninterrupted / "results.json").read_text())
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["resumes"][0]["games_on_record"] == kept
    assert "gated-random" in stdout and "gated-greedy" in stdout


def test_a_second_ctrl_c_stops_at_once_and_the_directory_still_resumes(tmp_path):
    """Slow games (MCTS with many simulations): the first Ctrl-C waits for them, the second ends them."""
    run_dir = tmp_path / "run"
    process = arena("match", "mcts:n=4000", "greedy", "--env", str(ENV), "--games", "4", "--jobs", "2", "--out", str(run_dir))
    watch = StderrWatch(process)
    wait_for_lines(run_dir, "manifest.json", 1, process)
    process.send_signal(signal.SIGINT)
    watch.wait_for("stopping (SIGINT)")
    process.send_signal(signal.SIGINT)
    process.wait(timeout=HANG_GUARD_S)
    stderr = watch.finish()
    assert process.returncode == INTERRUPTED_EXIT_CODE, stderr
    assert any("stopping now" in line for line in stderr), stderr
    assert stderr[-1] == f"continue with: arena match --resume {run_dir}", stderr
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "interrupted"
    assert len(recorded_games(run_dir, plan_of(manifest))) < 4  # what is on record reads back as games of the plan
