"""``arena train az`` (a tiny run, resume, bad settings) and the az agent's bad specs through the CLI."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from harness.cli.main import app
from tests.harness.cli.cli_args import options

TINY = [
    "--rounds",
    "1",
    "--games",
    "1",
    "--simulations",
    "2",
    "--steps",
    "1",
    "--batch",
    "4",
    "--channels",
    "8",
    "--blocks",
    "1",
    "--seconds",
    "0",
]


def invoke(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "200", "NO_COLOR": "1"})


def one_error_line(result, fragment: str) -> None:
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and fragment in result.output, result.output


def test_train_az_writes_a_checkpoint_and_the_network_and_resumes(tmp_path):
    result = invoke("train", "az", *TINY, "--out", tmp_path)
    assert result.exit_code == 0, result.output
    assert "round 1:" in result.output and (tmp_path / "az.pt").is_file() and (tmp_path / "checkpoint.pt").is_file()
    again = invoke("train", "az", *TINY[:-2], "--seconds", "0", "--rounds", "2", "--out", tmp_path, "--resume")
    assert again.exit_code == 0 and "round 2:" in again.output and "round 1:" not in again.output, again.output


@pytest.mark.parametrize(
    "args, fragment", [(["--games", "0"], "games=0"), (["--simulations", "-1"], "simulations=-1"), (["--resume"], "--resume needs --out")]
)
def test_bad_train_settings_exit_2_with_one_line(args, fragment):
    one_error_line(invoke("train", "az", "--rounds", "1", *args), fragment)


def test_bad_az_weights_are_one_line_in_a_match(tmp_path):
    result = invoke(
        "match",
        f"az:weights={tmp_path / 'none.pt'}",
        "random",
        *options(env="0", games="1", jobs="1", in_process=True, out=tmp_path / "run"),
    )
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert "no az weights" in result.output


def test_bench_az_resumes_from_its_results_file_and_bench_league_reports_the_record(tmp_path):
    results = tmp_path / "games.jsonl"
    first = invoke("bench", "az", "greedy", "--opponent", "random", "--boards", "check", "--games", 1, "--out", results)
    assert first.exit_code == 0 and "Standard 6x6" in first.output, first.output
    again = invoke("bench", "az", "greedy", "--opponent", "random", "--boards", "check", "--games", 2, "--out", results)
    assert again.exit_code == 0 and len(results.read_text().splitlines()) == 6, again.output
    one_error_line(invoke("bench", "az", "greedy", "--boards", "nine"), "--boards 'nine'")
    league = invoke("bench", "league", "greedy", "--games", 2)
    assert league.exit_code == 0 and "greedy: League score" in league.output and "over 4 games" in league.output


def test_az_and_ntuple_are_listed_and_serve_as_opponents_in_tournaments_and_bench_paper(tmp_path, monkeypatch):
    import typer

    from harness.cli import bench_paper

    listed = invoke("agents")
    assert listed.exit_code == 0 and " az " in listed.output and " ntuple " in listed.output, listed.output
    tournament = invoke(
        "tournament",
        *options(
            agents=["az:seconds=1,simulations=2", "ntuple"], vs="positional", envs=5, games=1, jobs=1, in_process=True, out=tmp_path / "t"
        ),
    )
    assert tournament.exit_code == 0 and "2 games: 1 per pairing" in tournament.output, tournament.output
    games = [json.loads(line) for line in (tmp_path / "t" / "games.jsonl").read_text().splitlines()]
    assert sorted(game["agent_a"] for game in games) == ["az:seconds=1.0,simulations=2", "ntuple"]
    seen = {}

    def stop(plan, run_dir, jobs, command, **kwargs):
        seen["opponents"] = [o.spec for o in plan.opponents]
        raise typer.Exit(0)

    monkeypatch.setattr(bench_paper, "run_bench_paper", stop)
    paper = invoke(
        "bench", "paper", *options(envs=0, agents="interval", opponents=["az:seconds=1", "ntuple:depth=2"], jobs=1, out=tmp_path / "b")
    )
    assert paper.exit_code == 0 and seen["opponents"] == ["az:seconds=1.0", "ntuple:depth=2"], paper.output
