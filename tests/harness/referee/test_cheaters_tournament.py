"""A cheater in ``arena tournament`` and ``arena match``: under the referee it cannot tell K = 1.01 from K = -0.01.

``cheat-play`` (``tournament_cheaters.py``, a plugin) looks for K from its constructor
and from ``act()``: the call stack, every live object, its context and observation,
the command line, strings naming a condition. It plays on env 0 and on env 7 (the
same layout; K differs). Under the referee it is built and asked for its moves in a
player process that never receives K, the environment id or its name: what it
finds must hold no Condition and be identical on both environments. With
``--in-process`` (kept for quick experiments, marked UNENFORCED) the same probe
does find the Condition, which shows the probe works.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli.main import app
from harness.registry import specs
from harness.registry.importing import PLUGINS_ENV

pytestmark = pytest.mark.long  # end-to-end: collected first (tests/conftest.py)

PLUGIN = Path(__file__).with_name("tournament_cheaters.py")
MAJORITY, MINORITY = 0, 7  # Standard 8x8 with K = 1.01 and with K = -0.01, no turn limit
WIDE = {"COLUMNS": "200", "NO_COLOR": "1"}

COMMANDS = {
    "match": ["match", "cheat-play", "greedy", "--env", "{env}", "--games", "2", "--jobs", "1"],
    "tournament": [
        "tournament",
        "--agents",
        "cheat-play,random",
        "--vs",
        "greedy,mcts:n=4",
        "--envs",
        "{env}",
        "--games",
        "2",
        "--jobs",
        "2",
    ],
}


@pytest.fixture(autouse=True)
def _fresh_registry(monkeypatch):
    """Start from the registry a new process has and leave no plugin agent behind (other tests list the agents)."""
    for name, empty in (("_REGISTRY", {}), ("_ORIGINS", {}), ("_collected", []), ("_installed", [])):
        monkeypatch.setattr(specs, name, empty)
    monkeypatch.setenv(PLUGINS_ENV, "")  # --plugin sets it for the processes the command starts


def _findings(command: str, env: int, tmp_path: Path, monkeypatch, *extra: str) -> list[dict]:
    """Run the command on ``env`` with the plugin; every report the cheater wrote, as JSON objects."""
    reports = tmp_path / f"reports-{command}-{env}{''.join(extra)}"
    reports.mkdir()
    reports.chmod(0o1777)  # player processes behind the walls write as uids of their own
    monkeypatch.setenv("CHEAT_REPORT", str(reports))  # inherited by the processes the command starts
    monkeypatch.setenv("ARENA_AGENT_WRITABLE", str(reports))  # bound writable into their sandboxes
    args = [word.format(env=env) for word in COMMANDS[command]]
    out = tmp_path / f"run-{command}-{env}{''.join(extra)}"
    result = CliRunner().invoke(app, [*args, "--plugin", str(PLUGIN), "--out", str(out), *extra], env=WIDE)
    assert result.exit_code == 0, result.output
    found = [json.loads(path.read_text()) for path in sorted(reports.glob("cheat-play-*.json"))]
    assert found, "the cheater wrote no report"
    return found


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_under_the_referee_the_cheater_cannot_tell_the_two_conditions_apart(command, tmp_path, monkeypatch):
    seen = {}
    for env in (MAJORITY, MINORITY):
        found = _findings(command, env, tmp_path, monkeypatch)
        for findings in found:
            assert findings["grant"] == "none" and findings["argv"] == []
            assert findings["context"] == [] and findings["observation"] == []
            assert findings["stack_in_init"] == [] and findings["stack_in_act"] == ["nothing"]
            assert findings["gc_in_init"] == [] and findings["gc_in_act"] == []
            assert findings["names_in_init"] == [] and findings["names_in_act"] == []
            assert len(findings["table_candidates"]) > 1  # the public table narrows K to the layout's conditions only
            assert "Condition" not in json.dumps(findings) and "Majority" not in json.dumps(findings)
        seen[env] = {json.dumps(findings, sort_keys=True) for findings in found}
    assert seen[MAJORITY] == seen[MINORITY]  # K = 1.01 or K = -0.01: the cheater cannot tell which


def test_in_process_the_same_cheater_reaches_k_and_the_run_says_unenforced(tmp_path, monkeypatch):
    """Why the player processes exist: in-process, the stack walk from act() finds the game loop's condition."""
    found = _findings("match", MAJORITY, tmp_path, monkeypatch, "--in-process")
    assert all(any("Condition" in item for item in f["stack_in_act"]) for f in found)
    assert all(f["gc_in_act"] for f in found)
    manifest = json.loads((tmp_path / f"run-match-{MAJORITY}--in-process" / "manifest.json").read_text())
    assert manifest["referee"].startswith("in-process (UNENFORCED") and "--in-process" in manifest["command"]
    results = json.loads((tmp_path / f"run-match-{MAJORITY}--in-process" / "results.json").read_text())
    assert results["enforced"] is False and any("UNENFORCED" in note for note in results["notes"])
