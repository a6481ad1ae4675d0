"""Replay's decisions one by one, fast (the mutation group `replay`, docs/testing.md): no run is played here.

The engine side (`check_game`: every move legal, the end, the counts, who forfeited, the rewards)
on games built by hand from one recorded game; the report's texts; reading run directories
(`read_json`, `run_kind`, `llm_config`) and hand-written tournament directories.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest
from tiny_run import game_line, write_tournament

from engine import make_env
from harness.records.chain import Finding
from harness.records.transcript import TranscriptError
from harness.runs.replay import Mismatch, ReplayGame, ReplayReport, check_game, read_json, recorded_games, run_kind

ENV = make_env(21)  # Standard 8x8, K = 3/5
# A whole game of first-legal against itself on env 21 (no pass): black 40, white 24, a draw under K = 3/5.
MOVES = (20, 19, 10, 11, 2, 1, 0, 3, 4, 13, 12, 5, 6, 14, 17, 9, 16, 8, 18, 21, 15, 7, 22, 23, 29, 24, 32, 37, 42, 34, 26,
         33, 38, 43, 30, 25, 41, 31, 39, 40, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 56, 57, 58, 59, 60, 55, 61, 62, 63)


def counts_after(moves):
    state = ENV.rules.initial_state()
    for move in moves:
        state = ENV.rules.play(state, move)
    return ENV.rules.counts(state)


def check(moves=MOVES, black=40, white=24, rewards=(0, 0), forfeit_by=None, layout=None):
    """check_game's mismatches as (ply, message); each also names the game's phase, index, opponent and line."""
    game = ReplayGame(21, "eval", 4, "greedy", layout or ENV.layout.name, tuple(moves), black, white, rewards, forfeit_by, 9)
    found = check_game(ENV.rules, ENV.condition, game)
    assert all((m.phase, m.game_index, m.opponent, m.line) == ("eval", 4, "greedy", 9) for m in found)
    return [(m.ply, m.message) for m in found]


# ------------------------------------------------------------------------------ check_game


def test_the_recorded_game_checks_clean():
    assert counts_after(MOVES) == (40, 24) and ENV.rules.is_over(ENV.rules.play(ENV.rules.initial_state(), 20)) is False
    assert check() == []
    assert check(rewards=[0, 0]) == []  # rewards read from JSON as a list compare as a tuple


def test_another_layout_is_the_only_mismatch_named():
    assert check(layout="Other 8x8", black=1) == [(None, "layout 'Other 8x8' recorded, the env's is 'Standard 8x8'")]


def test_an_illegal_first_move_names_the_ply_the_colour_and_the_legal_moves():
    assert check(moves=(0, *MOVES[1:]), black=0) == [(0, "black played a1, not legal (legal: e3, f4, c5, d6)")]


def test_an_illegal_move_of_white_later_on():
    assert check(moves=(*MOVES[:3], 63, *MOVES[4:])) == [(3, "white played h8, not legal (legal: d2, f2, f3, f4, f5, f6)")]


def test_a_move_after_the_end_of_the_game():
    assert check(moves=(*MOVES, 0)) == [(60, "black played a1, not legal (legal: none (the game is over))")]


@pytest.mark.parametrize("black, white", [(41, 24), (40, 25), (24, 40), (39, 24)])
def test_each_colours_final_count_is_compared(black, white):
    found = check(black=black, white=white)
    assert found == [(None, f"final counts 40-24, recorded {black}-{white}")]


def test_a_game_that_is_not_over_without_a_forfeit():
    black, white = counts_after(MOVES[:7])
    rewards = ENV.condition.rewards(black, white)
    assert check(moves=MOVES[:7], black=black, white=white, rewards=rewards) == [
        (None, "the game is not over after 7 plies and no forfeit is recorded")]


@pytest.mark.parametrize("plies, forfeit_by, rewards", [(7, "white", (1, -1)), (6, "black", (-1, 1))])
def test_a_forfeit_by_the_colour_to_move_checks_clean(plies, forfeit_by, rewards):
    black, white = counts_after(MOVES[:plies])
    assert check(moves=MOVES[:plies], black=black, white=white, rewards=rewards, forfeit_by=forfeit_by) == []


def test_a_forfeit_by_the_colour_not_to_move():
    black, white = counts_after(MOVES[:7])
    assert check(moves=MOVES[:7], black=black, white=white, rewards=(-1, 1), forfeit_by="black") == [
        (None, "forfeit by black recorded, but white is to move")]


@pytest.mark.parametrize("forfeit_by, recorded, expected", [("white", (-1, 1), (1, -1)), ("black", (1, -1), (-1, 1))])
def test_a_forfeit_with_the_rewards_of_the_other_colour(forfeit_by, recorded, expected):
    plies = 7 if forfeit_by == "white" else 6
    black, white = counts_after(MOVES[:plies])
    assert check(moves=MOVES[:plies], black=black, white=white, rewards=recorded, forfeit_by=forfeit_by) == [
        (None, f"rewards {recorded} recorded, the condition gives {expected}")]


def test_wrong_counts_and_a_wrong_forfeit_are_both_reported():
    black, white = counts_after(MOVES[:7])
    assert check(moves=MOVES[:7], black=black, white=white + 1, rewards=(-1, 1), forfeit_by="black") == [
        (None, f"final counts {black}-{white}, recorded {black}-{white + 1}"),
        (None, "forfeit by black recorded, but white is to move")]


def test_a_forfeit_recorded_on_a_finished_game():
    assert check(rewards=(-1, 1), forfeit_by="black") == [(None, "forfeit by black recorded, but the game is over")]


def test_rewards_other_than_the_conditions():
    assert check(rewards=(1, -1)) == [(None, "rewards (1, -1) recorded, the condition gives (0, 0)")]


def test_every_end_mismatch_is_reported_in_order():
    black, white = counts_after(MOVES[:7])
    assert check(moves=MOVES[:7], black=black + 1, white=white, rewards=(1, 1)) == [
        (None, f"final counts {black}-{white}, recorded {black + 1}-{white}"),
        (None, "the game is not over after 7 plies and no forfeit is recorded"),
        (None, f"rewards (1, 1) recorded, the condition gives {tuple(ENV.condition.rewards(black, white))}"),
    ]


# ------------------------------------------------------------------------------ the report


def test_a_mismatch_describes_its_game_ply_and_line():
    assert Mismatch("adapt", 3, "self", 5, "bad move", 7).describe() == "adapt game 3 (self), ply 5: bad move [games.jsonl:7]"
    assert Mismatch("adapt", 3, "self", 0, "bad move", 7).describe() == "adapt game 3 (self), ply 0: bad move [games.jsonl:7]"
    assert Mismatch("eval", 0, "random", None, "x", 2).describe() == "eval game 0 (random), end: x [games.jsonl:2]"


def test_ok_needs_no_mismatch_and_no_finding():
    assert ReplayReport("llm").ok and ReplayReport("llm").games_checked == 0
    assert not ReplayReport("llm", mismatches=[Mismatch("adapt", 0, "self", None, "x", 1)]).ok
    assert not ReplayReport("llm", findings=[Finding("games.jsonl", 2, "x")]).ok
    assert ReplayReport("llm", games=Counter({("adapt", "self"): 2, ("eval", "random"): 3})).games_checked == 5


@pytest.mark.parametrize("report, lines", [
    pytest.param(ReplayReport("llm", games=Counter({("eval", "random"): 1, ("adapt", "self"): 2}), notes=["complete", "ok"]), [
        "records: intact (hash chains, seal, every game and call present)",
        "  complete",
        "  ok",
        "replayed 3 games (llm run): no mismatches",
        "  adapt      self                                2 games, 0 with mismatches",
        "  eval       random                              1 games, 0 with mismatches",
    ], id="an intact llm run"),
    pytest.param(ReplayReport("llm", games=Counter({("adapt", "self"): 2}), bad_games=Counter({("adapt", "self"): 1}),
                              mismatches=[Mismatch("adapt", 1, "self", None, "x", 2), Mismatch("adapt", 1, "self", 4, "y", 2)],
                              findings=[Finding("games.jsonl", 2, "edited"), Finding("cache.jsonl", None, "gone")], notes=["n"]), [
        "records: 2 finding(s)",
        "  games.jsonl:2: edited",
        "  cache.jsonl: gone",
        "  n",
        "replayed 2 games (llm run): 2 mismatch(es) in 1 game(s)",
        "  adapt      self                                2 games, 1 with mismatches",
        "  adapt game 1 (self), end: x [games.jsonl:2]",
        "  adapt game 1 (self), ply 4: y [games.jsonl:2]",
    ], id="an llm run with findings and mismatches"),
    pytest.param(ReplayReport("tournament", games=Counter({("env 21", "a vs b"): 1}), findings=[Finding("/s", None, "FAILED")],
                              notes=["note"]), [
        "/s: FAILED",
        "note",
        "replayed 1 games (tournament run): no mismatches",
        "  env 21     a vs b                              1 games, 0 with mismatches",
    ], id="a tournament"),
])
def test_the_summary_of_a_run(report, lines):
    assert report.summary() == "\n".join(lines)


# ------------------------------------------------------------------------------ reading


def test_read_json_names_a_missing_or_invalid_file(tmp_path):
    path = tmp_path / "m.json"
    with pytest.raises(TranscriptError) as missing:
        read_json(path, "manifest", "the run has no manifest")
    assert str(missing.value) == f"{path}: the run has no manifest" and missing.value.path == path
    path.write_text('{"a": ', encoding="utf-8")
    with pytest.raises(TranscriptError) as invalid:
        read_json(path, "manifest", "unused")
    assert str(invalid.value) == f"{path}: invalid manifest: Expecting value: line 1 column 7 (char 6)"
    path.write_text('{"é": [1]}', encoding="utf-8")
    assert read_json(path, "manifest", "unused") == {"é": [1]}


def test_run_kind_of_each_kind_of_directory(tmp_path):
    with pytest.raises(TranscriptError, match=r"nowhere: no such run directory$"):
        run_kind(tmp_path / "nowhere")
    with pytest.raises(TranscriptError, match=r": the run has no manifest$"):
        run_kind(tmp_path)
    manifest = tmp_path / "manifest.json"
    manifest.write_text("{", encoding="utf-8")
    with pytest.raises(TranscriptError) as invalid:
        run_kind(tmp_path)
    assert str(invalid.value) == (f"{manifest}: invalid manifest: "
                                  "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)")
    for body, kind in [({"config": {}, "run_id": "r"}, "llm"), ({"kind": "tournament"}, "tournament"),
                       ({"kind": "match"}, "tournament"), ({"config": {}, "run_id": "r", "kind": "match"}, "llm")]:
        manifest.write_text(json.dumps(body), encoding="utf-8")
        assert run_kind(tmp_path) == kind, body
        assert run_kind(str(tmp_path)) == kind
    for body in ({"config": {}}, {"run_id": "r"}, {"kind": "bench"}, ["config", "run_id"]):
        manifest.write_text(json.dumps(body), encoding="utf-8")
        with pytest.raises(TranscriptError) as error:
            run_kind(tmp_path)
        assert str(error.value) == f"{manifest}: neither an 'arena run' nor an 'arena tournament' manifest", body
    (tmp_path / "results.json").write_text("{}", encoding="utf-8")
    assert run_kind(tmp_path) == "tournament"  # a list as manifest too, with the results beside it


def test_tournament_games_as_recorded(tmp_path):
    lines = [game_line(21, 0, list(MOVES), 40, 24, (0, 0)), game_line(21, 1, [19], 4, 1, (1, -1))]
    directory = write_tournament(tmp_path / "t", [lines[0], "", "  ", lines[1]])
    kind, games = recorded_games(directory)
    assert kind == "tournament"
    assert games == [
        ReplayGame(21, "env 21", 0, "random vs greedy", "Standard 8x8", MOVES, 40, 24, (0, 0), None, 1),
        ReplayGame(21, "env 21", 1, "random vs greedy", "Standard 8x8", (19,), 4, 1, (1, -1), None, 4),
    ]


def test_a_tournament_without_games_or_with_a_corrupted_line(tmp_path):
    directory = write_tournament(tmp_path / "t", [])
    (directory / "games.jsonl").unlink()
    with pytest.raises(TranscriptError) as missing:
        recorded_games(directory)
    assert str(missing.value) == f"{directory / 'games.jsonl'}: the run has no games file"
    good = game_line(21, 0, [19], 4, 1, (1, -1))
    bad = json.loads(good)
    bad["moves"], bad["plies"], bad["simulator"] = "d3", "one", {"a": 5}
    write_tournament(directory, [good, json.dumps(bad)])
    with pytest.raises(TranscriptError) as corrupted:
        recorded_games(directory)
    assert corrupted.value.line == 2 and str(corrupted.value) == (
        f"{directory / 'games.jsonl'}:2: corrupted tournament game line: moves: Input should be a valid array; "
        "plies: Input should be a valid integer, unable to parse string as an integer; "
        "simulator.a: Input should be an object")
    write_tournament(directory, ["[1, 2]"])
    with pytest.raises(TranscriptError, match=r":1: corrupted tournament game line: line: Input should be an object$"):
        recorded_games(directory)
