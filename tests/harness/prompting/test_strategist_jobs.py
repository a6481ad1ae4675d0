"""llm-strategist's batch on ``--jobs`` worker processes: the same games at any --jobs, the pool's failures named."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
from test_golden_runs import CASES, GOLDEN_DIR, _normalised_lines
from typer.testing import CliRunner

from engine.environments import make_env
from harness.cli.main import app
from harness.prompting.strategist_agent import DEFAULT_STRATEGY, LlmStrategistConfig, Strategy
from harness.prompting.strategist_search import self_play_moves
from harness.prompting.worker_pool import WorkerFailed, WorkerPool
from harness.runs.llm_config import LlmRunConfig
from harness.runs.run_stop import with_new_caps

CLI_ENV = {"COLUMNS": "200", "NO_COLOR": "1"}


def _fail(text: str) -> None:
    raise ValueError(f"task failed: {text}")


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def test_pool_returns_results_in_task_order_and_names_a_failure() -> None:
    with WorkerPool(2) as pool:
        assert pool.map(pow, [(2, n) for n in range(7)]) == [2**n for n in range(7)]
        with pytest.raises(WorkerFailed, match="ValueError: task failed: bad strategy"):
            pool.map(_fail, [("bad strategy",)])
        with pytest.raises(WorkerFailed, match="died"):
            pool.map(_die, [()])
    with pytest.raises(ValueError, match="at least one worker"):
        WorkerPool(0)


def test_a_worker_plays_the_game_this_process_plays() -> None:
    rules = make_env(12).rules
    config = LlmStrategistConfig(search_depth=1, endgame=4)
    strategy = Strategy(target_ratio=0.3, weights={"mobility": 2.0})
    here = [self_play_moves(rules, s, config, 5, index) for s in (DEFAULT_STRATEGY, strategy) for index in (0, 1)]
    with WorkerPool(2) as pool:
        there = pool.map(self_play_moves, [(rules, s, config, 5, index) for s in (DEFAULT_STRATEGY, strategy) for index in (0, 1)])
    assert there == here
    assert here[0] != here[2]  # each game's result comes back to its own task


def test_jobs_2_plays_the_golden_run_of_jobs_1_and_records_jobs(tmp_path: Path) -> None:
    args, filename = CASES["llm-strategist"]
    result = CliRunner().invoke(app, [*args, "--jobs", "2", "--out", str(tmp_path)], env=CLI_ENV)
    assert result.exit_code == 0, result.output
    (games,) = tmp_path.rglob(filename)
    assert _normalised_lines(games) == (GOLDEN_DIR / "llm-strategist.jsonl").read_text(encoding="utf-8").splitlines()
    manifest = json.loads((games.parent / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["config"]["jobs"] == 2


def test_resume_may_give_another_jobs_without_a_cap_change() -> None:
    config = LlmRunConfig(agent="llm-strategist", model="mock/reasoner", env=12, budget=10, eval_games=0, jobs=2)
    resumed = with_new_caps(config, {"jobs": 3}, {"adapt": 4, "eval": 0})
    assert (resumed.jobs, resumed.cap_changes) == (3, ())
    capped = with_new_caps(config, {"jobs": 1, "max_tokens": 500}, {"adapt": 4, "eval": 0})
    assert capped.jobs == 1 and [c.max_tokens for c in capped.cap_changes] == [500]


def test_jobs_below_one_is_one_clear_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        ["run", "--agent", "llm-strategist", "--model", "mock/reasoner", "--env", "12", "--jobs", "0", "--out", str(tmp_path)],
        env=CLI_ENV,
    )
    assert result.exit_code == 2 and "--jobs" in result.output and "Traceback" not in result.output
