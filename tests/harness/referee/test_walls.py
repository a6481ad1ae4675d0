"""The walls around agent processes, tried by a plugin written to get round them, in every command's default mode.

``walls_cheater.py`` plays as ``random`` and tries every route to K it knows
(command lines, environments, open files and working directories of every process
it can see, the run directory's salt and manifest, sealed suites, other processes'
memory, a live condition, the scoring, a simulator grant), in every process that
imports it. Each command runs as ``arena`` does from a shell (its own process:
the console script makes it a referee's process), with the run directory's path
marked so the cheater can recognise it. It must find nothing, and every command
must score exactly as the same command with ``random`` in its place (or without the
plugin, for ``arena run``, whose agent is a model agent).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.referee import walled_server, walls

CHEATER = Path(__file__).with_name("walls_cheater.py")
HONEST = Path(__file__).with_name("walls_honest.py")  # the same agent name, the same play, no attack
MARKER = "wallsmarker"  # walls_cheater.MARKER (not imported here: importing it is its attack)
ENV = "26"
walled = pytest.mark.skipif(walls.walls_problem() is not None, reason=f"no walls here: {walls.walls_problem()}")
pytestmark = [walled, pytest.mark.long]

COMMANDS = {
    "match": ["match", "{agent}", "greedy", "--env", ENV, "--games", "4", "--jobs", "1"],
    "tournament": ["tournament", "--agents", "{agent}", "--agents", "greedy", "--envs", ENV, "--games", "2", "--jobs", "1"],
    "bench paper": [
        "bench", "paper", "--agents", "{agent}", "--envs", ENV, "--budget", "4", "--games", "2",
        "--checkpoint-games", "2", "--opponents", "random", "--jobs", "1",
    ],
    "run": ["run", "--model", "mock/random-legal", "--env", ENV, "--budget", "4", "--eval-games", "2"],
}  # fmt: skip


def _arena(tmp_path: Path, words: list[str], out: Path, plugin: Path) -> subprocess.CompletedProcess[str]:
    arena = shutil.which("arena", path=os.path.dirname(sys.executable))
    assert arena is not None
    argv = [arena, *words, "--out", str(out), "--plugin", str(plugin)]
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("OTHELLO_ARENA", "ARENA_AGENT"))}
    return subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, env=environ, timeout=600)


def _scores(out: Path) -> list[tuple]:
    """What every game scored, without the agents' names: moves, discs, rewards (bench paper: each pair's outcomes)."""
    games: list[tuple] = []
    for path in sorted(out.rglob("results.jsonl")):
        for line in path.read_text().splitlines():
            pair = json.loads(line)
            games.append(("pair", pair["status"], pair["games_used"], json.dumps(pair["checkpoints"]), json.dumps(pair["final"])))
    for name in ("games.jsonl", "eval_games.jsonl", "adapt_games.jsonl"):
        for path in sorted(out.rglob(name)):
            for line in path.read_text().splitlines():
                game = json.loads(line)
                games.append((path.name, tuple(game.get("moves", ())), game.get("black_discs"), tuple(game.get("rewards", ()))))
    return games


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_the_cheater_learns_nothing_and_changes_no_score(command, tmp_path):
    words = [w.format(agent="walls-cheater") for w in COMMANDS[command]]
    cheat = _arena(tmp_path, words, tmp_path / f"{MARKER}-cheat", CHEATER)
    assert cheat.returncode == 0, cheat.stderr[-3000:]
    assert "WALLS-TRIED" in cheat.stderr  # it ran (in an agent process)
    leaks = [line for line in cheat.stderr.splitlines() if line.startswith("WALLS-LEAK")]
    assert leaks == []
    twin = _arena(tmp_path, words, tmp_path / f"{MARKER}-twin", HONEST)
    assert twin.returncode == 0, twin.stderr[-3000:]
    cheat_scores, twin_scores = _scores(tmp_path / f"{MARKER}-cheat"), _scores(tmp_path / f"{MARKER}-twin")
    assert cheat_scores and cheat_scores == twin_scores


def test_an_agent_process_sees_itself_its_server_and_nothing_else(tmp_path):
    secret = tmp_path / "run-dir"
    secret.mkdir()
    (secret / ".commitment_salt").write_text("salt")
    repository = Path(__file__).resolve().parents[3]
    hidden = (str(secret), "/etc/passwd", str(repository / "tests"), str(repository / "runs"), str(Path.home() / ".cache"))
    connection, process = walls.start_walled(walled_server.probe, (hidden,), network=False)
    facts = json.loads(connection.recv_bytes())
    process.join(30)
    assert process.exitcode == 0
    assert facts["pids"] == [1, 2, facts["pid"]]  # bubblewrap's init, the server, itself
    assert facts["uid"] >= 200_000 and facts["uid"] != os.getuid()
    assert facts["interfaces"] == ["lo"]  # no network
    assert not any(facts["visible"].values())  # no run directory, no /etc, nothing of the project but its packages
    assert set(facts["descriptors"]) <= {0, 1, 2, 3, max(facts["descriptors"])}  # stdio, its wire, the listing's own
    assert "OTHELLO_ARENA_REFEREE" not in facts["environ"] and facts["environ"]["HOME"] == "/tmp"


def test_a_model_agents_process_reaches_the_network_and_nothing_else(tmp_path):
    connection, process = walls.start_walled(walled_server.probe, ((str(tmp_path),),), network=True)
    facts = json.loads(connection.recv_bytes())
    process.join(30)
    assert len(facts["interfaces"]) > 1 and facts["pids"] == [1, 2, facts["pid"]] and not any(facts["visible"].values())


def test_without_the_walls_a_plugin_agent_is_refused_unless_the_user_says_so(tmp_path):
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("OTHELLO_ARENA", "ARENA_AGENT"))}
    environ["PATH"] = str(tmp_path)  # no bubblewrap on it: the walls cannot stand
    arena = shutil.which("arena", path=os.path.dirname(sys.executable))
    words = [str(arena), *COMMANDS["match"][:2], "greedy", *COMMANDS["match"][3:], "--plugin", str(HONEST)]
    words = [w.format(agent="walls-cheater") for w in words]
    refused = subprocess.run([*words, "--out", str(tmp_path / "refused")], capture_output=True, text=True, env=environ, timeout=300)
    assert refused.returncode != 0 and "--unsandboxed-agents" in refused.stderr and "Traceback" not in refused.stderr
    assert not (tmp_path / "refused").exists()
    out = tmp_path / "allowed"
    allowed = subprocess.run([*words, "--unsandboxed-agents", "--out", str(out)], capture_output=True, text=True, env=environ, timeout=300)
    assert allowed.returncode == 0, allowed.stderr[-2000:]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["agent_processes"]["mode"] == "UNENFORCED"
    assert "UNENFORCED: agents from plugins played outside the sandbox's walls" in (out / "results.md").read_text()
    assert json.loads((out / "results.json").read_text())["enforced"] is False
