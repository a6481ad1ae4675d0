"""A model agent patched to cheat, through ``arena run``: under the referee it learns nothing of K and plays no game past its budget.

``model_cheaters.py`` (loaded with ``--plugin``, so the agent process patches
llm-policy too) tries the grant, private attributes, the call stack in adapt and
in its evaluation moves, every live object, the command line, the environment
table, a ledger reset and a second arena handle. Run on two environments that
differ only in K, its findings must be identical; the run records exactly the
budget. In-process (``--in-process``) the same agent finds K: the test can fail.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from engine import make_env
from harness.cli.main import app

CHEATER = Path(__file__).with_name("model_cheaters.py")
MAJORITY, MINORITY = 0, 7  # the same 8x8 layout, K = 1.01 and K = -0.01
BUDGET = 3


def _run(tmp_path: Path, env: int, *extra: str):
    return CliRunner().invoke(
        app,
        [
            "run",
            "--plugin",
            str(CHEATER),
            "--agent",
            "llm-policy",
            "--model",
            "mock/first-legal",
            "--env",
            str(env),
            "--budget",
            str(BUDGET),
            "--eval-games",
            "2",
            "--checkpoints",
            "",
            "--out",
            str(tmp_path / f"runs-{env}"),
            *extra,
        ],
    )


def _findings(directory: Path) -> dict:
    (path,) = directory.glob("model-cheat-*.json")
    found = json.loads(path.read_text())
    path.unlink()
    return found


def _games(tmp_path: Path, env: int) -> list[dict]:
    (games,) = (tmp_path / f"runs-{env}").glob("*/games.jsonl")
    return [json.loads(line) for line in games.read_text().splitlines()]


def test_under_the_referee_the_cheater_finds_nothing_of_k_and_plays_only_its_budget(reports, tmp_path):
    found = {}
    for env in (MAJORITY, MINORITY):
        result = _run(tmp_path, env)
        assert result.exit_code == 0, result.output
        found[env] = _findings(reports)
        assert [g["phase"] for g in _games(tmp_path, env)] == ["adapt"] * BUDGET + ["eval"] * 2
    assert found[MAJORITY] == found[MINORITY]  # nothing it saw depends on K
    findings = found[MAJORITY]
    assert findings["grant"] == "refused"
    assert findings["private_attributes"] == findings["stack_in_adapt"] == []
    assert findings["stack_in_act"] == [["nothing"], ["nothing"], ["nothing"]][: len(findings["stack_in_act"])]
    assert findings["argv"] == []
    assert findings["games_in_budget"] == BUDGET
    assert findings["after_reset"] == 0 and findings["second_handle"] == 0
    both = {str(make_env(env).condition.k) for env in (MAJORITY, MINORITY)}
    assert both <= set(findings["table_candidates"])  # the layout's published conditions: no way to tell which


def _run_in_a_fresh_process(tmp_path: Path, env: int, *extra: str) -> subprocess.CompletedProcess[str]:
    """``arena run`` in a process of its own: what the agent finds in-process must not depend on what this test worker
    ran before (its spy walks the whole call stack and every module's globals, within an object limit)."""
    args = ["run", "--plugin", str(CHEATER), "--agent", "llm-policy", "--model", "mock/first-legal", "--env", str(env)]
    args += ["--budget", str(BUDGET), "--eval-games", "2", "--checkpoints", "", "--out", str(tmp_path / f"runs-{env}"), *extra]
    code = "from harness.cli.main import app; app()"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300, check=False)


def test_in_process_the_same_cheater_finds_k(reports, tmp_path):
    completed = _run_in_a_fresh_process(tmp_path, MINORITY, "--in-process")
    output = completed.stdout + completed.stderr
    assert completed.returncode == 0, output
    findings = _findings(reports)
    k = repr(make_env(MINORITY).condition)
    assert k in findings["private_attributes"] and findings["after_reset"] == BUDGET  # games past the budget, in no record
    assert any(k in text for seen in findings["stack_in_act"] for text in seen)  # the Condition, or the Environment holding it
    assert "Referee: in-process (UNENFORCED" in " ".join(output.split())


def test_a_record_the_referee_never_scored_stops_the_run_and_keeps_what_was_played(reports, tmp_path, monkeypatch):
    monkeypatch.setenv("CHEAT_WIRE", "1")
    result = _run(tmp_path, MAJORITY)
    assert result.exit_code == 1
    assert "ProtocolViolation" in result.output and "game 1000000 is not the next game the referee scored" in result.output
    assert [g["phase"] for g in _games(tmp_path, MAJORITY)] == ["adapt"] * BUDGET  # kept; no evaluation after it
