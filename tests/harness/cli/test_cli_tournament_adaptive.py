"""``arena tournament --adaptive``: the adaptive schedule on real games, its caps, and its games as the fixed tournament's."""

from __future__ import annotations

import json

from harness.tournaments.tournament import read_games


def test_adaptive_tournament_stops_at_the_game_cap_and_plays_the_fixed_schedules_games(invoke, tmp_path):
    out, fixed = tmp_path / "adaptive", tmp_path / "fixed"
    args = ("--agents", "random", "--agents", "greedy", "--agents", "minimax:depth=1", "--envs", "5,12", "--seed", "4", "--in-process")
    result = invoke("tournament", *args, "--adaptive", "--max-games", "14", "--games", "4", "--out", out)
    assert result.exit_code == 0, result.output
    assert "games to decision 14 (fixed round robin: 24)" in result.output, result.output
    assert "NOT decided (stopped by the game cap)" in result.output
    decision = json.loads((out / "adaptive.json").read_text())
    assert decision["games"] == 14 and decision["stopped_by"] == "game cap" and decision["fixed_schedule"]["games"] == 24
    lines = read_games(out)
    assert len(lines) == 14 and {line.env_id for line in lines} == {5, 12}  # pairs of games, the environments in turn
    assert invoke("tournament", *args, "--games", "4", "--jobs", "1", "--out", fixed).exit_code == 0
    same = {(line.env_id, line.pairing, line.game): line.moves for line in read_games(fixed)}
    shared = [line for line in lines if (line.env_id, line.pairing, line.game) in same]  # adaptive may play a pair more
    assert len(shared) >= 6  # at least the warm-up round: 2 games a pairing
    for line in shared:  # each is the fixed tournament's game of that env, pairing and index
        assert same[(line.env_id, line.pairing, line.game)] == line.moves
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["schedule"] == "adaptive" and manifest["status"] == "complete"


def test_adaptive_refuses_vs_and_a_bad_alpha(invoke, user_error, tmp_path):
    base = ("tournament", "--agents", "random", "--agents", "greedy", "--envs", "5", "--adaptive", "--out", tmp_path / "x")
    user_error(invoke(*base, "--vs", "random"), "--adaptive", "--vs")
    user_error(invoke(*base, "--alpha", "1.5"), "--alpha")
    user_error(invoke(*base, "--resume", tmp_path), "cannot resume", "no manifest.json")
    assert not (tmp_path / "x").exists()
