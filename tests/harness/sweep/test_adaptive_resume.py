"""``arena tournament --adaptive`` with --batch/--jobs and --resume: the same games for any jobs, none lost or replayed."""

from __future__ import annotations

import json
import signal

import pytest

from harness.records.interrupts import StopRequest
from harness.sweep.adaptive import Standing, next_pairings
from harness.sweep.adaptive_run import AdaptiveSettings, run_adaptive_tournament
from harness.sweep.rating import Game
from harness.tournaments.plan import make_plan, round_robin
from harness.tournaments.resume import RunInterrupted
from harness.tournaments.tournament import read_games

AGENTS = ("random", "greedy", "minimax:depth=1")
SETTINGS = AdaptiveSettings(max_games=16, batch=4)


def _plan():
    return make_plan(round_robin(AGENTS), [5, 12], 4, 3, referee=False)


def _games(run_dir):
    lines = read_games(run_dir)
    keys = [(line.env_id, line.pairing, line.game) for line in lines]
    assert len(keys) == len(set(keys)), "a game recorded twice"
    return {key: line.moves for key, line in zip(keys, lines)}


def _decision(run_dir):
    return json.loads((run_dir / "adaptive.json").read_text())


def test_a_batch_cycles_the_undecided_neighbours_widest_first() -> None:
    standing = Standing(("a", "b", "c"))
    # the warm-up round, then the widest undecided neighbour pair (no games yet: all as wide, the highest first)
    assert next_pairings(standing, 4) == [("a", "b"), ("a", "c"), ("b", "c"), ("a", "b")]
    for _ in range(40):
        standing = standing.record(Game("a", "b", 1.0)).record(Game("b", "c", 0.5)).record(Game("a", "c", 1.0))
    assert next_pairings(standing, 3) == [("b", "c")] * 3  # a > b decided: only b-c is left, every pick is it


def test_the_games_depend_on_the_batch_not_on_the_jobs(tmp_path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    first = run_adaptive_tournament(_plan(), one, SETTINGS, jobs=1)
    second = run_adaptive_tournament(_plan(), two, SETTINGS, jobs=2)
    assert first.outcome == second.outcome and first.outcome.games == 16
    assert _games(one) == _games(two)
    assert _decision(one) == _decision(two)  # the ratings and their bootstrap intervals too
    manifest = json.loads((two / "manifest.json").read_text())
    assert manifest["batch"] == 4 and manifest["jobs"] == 2 and manifest["status"] == "complete"


def test_an_interrupted_adaptive_tournament_resumes_to_the_uninterrupted_result(tmp_path) -> None:
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    run_adaptive_tournament(_plan(), whole, SETTINGS, jobs=1)
    stop = StopRequest(grace_s=None, say=lambda text: None)
    played: list[object] = []

    def interrupt_half_way(line: object) -> None:
        played.append(line)
        if len(played) == 7:  # mid-batch: the batch's other game does not start
            stop.signum = signal.SIGINT

    with pytest.raises(RunInterrupted):
        run_adaptive_tournament(_plan(), cut, SETTINGS, jobs=1, on_game=interrupt_half_way, stop=stop)
    assert json.loads((cut / "manifest.json").read_text())["status"] == "interrupted"
    text = (cut / "games.jsonl").read_text()
    assert len(text.splitlines()) == 7
    (cut / "games.jsonl").write_text(text[:-30])  # and the last line torn, as a kill leaves it: played again
    report = run_adaptive_tournament(_plan(), cut, jobs=1, resume=True)
    assert report.outcome.games == 16
    assert _games(cut) == _games(whole)  # every game once, each the uninterrupted run's
    assert _decision(cut) == _decision(whole)  # the same order, decision and ratings
    manifest = json.loads((cut / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["resumes"][0]["games_on_record"] == 6


def test_the_cli_resumes_an_adaptive_run_and_refuses_flags_that_would_change_it(tmp_path) -> None:
    from typer.testing import CliRunner

    from harness.cli.main import app

    out = tmp_path / "a"
    args = [
        "tournament",
        *(w for a in AGENTS for w in ("--agents", a)),
        "--envs",
        "5",
        "--games",
        "2",
        "--adaptive",
        "--max-games",
        "8",
        "--in-process",
        "--out",
        str(out),
    ]
    runner = CliRunner()
    assert runner.invoke(app, args).exit_code == 0
    lines = (out / "games.jsonl").read_text().splitlines(keepends=True)
    (out / "games.jsonl").write_text("".join(lines[:3]))
    (out / "adaptive.json").unlink()
    refused = runner.invoke(app, ["tournament", "--resume", str(out), "--games", "4"])
    assert refused.exit_code == 2 and "leave out --games" in refused.output
    resumed = runner.invoke(app, ["tournament", "--resume", str(out)])
    assert resumed.exit_code == 0, resumed.output
    assert "games to decision 8" in resumed.output and len(_games(out)) == 8
