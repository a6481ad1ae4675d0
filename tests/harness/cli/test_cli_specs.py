"""One agent-spec grammar for every command: one spec per flag, the flag repeats, commas inside a spec never split it."""

from __future__ import annotations

import json
import shlex

import pytest
import typer

from harness.cli import bench_paper
from harness.cli.options import parse_specs
from harness.tournaments.tournament import read_games
from tests.harness.cli.cli_args import options

MCTS = "mcts:n=5,c=1.0"  # a spec whose parameters hold a comma


@pytest.mark.parametrize(
    ("values", "specs"),
    [
        ("mcts:n=30,c=1.0", ["mcts:n=30,c=1.0"]),
        (["random", "mcts:n=30,c=1.0"], ["random", "mcts:n=30,c=1.0"]),
        (["mcts:n=30,c=1.0", "minimax:depth=2"], ["mcts:n=30,c=1.0", "minimax:depth=2"]),
        ("random, greedy", ["random", "greedy"]),  # several specs in one value, where that is unambiguous
        ("minimax:depth=5,random,mcts:n=30,c=1.0,greedy", ["minimax:depth=5", "random", "mcts:n=30,c=1.0", "greedy"]),
        ("mcts:n=30,c=1.0;random", ["mcts:n=30,c=1.0", "random"]),  # ';' separates specs, commas then never do
        (["random", "random"], ["random", "random"]),
    ],
)
def test_parse_specs(values, specs):
    assert parse_specs(values, "--opponents") == specs


@pytest.mark.parametrize(
    ("values", "fragments"),
    [
        ("mcts:n=30,x=1", ["--opponents 'mcts:n=30,x=1'", "no parameter 'x=1'", "valid parameters"]),
        (["random", "mcts:n=abc"], ["--opponents 'mcts:n=abc'", "n='abc' is not a valid int"]),
        ("nosuch", ["--opponents 'nosuch'", "unknown agent 'nosuch'"]),
        ("n=30", ["--opponents 'n=30'", "parameter 'n=30' has no agent"]),
        ("random,,greedy", ["--opponents 'random,,greedy'", "empty item"]),
        ([], ["--opponents: no agent specs"]),
    ],
)
def test_bad_specs_name_the_option_the_spec_and_the_parameter(values, fragments):
    with pytest.raises(typer.BadParameter) as raised:
        parse_specs(values, "--opponents")
    for fragment in fragments:
        assert fragment in raised.value.message


def test_run_takes_repeated_opponents_with_commas_in_a_spec(invoke, tmp_path):
    result = invoke(
        "run",
        *options(
            model="mock/first-legal",
            env="21",
            budget="1",
            eval_games="1",
            checkpoints="1",
            opponents=["random", MCTS],
            in_process=True,
            out=tmp_path,
        ),
    )
    assert result.exit_code == 0, result.output
    (run_dir,) = tmp_path.iterdir()
    assert json.loads((run_dir / "manifest.json").read_text())["config"]["opponents"] == ["random", MCTS]


def test_run_reads_one_opponent_with_commas_as_one_spec(invoke, user_error, tmp_path):
    result = invoke("run", "--model", "mock/first-legal", "--env", "21", "--opponents", "mcts:n=30,c=1.0,x=2", "--out", tmp_path)
    user_error(result, "--opponents 'mcts:n=30,c=1.0,x=2'", "no parameter 'x=2'")
    assert list(tmp_path.iterdir()) == []


def test_match_takes_a_spec_with_commas(invoke, tmp_path):
    out = tmp_path / "m"
    result = invoke("match", MCTS, "random", "--env", "21", "--games", "1", "--jobs", "1", "--in-process", "--out", out)
    assert result.exit_code == 0, result.output
    (game,) = read_games(out)
    assert MCTS in (game.black, game.white) or MCTS in json.dumps(json.loads((out / "results.json").read_text()))


def test_match_errors_name_the_spec_and_the_parameter(invoke, user_error, tmp_path):
    user_error(invoke("match", "random", "mcts:n=5,x=1", "--env", "21", "--out", tmp_path / "m"), "B 'mcts:n=5,x=1'", "no parameter 'x=1'")
    assert not (tmp_path / "m").exists()


