"""Model agents as specs in ``arena match`` and ``arena tournament``: frozen players, every call in the run's calls.jsonl."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engine import make_env
from engine.state import PASS
from harness.cli.main import app

POLICY = "llm-policy:model=mock/flaky-first-legal,hint=none"
STRATEGIST = "llm-strategist:model=mock/reasoner,depth=1,endgame=4"
ENV = 3


def _lines(path: Path, drop: tuple[str, ...]) -> list[dict]:
    lines = [json.loads(text) for text in path.read_text().splitlines()]
    return [{k: v for k, v in line.items() if k not in drop} for line in lines]


def _decision_plies(moves: list[int], colour: int) -> list[int]:
    rules = make_env(ENV).rules
    state, plies = rules.initial_state(), []
    for ply, move in enumerate(moves):
        if state.to_move == colour and move != PASS:
            plies.append(ply)
        state = rules.play(state, move)
    return plies


@pytest.mark.long
def test_a_tournament_records_each_model_call_of_each_game_refereed_or_not(tmp_path):
    runs = {}
    for mode, extra in (("refereed", []), ("in-process", ["--in-process"])):
        runs[mode] = tmp_path / mode
        result = CliRunner().invoke(
            app,
            [
                "tournament",
                "--agents",
                f"{POLICY},greedy,{STRATEGIST}",
                "--envs",
                str(ENV),
                "--games",
                "2",
                "--jobs",
                "1",
                "--out",
                str(runs[mode]),
                *extra,
            ],
        )
        assert result.exit_code == 0, result.output
    refereed, in_process = runs["refereed"], runs["in-process"]
    assert _lines(refereed / "games.jsonl", ("seconds",)) == _lines(in_process / "games.jsonl", ("seconds",))
    assert _lines(refereed / "calls.jsonl", ("latency_s",)) == _lines(in_process / "calls.jsonl", ("latency_s",))
    games = {(g["pairing"], g["game"]): g for g in _lines(refereed / "games.jsonl", ())}
    calls = _lines(refereed / "calls.jsonl", ())
    assert [c["call_index"] for c in calls] == list(range(len(calls)))
    for (pairing, number), game in games.items():
        for side in ("a", "b"):
            spec = game[f"agent_{side}"]
            mine = [c for c in calls if (c["pairing"], c["game"], c["side"]) == (pairing, number, side)]
            assert all(c["agent"] == spec for c in mine)
            if spec == POLICY:  # one first attempt at every ply where it chose a move
                colour = 0 if game["black"] == spec else 1
                assert [c["ply"] for c in mine if c["attempt"] == 0] == _decision_plies(game["moves"], colour)
            elif spec == STRATEGIST:  # one strategy, written before its first move
                assert len(mine) == 1 and mine[0]["ply"] is None
            else:
                assert mine == []
    assert any(c["failure_kind"] for c in calls)  # the flaky mock's failures are on record too
    assert f"Model calls: {len(calls)} (every one in calls.jsonl)" in (refereed / "results.md").read_text()


def test_a_match_with_a_model_agent_and_a_tournament_without_one(tmp_path):
    result = CliRunner().invoke(
        app, ["match", POLICY, "random", "--env", str(ENV), "--games", "2", "--jobs", "1", "--out", str(tmp_path / "match")]
    )
    assert result.exit_code == 0, result.output
    assert len(_lines(tmp_path / "match" / "calls.jsonl", ())) >= 2 * 10
    result = CliRunner().invoke(
        app, ["match", "greedy", "random", "--env", str(ENV), "--games", "2", "--jobs", "1", "--out", str(tmp_path / "plain")]
    )
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "plain" / "calls.jsonl").exists()


def test_a_model_spec_without_its_key_stops_before_any_game(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = CliRunner().invoke(
        app, ["match", "llm-policy:model=openai/gpt-4o-mini", "random", "--env", str(ENV), "--games", "2", "--out", str(tmp_path / "m")]
    )
    assert result.exit_code != 0
    assert "OPENAI_API_KEY" in result.output
    assert not (tmp_path / "m" / "games.jsonl").exists()
