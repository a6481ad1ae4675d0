"""Golden runs: fixed-seed jobs through the CLI must write exactly the games recorded in ``tests/golden/``.

Each case runs one ``arena`` command (a mock-model ``run`` of each model agent, a
``tournament``, a small ``bench paper --quick``) and compares its game records,
line by line, with the committed file. Only wall-clock fields (``seconds``,
``*_seconds``, ``latency_s``) are dropped before comparing; every move, disc count,
reward, seed and failure count must match. A refactor that changes what is played
fails here. To record new golden files after an intended change of behaviour:
``GOLDEN_UPDATE=1 pytest tests/test_golden_runs.py`` (and say why in the commit).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from harness.cli.main import app
from tests.golden_files import check_golden

pytestmark = pytest.mark.long  # end-to-end: collected first (tests/conftest.py)

GOLDEN_DIR = Path(__file__).resolve().parent / "golden"
WALL_CLOCK_KEYS = ("seconds", "latency_s")

CASES: dict[str, tuple[list[str], str]] = {
    # name: (arena arguments after the output option is added, file inside the run directory)
    "llm-policy": (
        [
            "run",
            "--agent",
            "llm-policy",
            "--model",
            "mock/random-legal",
            "--env",
            "21",
            "--budget",
            "6",
            "--eval-games",
            "4",
            "--concurrency",
            "1",
            "--seed",
            "3",
            "--opponents",
            "random,greedy",
        ],
        "games.jsonl",
    ),
    "llm-strategist": (
        [
            "run",
            "--agent",
            "llm-strategist",
            "--model",
            "mock/reasoner",
            "--env",
            "12",
            "--budget",
            "20",
            "--batch",
            "5",
            "--eval-games",
            "4",
            "--seed",
            "1",
            "--checkpoints",
            "5,20",
        ],
        "games.jsonl",
    ),
    "tournament": (
        [
            "tournament",
            "--agents",
            "random,greedy,minimax:depth=2",
            "--vs",
            "positional,corner",
            "--envs",
            "0,4,50",
            "--games",
            "2",
            "--seed",
            "5",
            "--jobs",
            "1",
        ],
        "games.jsonl",
    ),
    # the agents the golden records hold (the default agents now include ppo, whose training the golden does not pin)
    "bench-paper": (
        ["bench", "paper", "--quick", "--envs", "5,26", "--agents", "adaptive-minimax", "--agents", "interval", "--jobs", "1"],
        "results.jsonl",
    ),
}


def _without_wall_clock(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: _without_wall_clock(v) for k, v in value.items() if not any(k == key or k.endswith("_" + key) for key in WALL_CLOCK_KEYS)
        }
    if isinstance(value, list):
        return [_without_wall_clock(v) for v in value]
    return value


def _normalised_lines(path: Path) -> list[str]:
    return [
        json.dumps(_without_wall_clock(json.loads(line)), sort_keys=True)
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]


def _run(name: str, tmp_path: Path) -> Path:
    args, filename = CASES[name]
    out = tmp_path / name
    out_args = ["--out", str(out / "run")] if args[0] in ("tournament", "bench") else ["--out", str(out)]
    result = CliRunner().invoke(app, [*args, *out_args], env={"COLUMNS": "200", "NO_COLOR": "1"})
    failing_target = args[:2] == ["bench", "paper"] and "  FAIL " in result.output  # bench paper exits 1 on a FAIL row
    assert result.exit_code == (1 if failing_target else 0), result.output
    found = sorted(out.rglob(filename))
    assert len(found) == 1, f"expected one {filename} under {out}, found {found}"
    return found[0]


@pytest.mark.parametrize("name", sorted(CASES))
def test_run_writes_the_golden_games(name: str, tmp_path: Path) -> None:
    check_golden(name, _normalised_lines(_run(name, tmp_path)), GOLDEN_DIR / f"{name}.jsonl", counted="records written", unit="record")