def test_tournament_takes_repeated_agents_and_vs(invoke, tmp_path):
    out = tmp_path / "t"
    result = invoke(
        "tournament",
        *options(agents=["random", MCTS], vs=["greedy", "minimax:depth=1"], envs="21", games="1", jobs="1", in_process=True, out=out),
    )
    assert result.exit_code == 0, result.output
    results = json.loads((out / "results.json").read_text())
    assert sorted(results["agents"]) == sorted(["random", MCTS, "greedy", "minimax:depth=1"])
    assert {(row["agent_a"], row["agent_b"]) for row in results["over_envs"]} == {
        (a, b) for a in ("random", MCTS) for b in ("greedy", "minimax:depth=1")
    }
    command = shlex.split(json.loads((out / "manifest.json").read_text())["command"])
    assert command[:6] == ["arena", "tournament", "--agents", "random", "--agents", MCTS]  # reproduces the run


def test_tournament_keeps_the_comma_list_of_before(invoke, tmp_path):
    out = tmp_path / "t"
    result = invoke("tournament", "--agents", f"random,{MCTS}", "--envs", "21", "--games", "1", "--jobs", "1", "--in-process", "--out", out)
    assert result.exit_code == 0, result.output
    assert json.loads((out / "results.json").read_text())["agents"] == ["random", MCTS]


def test_tournament_errors_name_the_option_and_the_spec(invoke, user_error, tmp_path):
    user_error(
        invoke("tournament", "--agents", "random", "--vs", "mcts:n=5,q=1", "--envs", "21", "--out", tmp_path / "t"),
        "--vs 'mcts:n=5,q=1'",
        "no parameter 'q=1'",
    )


def test_bench_paper_takes_repeated_agents_with_commas(invoke, tmp_path, monkeypatch):
    seen = {}

    def stop(plan, run_dir, jobs, command, **kwargs):
        seen["agents"], seen["command"] = list(plan.agents), command
        raise typer.Exit(0)

    monkeypatch.setattr(bench_paper, "run_bench_paper", stop)
    spec = "adaptive-minimax:population=4,generations=1"
    result = invoke("bench", "paper", *options(envs="0", agents=["minimax:depth=1", spec], jobs="1", out=tmp_path / "b"))
    assert result.exit_code == 0, result.output
    assert seen["agents"] == ["minimax:depth=1", spec]
    assert "--agents minimax:depth=1 --agents adaptive-minimax:population=4,generations=1" in seen["command"]


def test_bench_paper_agent_errors_name_the_spec_and_the_parameter(invoke, user_error, tmp_path):
    user_error(
        invoke("bench", "paper", "--envs", "0", "--agents", "adaptive-minimax:population=4,nope=1", "--out", tmp_path / "b"),
        "--agents 'adaptive-minimax:population=4,nope=1'",
        "no parameter 'nope=1'",
    )
    assert not (tmp_path / "b").exists()


def test_bench_paper_takes_repeated_opponents_with_commas_instead_of_the_papers(invoke, tmp_path, monkeypatch):
    seen = {}

    def stop(plan, run_dir, jobs, command, **kwargs):
        seen["opponents"], seen["command"] = [(o.label, o.spec, o.privileged) for o in plan.opponents], command
        raise typer.Exit(0)

    monkeypatch.setattr(bench_paper, "run_bench_paper", stop)
    result = invoke(
        "bench",
        "paper",
        *options(envs="0", agents="interval", opponents=["random", "mcts:n=100,c=1.0", "minimax:depth=1"], jobs="1", out=tmp_path / "b"),
    )
    assert result.exit_code == 0, result.output
    assert [label for label, _, _ in seen["opponents"]] == ["Random", "MCTS-100", "minimax:depth=1"]
    assert [privileged for _, _, privileged in seen["opponents"]] == [False, True, False]
    assert "--opponents random --opponents mcts:n=100,c=1.0 --opponents minimax:depth=1" in seen["command"]


def test_bench_paper_opponent_errors_name_the_spec_and_the_parameter(invoke, user_error, tmp_path):
    user_error(
        invoke("bench", "paper", "--envs", "0", "--agents", "interval", "--opponents", "mcts:n=30,nope=1", "--out", tmp_path / "b"),
        "--opponents 'mcts:n=30,nope=1'",
        "no parameter 'nope=1'",
    )
    user_error(
        invoke("bench", "paper", *options(envs="0", agents="interval", opponents=["random", "random"], out=tmp_path / "b")),
        "--opponents: 'random' is listed twice",
    )
    assert not (tmp_path / "b").exists()
