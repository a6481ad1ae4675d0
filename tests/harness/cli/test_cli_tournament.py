"""``arena agents``, ``arena match``, ``arena tournament`` and ``arena bench agents``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness.bench.agents import AgentBenchRow
from harness.cli import bench
from harness.registry import specs
from harness.registry.importing import PLUGINS_ENV
from harness.tournaments.results import PRIVILEGED_NOTE
from harness.tournaments.tournament import read_games


def test_agents_lists_the_registry(invoke):
    result = invoke("agents")
    assert result.exit_code == 0, result.output
    for name in ("random", "greedy"):
        assert re.search(rf"^\s*{name}\s+-\s+no\s+", result.output, re.MULTILINE), result.output
    assert re.search(r"^\s*mcts\s+n=100 \(int\).*\byes\b", result.output, re.MULTILINE), result.output


def test_match_prints_a_table_and_records_the_run(invoke, tmp_path):
    out = tmp_path / "run"
    result = invoke("match", "random", "greedy", "--env", "5", "--games", "4", "--jobs", "1", "--seed", "3", "--out", out)
    assert result.exit_code == 0, result.output
    assert re.search(r"random\s+greedy\s+overall\s+4\s+\d+% \[\d+-\d+\] \(\d\)", result.output), result.output
    assert re.search(r"A black\s+2\s+", result.output) and re.search(r"A white\s+2\s+", result.output)
    assert "Wilson 95% interval" in result.output and "Per environment" not in result.output
    assert len(read_games(out)) == 4
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["kind"] == "match" and manifest["command"].startswith("arena match random greedy --env 5")
    assert (out / "results.md").exists() and (out / "results.json").exists()


def test_tournament_round_robin_tables(invoke, tmp_path):
    out = tmp_path / "rr"
    result = invoke("tournament", "--agents", "random,greedy,corner", "--envs", "0,5", "--games", "2", "--jobs", "1", "--out", out)
    assert result.exit_code == 0, result.output
    assert "Per environment" in result.output and "Over all 2 envs" in result.output
    for env in ("0", "5"):
        assert re.search(rf"^\s*{env}\s+random\s+greedy\s+2\s+", result.output, re.MULTILINE), result.output
    assert re.search(r"greedy\s+corner\s+overall\s+4\s+", result.output), result.output
    assert re.search(r"\d-\d-\d, win \d+% \[\d+-\d+\]", result.output), result.output
    assert len(read_games(out)) == 3 * 2 * 2


def test_tournament_versus(invoke, tmp_path):
    out = tmp_path / "vs"
    result = invoke("tournament", "--agents", "greedy,corner", "--vs", "random", "--envs", "5", "--games", "2", "--jobs", "1", "--out", out)
    assert result.exit_code == 0, result.output
    pairs = {(line.agent_a, line.agent_b) for line in read_games(out)}
    assert pairs == {("greedy", "random"), ("corner", "random")}


def test_privileged_agents_are_marked(invoke, tmp_path):
    result = invoke("match", "mcts:n=4", "random", "--env", "0", "--games", "2", "--jobs", "1", "--out", tmp_path / "p")
    assert result.exit_code == 0, result.output
    assert "mcts:n=4*" in result.output
    assert f"* {PRIVILEGED_NOTE}" in result.output


@pytest.mark.parametrize(
    "args, fragments",
    [
        (["match", "nonesuch", "random", "--env", "0"], ["unknown agent 'nonesuch'", "valid agents:", "random"]),
        (["match", "random:depth=3", "greedy", "--env", "0"], ["no parameter 'depth=3'", "valid parameters"]),
        (["match", "random", "greedy"], ["--env ID"]),
        (["match", "random", "greedy", "--env", "56"], ["unknown environment id 56"]),
        (["match", "random", "greedy", "--env", "0", "--games", "0"], ["--games must be 1 or more"]),
        (["match", "random", "greedy", "--env", "0", "--jobs", "0"], ["--jobs must be 1 or more"]),
        (["match", "random", "greedy", "--env", "0", "--seed", "-1"], ["--seed must be 0 or more"]),
        (["tournament", "--agents", "random,bogus", "--envs", "0"], ["unknown agent 'bogus'", "greedy"]),
        (["tournament", "--agents", "random", "--envs", "0"], ["at least two agents"]),
        (["tournament", "--agents", "random,greedy,random", "--envs", "0"], ["listed twice"]),
        (["tournament", "--agents", "random,greedy", "--envs", "0", "--vs", "x"], ["unknown agent 'x'"]),
        (["tournament", "--agents", "random,greedy"], ["--envs"]),
        (["tournament", "--envs", "0"], ["--agents"]),
        (["tournament", "--agents", "random,,greedy", "--envs", "0"], ["empty item"]),
        (["tournament", "--agents", "random,greedy", "--envs", "3-1"], ["runs backwards"]),
    ],
)
def test_bad_input_writes_nothing(invoke, user_error, tmp_path, monkeypatch, args, fragments):
    monkeypatch.chdir(tmp_path)
    user_error(invoke(*args, "--out", tmp_path / "out"), *fragments)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("spec, fragment", [("mcts:n=abc", "not a valid int"), ("mcts:n=0", "mcts:n=0")])
def test_bad_parameter_values(invoke, user_error, tmp_path, monkeypatch, spec, fragment):
    monkeypatch.chdir(tmp_path)
    user_error(invoke("match", spec, "random", "--env", "0"), fragment)
    assert list(tmp_path.iterdir()) == []


def test_a_used_out_directory_is_refused(invoke, user_error, tmp_path):
    (tmp_path / "keep.txt").write_text("mine")
    user_error(invoke("match", "random", "greedy", "--env", "0", "--out", tmp_path), "not empty")
    assert [path.name for path in tmp_path.iterdir()] == ["keep.txt"]


def test_default_run_directory_under_runs(invoke, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = invoke("match", "random", "greedy", "--env", "0", "--games", "1", "--jobs", "1")
    assert result.exit_code == 0, result.output
    (run_dir,) = (tmp_path / "runs").iterdir()
    assert re.fullmatch(r"\d{8}-\d{6}-match-random-vs-greedy-env0", run_dir.name)
    assert len(read_games(run_dir)) == 1


def test_bench_agents_table(invoke, monkeypatch):
    rows = [
        AgentBenchRow("minimax:depth=5", "vs random, 1 full games", "ms/move", (0.010, 0.012), 0.020, "mean"),
        AgentBenchRow("mcts:n=100", "vs random, 1 full games", "ms/move", (0.030,), 0.015, "mean"),
        AgentBenchRow("endgame solver", "1 random positions, 14 empties", "s/position", (), 1.0, "max", "not built"),
    ]
    monkeypatch.setattr(bench, "bench_agents", lambda games, seed, on_done=None: rows)
    result = invoke("bench", "agents", "--games", "1")
    assert result.exit_code == 1, result.output  # the mcts row failed its target
    assert re.search(r"minimax:depth=5 .*11\.00 ms .*mean < 20 ms .*pass", result.output), result.output
    assert re.search(r"mcts:n=100 .*30\.00 ms .*FAIL", result.output), result.output
    assert re.search(r"endgame solver .*n/a: not built", result.output), result.output


def test_bench_agents_rejects_bad_numbers(invoke, user_error):
    user_error(invoke("bench", "agents", "--games", "0"), "--games must be 1 or more")
    user_error(invoke("bench", "agents", "--seed", "-1"), "--seed must be 0 or more")


def test_agents_lists_model_driven_agents_and_a_tournament_refuses_one_without_its_model(invoke, tmp_path):
    listing = invoke("agents")
    assert re.search(r"^\s*llm-policy\s+model=.*\bno\s+yes\s+", listing.output, re.MULTILINE), listing.output
    assert re.search(r"^\s*random\s+-\s+no\s+no\s+", listing.output, re.MULTILINE), listing.output
    result = invoke("tournament", "--agents", "random,llm-policy", "--envs", "0", "--games", "2", "--out", tmp_path / "t")
    assert result.exit_code == 2 and "name its model in the spec (llm-policy:model=" in result.output, result.output
    assert not (tmp_path / "t").exists()


CHEATERS_PLUGIN = Path(__file__).parents[1] / "referee" / "tournament_cheaters.py"


@pytest.fixture
def plugins_restored(monkeypatch):
    """Start from the registry a new process has and leave no plugin agent behind (`arena agents` lists them)."""
    for name, empty in (("_REGISTRY", {}), ("_ORIGINS", {}), ("_collected", []), ("_installed", [])):
        monkeypatch.setattr(specs, name, empty)
    monkeypatch.setenv(PLUGINS_ENV, "")  # --plugin sets it for the processes the command starts


def test_the_manifest_records_the_referee_and_in_process_is_marked_unenforced(invoke, tmp_path):
    result = invoke("match", "random", "greedy", "--env", "5", "--games", "2", "--jobs", "1", "--out", tmp_path / "r")
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "r" / "manifest.json").read_text())["referee"].startswith("process:")
    assert "UNENFORCED" not in result.output
    result = invoke(
        "tournament", "--agents", "random,greedy", "--envs", "5", "--games", "2", "--jobs", "1", "--in-process", "--out", tmp_path / "i"
    )
    assert result.exit_code == 0, result.output
    assert "UNENFORCED" in result.output
    manifest = json.loads((tmp_path / "i" / "manifest.json").read_text())
    assert "UNENFORCED" in manifest["referee"] and manifest["command"].endswith(f"--in-process --jobs 1 --out {tmp_path / 'i'}")
    assert "UNENFORCED" in (tmp_path / "i" / "results.md").read_text()


def test_a_crashing_agent_process_stops_the_run_with_one_error_naming_the_game_and_the_agent(invoke, plugins_restored, tmp_path):
    out = tmp_path / "crash"
    result = invoke(
        "match", "crash", "random", "--env", "7", "--games", "3", "--jobs", "1", "--seed", "1", "--plugin", CHEATERS_PLUGIN, "--out", out
    )
    assert result.exit_code == 1, result.output
    assert (
        "a game failed, the run stopped: env 7, crash vs random, game 1: AgentFailed: agent 'crash' (A, white): "
        "its player process exited with code 3"
    ) in " ".join(result.output.split()), result.output
    assert "Traceback" not in result.output
    assert [line.game for line in read_games(out)] == [0]  # the game before it is kept
    assert json.loads((out / "manifest.json").read_text())["status"] == "failed"


def test_an_agent_that_cannot_be_built_in_its_player_process_is_a_user_error(invoke, user_error, tmp_path):
    user_error(
        invoke("match", "minimax:depth=0", "random", "--env", "0", "--jobs", "1", "--out", tmp_path / "x"),
        "minimax depth=0: give a whole number >= 1",
    )
    assert not (tmp_path / "x").exists()
