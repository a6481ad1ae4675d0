"""``--plugin FILE``: a user's own agent, in a file outside the project, in match, tournament, bench paper and agents."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.registry import specs
from harness.registry.importing import PLUGINS_ENV
from tests.harness.cli.cli_args import options

AGENT_FILE = '''"""A user's agent outside the project: the first (or last) legal move; it adapts by playing two games."""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.base import Agent, AgentContext
from agents.spec import Param, register
from engine.protocol.observation import Observation


class EdgeMoveAgent(Agent):
    """Plays the first or the last of the legal moves."""

    def __init__(self, context: AgentContext, rng: np.random.Generator, last: bool = False) -> None:
        super().__init__(context, rng)
        self.last = last

    def act(self, observation: Observation) -> int:
        return observation.legal_moves[-1 if self.last else 0]

    def adapt(self, arena: Any) -> None:
        for _ in range(2):
            arena.play(self, self)


@register("edge-move", "the first or last legal move", params={"last": Param(bool, False, "the last one instead")})
def edge_move(context: AgentContext, rng: np.random.Generator, last: bool = False) -> Agent:
    return EdgeMoveAgent(context, rng, last)
'''


@pytest.fixture(autouse=True)
def fresh_registry(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """Each test starts from the registry a new process has, and leaves no plugin behind."""
    for name, empty in (("_REGISTRY", {}), ("_ORIGINS", {}), ("_collected", []), ("_installed", [])):
        monkeypatch.setattr(specs, name, empty)
    monkeypatch.setenv(PLUGINS_ENV, "")
    yield
    for name, module in list(sys.modules.items()):
        if str(getattr(module, "__file__", None) or "").startswith(str(tmp_path)):
            del sys.modules[name]


@pytest.fixture
def agent_file(tmp_path: Path) -> Path:
    path = tmp_path / "plugins" / "edge_move.py"
    path.parent.mkdir()
    path.write_text(AGENT_FILE, encoding="utf-8")
    return path


def test_match_plays_the_plugin_agent_and_records_where_it_came_from(invoke, agent_file, tmp_path, monkeypatch):
    monkeypatch.chdir(agent_file.parent)
    out = tmp_path / "match"
    result = invoke(
        "match", "edge-move:last=true", "greedy", "--env", "0", "--games", "2", "--jobs", "1", "--plugin", agent_file.name, "--out", out
    )
    assert result.exit_code == 0, result.output
    games = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    assert len(games) == 2 and all(game["agent_a"] == "edge-move:last=true" for game in games), games[0]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["plugins"] == {"edge-move": str(agent_file)}
    assert f"--plugin {agent_file}" in manifest["command"]  # the absolute path: the command works from anywhere


def test_without_the_plugin_the_agent_is_unknown(invoke, user_error, tmp_path):
    user_error(invoke("match", "edge-move", "greedy", "--env", "0", "--out", tmp_path / "x"), "unknown agent 'edge-move'")


def test_tournament_workers_load_the_plugin(invoke, agent_file, tmp_path):
    out = tmp_path / "tournament"
    result = invoke(
        "tournament", *options(agents="edge-move,edge-move:last=true,random", envs="0,4", games="2", jobs="2", plugin=agent_file, out=out)
    )
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["workers"] == 2 and manifest["status"] == "complete" and manifest["games_played"] == 12
    assert manifest["plugins"] == {"edge-move": str(agent_file)}


def test_bench_paper_quick_adapts_and_evaluates_the_plugin_agent_in_workers(invoke, bench_paper_ok, agent_file, tmp_path):
    out = tmp_path / "bench"
    result = invoke(
        "bench",
        "paper",
        "--quick",
        "--envs",
        "5,12",
        "--games",
        "2",
        "--checkpoint-games",
        "2",
        "--agents",
        "edge-move",
        "--plugin",
        agent_file,
        "--jobs",
        "2",
        "--out",
        out,
    )
    bench_paper_ok(result, out)
    assert "Per environment: edge-move" in result.output
    lines = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert sorted((line["env_id"], line["agent"], line["status"], line["games_used"]) for line in lines) == [
        (5, "edge-move", "ok", 2),
        (12, "edge-move", "ok", 2),
    ]
    assert f"--plugin {agent_file}" in json.loads((out / "manifest.json").read_text())["command"]


def test_agents_lists_the_plugin_agent_with_its_source(invoke, agent_file):
    result = invoke("agents", "--plugin", agent_file)
    assert result.exit_code == 0, result.output
    assert "edge-move" in result.output and "last=false (bool)" in result.output
    cells = "".join(line.strip() for line in result.output.splitlines() if line.startswith(" " * 40))
    assert f"(plugin:{agent_file})" in cells  # the path is folded over the lines of its cell


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        (None, ["plugin file", "does not exist"]),
        ("def broken(:\n", ["plugin file", "failed to import: SyntaxError"]),
        (
            "from agents.spec import register\n@register('greedy', 'mine')\ndef mine(context, rng):\n    pass\n",
            ["agent name 'greedy'", "is taken by 'agents.heuristic.simple': choose another name"],
        ),
    ],
)
def test_a_bad_plugin_is_one_error_line_naming_it(invoke, user_error, tmp_path, text, fragments):
    path = tmp_path / "bad_plugin.py"
    if text is not None:
        path.write_text(text, encoding="utf-8")
    for command in (
        ["match", "random", "greedy", "--env", "0"],
        ["tournament", "--agents", "random,greedy", "--envs", "0"],
        ["bench", "paper", "--quick"],
        ["agents"],
    ):
        result = (
            invoke(*command, "--plugin", path, "--out", tmp_path / "out") if command[0] != "agents" else invoke(*command, "--plugin", path)
        )
        user_error(result, str(path), *fragments)
    assert not (tmp_path / "out").exists()


def test_a_broken_installed_plugin_is_one_error_line_naming_its_entry_point(invoke, user_error, tmp_path, monkeypatch):
    info = tmp_path / "broken_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugin\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[othello_arena.agents]\nbroken = cli_broken_agents\n", encoding="utf-8")
    (tmp_path / "cli_broken_agents.py").write_text("raise RuntimeError('boom')\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    user_error(
        invoke("agents"),
        "entry point othello_arena.agents:broken=cli_broken_agents (an installed plugin) "
        "failed to load: RuntimeError: boom; fix or uninstall the package that declares it",
    )


def test_arena_run_plays_its_evaluation_against_a_plugin_opponent(invoke, agent_file, tmp_path):
    result = invoke(
        "run",
        "--model",
        "mock/first-legal",
        "--env",
        "14",
        "--budget",
        "2",
        "--eval-games",
        "2",
        "--opponents",
        "edge-move:last=true",
        "--plugin",
        str(agent_file),
        "--out",
        tmp_path / "runs",
    )
    assert result.exit_code == 0, result.output
    run_dir = next((tmp_path / "runs").iterdir())
    games = [json.loads(line) for line in (run_dir / "games.jsonl").read_text().splitlines()]
    assert [g["opponent"] for g in games if g["phase"] == "eval"] == ["edge-move:last=true"] * 2


def test_arena_run_without_the_plugin_does_not_know_the_opponent(invoke, tmp_path):
    result = invoke(
        "run", "--model", "mock/first-legal", "--env", "14", "--budget", "2", "--opponents", "edge-move", "--out", tmp_path / "runs"
    )
    assert result.exit_code != 0 and "edge-move" in result.output
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
