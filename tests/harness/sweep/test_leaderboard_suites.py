"""Suites in sweeps and the leaderboard (issue 21): a sweep names suite entries; the leaderboard never pools them with the 56."""

from __future__ import annotations

import json
from pathlib import Path

from engine.suite import SuiteSettings, write_suite
from harness.sweep.leaderboard import PUBLISHED, condition_set, leaderboard, markdown
from harness.sweep.spec import parse_sweep


def _suite(tmp_path: Path) -> Path:
    directory = tmp_path / "suite"
    write_suite(SuiteSettings(count=3, seed=1, name="held1"), directory)
    return directory


def _model_run(root: Path, name: str, env: int | str, model: str, results: list[int]) -> None:
    """A finished ``arena run`` directory as the leaderboard reads it: eval games with the agent's rewards."""
    run_dir = root / name
    run_dir.mkdir(parents=True)
    config = {"agent": "llm-policy", "model": model, "env": env, "hint": "ratio"}
    (run_dir / "manifest.json").write_text(json.dumps({"config": config}))
    lines = [json.dumps({"phase": "eval", "agent_colour": "black", "rewards": [r, -r], "opponent": "random"}) for r in results]
    (run_dir / "games.jsonl").write_text("\n".join(lines) + "\n")
    (run_dir / "metrics.json").write_text(json.dumps({"calls": len(results), "cost_usd": 0.5}))


def test_a_sweep_file_may_name_suite_entries(tmp_path: Path) -> None:
    suite = _suite(tmp_path)
    sweep = parse_sweep({"envs": [0, f"{suite}:1", f"{suite}:2"], "models": [{"model": "mock/x"}], "budget": 4, "games": 2})
    envs = [cell.env for cell in sweep.cells]
    assert envs[0] == 0 and len(set(envs)) == 3
    assert [condition_set(env) for env in envs] == [PUBLISHED, "suite held1", "suite held1"]


def test_the_leaderboard_fits_each_condition_set_on_its_own(tmp_path: Path) -> None:
    suite = _suite(tmp_path)
    runs = tmp_path / "runs"
    _model_run(runs, "paper-a", 0, "mock/a", [1] * 9 + [-1])  # a is strong on the 56 ...
    _model_run(runs, "paper-b", 0, "mock/b", [1, -1] * 5)
    _model_run(runs, "suite-a", f"{suite}:0", "mock/a", [-1] * 8 + [1, 0])  # ... and weak on the held-out suite
    _model_run(runs, "suite-b", f"{suite}:0", "mock/b", [1] * 6 + [-1] * 4)
    board = leaderboard([runs], bootstrap=20)
    assert [s["condition_set"] for s in board["sections"]] == [PUBLISHED, "suite held1"]
    paper, held = board["sections"]
    assert paper["games"] == held["games"] == 20 and board["games"] == 40
    for section, best in ((paper, "mock/a"), (held, "mock/b")):  # each order from its own games only
        assert section["anchor"] == "Random" and f"model={best}" in section["ratings"][0]["agent"]
        assert sum(r["games"] for r in section["ratings"]) == 2 * section["games"]
        assert all(r["cost_usd"] == 0.5 for r in section["ratings"] if "mock/" in r["agent"])
    rows = board["win_rates"]
    assert {row["condition_set"] for row in rows} == {PUBLISHED, "suite held1"}
    assert all(row["condition"].startswith("held-out") == (row["condition_set"] != PUBLISHED) for row in rows)
    (runs / "suite-b" / "metrics.json").write_text(json.dumps({"calls": 10, "cost_usd": 0.5, "stopped": "cost cap"}))
    unfinished = {row["condition"] for row in leaderboard([runs], bootstrap=0)["win_rates"] if "mock/b" in row["agent"]}
    assert "held-out (sealed)" in unfinished  # a run stopped half-way never shows its sealed condition
    text = markdown(board)
    assert "## published 56: 20 games" in text and "## suite held1: 20 games" in text
