"""replay_run, the commitments and game_plies on one tiny recorded run, damaged in targeted ways (mutation group `replay`).

One run per module (tiny_run.py: 2 adaptation games, 1 evaluation game, in-process); each test
damages its own copy and asserts replay's exact verdict: which findings, notes and mismatches,
in which order, naming which file, line and game. Held-out suite entries come from a 2-entry
suite written here; "broken" means its sealed file was changed after it was made.
"""

from __future__ import annotations

import json
import warnings
from collections import Counter

import pytest
from record_tamper import edit_line, forge
from tiny_run import game_line, game_records, write_tournament

from engine import make_env
from engine.suite import SEALED_FILE, SuiteSettings, write_suite
from harness.records.chain import Finding
from harness.records.transcript import TranscriptError
from harness.runs.replay import ReplayGame, commitment_check, game_plies, recorded_games, replay_run, suite_commitments

COMPLETE = "complete: 2 of 2 adaptation games and 1 of 1 evaluation games sealed"
COMMITMENT_OK = "commitment: the condition revealed at the end matches the manifest's sha256 and env 21"
GAMES = Counter({("adapt", "self"): 2, ("eval", "random"): 1})


@pytest.fixture
def suite(tmp_path):
    directory = tmp_path / "suite"
    write_suite(SuiteSettings(count=2, seed=5, sizes=(6, 6)), directory)
    return directory.resolve()


def break_entry(suite, entry):
    path = suite / SEALED_FILE
    sealed = json.loads(path.read_text(encoding="utf-8"))
    sealed["environments"][entry]["condition"] = "k=0.321"
    path.write_text(json.dumps(sealed), encoding="utf-8")
    return (f"commitment FAILED for environment {suite}:{entry}: suite {suite}: entry {entry}'s sealed condition does not "
            "match its commitment in public.json (a file was changed after `arena envs new`)")


def edit_json(path, change):
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


# ------------------------------------------------------------------------------ replay_run, arena run directories


def test_an_intact_run(run):
    report = replay_run(run)
    assert (report.kind, report.findings, report.mismatches) == ("llm", [], [])
    assert report.notes == [COMPLETE, COMMITMENT_OK]
    assert report.games == GAMES and sum(report.bad_games.values()) == 0


def test_recorded_games_of_a_run_with_a_torn_last_line_and_a_broken_chain(run):
    records = game_records(run)
    edit_line(run / "games.jsonl", 0, lambda r: r.update(seed=7))  # the chain breaks: still read (replay_run reports it)
    with (run / "games.jsonl").open("ab") as handle:
        handle.write(b'{"prev_hash":"00')
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kind, games = recorded_games(run)
    assert caught == [] and kind == "llm"
    assert [(g.env_id, g.phase, g.game_index, g.opponent, g.layout, g.line) for g in games] == [
        (21, "adapt", 0, "self", "Standard 8x8", 1), (21, "adapt", 1, "self", "Standard 8x8", 2),
        (21, "eval", 0, "random", "Standard 8x8", 3)]
    assert games[2] == ReplayGame(21, "eval", 0, "random", "Standard 8x8", tuple(records[2]["moves"]), records[2]["black_discs"],
                                  records[2]["white_discs"], tuple(records[2]["rewards"]), None, 3)


def test_forged_games_are_caught_by_the_engine_game_by_game(run):
    edit_line(run / "games.jsonl", 1, lambda r: r.update(white_discs=r["white_discs"] + 1, rewards=[1, -1]))
    edit_line(run / "games.jsonl", 2, lambda r: r.update(rewards=[1, -1]))
    forge(run)
    report = replay_run(run)
    assert report.findings == [] and report.games == GAMES
    assert report.bad_games == Counter({("adapt", "self"): 1, ("eval", "random"): 1})
    assert [m.describe() for m in report.mismatches] == [
        "adapt game 1 (self), end: final counts 40-24, recorded 40-25 [games.jsonl:2]",
        "adapt game 1 (self), end: rewards (1, -1) recorded, the condition gives (0, 0) [games.jsonl:2]",
        "eval game 0 (random), end: rewards (1, -1) recorded, the condition gives (-1, 1) [games.jsonl:3]",
    ]


def test_a_recorded_forfeit_is_read_and_replays_clean(run):
    rules = make_env(21).rules

    def forfeit_after_seven_plies(record):
        state = rules.initial_state()
        for move in record["moves"][:7]:
            state = rules.play(state, move)
        black, white = rules.counts(state)
        record.update(moves=record["moves"][:7], black_discs=black, white_discs=white, rewards=[1, -1], forfeit_by="white")

    edit_line(run / "games.jsonl", 2, forfeit_after_seven_plies)
    forge(run)
    assert recorded_games(run)[1][2].forfeit_by == "white"
    report = replay_run(run)
    assert (report.findings, report.mismatches, report.games) == ([], [], GAMES)


def test_findings_of_the_records_come_before_those_of_the_commitment(run):
    edit_line(run / "games.jsonl", 0, lambda r: r.update(seed=7))  # the chain shows it; the engine does not care
    edit_json(run / "metrics.json", lambda m: m["commitment"].update(sha256="0" * 64))
    (run / "report.md").unlink()
    report = replay_run(run)
    committed = json.loads((run / "manifest.json").read_text())["condition_sha256"]
    assert [f.describe() for f in report.findings] == [
        "games.jsonl:2: prev_hash is not the hash of line 1: line 1 was edited, or lines were deleted or inserted between them",
        f"metrics.json: the revealed sha256 {'0' * 64} is not the manifest's {committed}"]
    assert report.notes == [COMPLETE] and report.mismatches == []


INCOMPLETE = "incomplete (stopped early, or interrupted: 'arena run --resume' finishes it): "


@pytest.mark.parametrize("change, note", [
    (lambda c: c.update(budget=3), "2 of 3 adaptation games and 1 of 1 evaluation games sealed"),
    (lambda c: c.update(opponents=["random", "greedy"]), "2 of 2 adaptation games and 1 of 2 evaluation games sealed"),
])
def test_the_budget_and_evaluation_games_of_the_config_are_checked(run, change, note):
    edit_json(run / "manifest.json", lambda m: change(m["config"]))
    assert replay_run(run).notes == [INCOMPLETE + note, COMMITMENT_OK]


def test_an_invalid_config_is_named(run):
    edit_json(run / "manifest.json", lambda m: m["config"].update(budget="lots"))
    with pytest.raises(TranscriptError) as error:
        replay_run(run)
    assert str(error.value) == (f"{run / 'manifest.json'}: invalid run config: "
                                "Input should be a valid integer, unable to parse string as an integer")


def test_a_run_on_a_broken_suite_entry_is_not_replayed(run, suite):
    edit_json(run / "manifest.json", lambda m: m["config"].update(env=f"{suite}:1"))
    failed = break_entry(suite, 1)
    report = replay_run(run)
    assert [(f.file, f.line, f.message) for f in report.findings] == [(str(suite), None, failed)]
    assert report.notes == [COMPLETE] and report.games_checked == 0 and report.mismatches == []


def test_a_run_on_an_intact_suite_entry_is_replayed_on_its_layout(run, suite):
    edit_json(run / "manifest.json", lambda m: m["config"].update(env=f"{suite}:0"))
    report = replay_run(run)
    assert report.notes[:2] == [COMPLETE, "commitments OK: the salted sha256 of the sealed condition of each of the 1 held-out "
                                          "environment(s) equals its commitment in the suite's public.json"]
    assert report.games == GAMES and len(report.mismatches) == 3
    assert all(m.message.startswith("layout 'Standard 8x8' recorded") for m in report.mismatches)
    assert any("is not env" in f.message for f in report.findings)  # the revealed condition is env 21's


# ------------------------------------------------------------------------------ replay_run, tournament directories


def test_a_tournament_is_replayed_game_by_game(tmp_path):
    moves = [20, 19, 10]
    directory = write_tournament(tmp_path / "t", [game_line(21, 0, [20], 4, 1, (0, 0)), game_line(21, 1, moves, 4, 3, (1, -1))])
    report = replay_run(directory)
    assert (report.kind, report.findings, report.notes) == ("tournament", [], [])
    assert report.games == Counter({("env 21", "random vs greedy"): 2})
    assert report.bad_games == Counter({("env 21", "random vs greedy"): 2})
    assert [(m.game_index, m.line, m.message) for m in report.mismatches] == [
        (0, 1, "the game is not over after 1 plies and no forfeit is recorded"),
        (1, 2, "final counts 5-2, recorded 4-3"),
        (1, 2, "the game is not over after 3 plies and no forfeit is recorded"),
        (1, 2, "rewards (1, -1) recorded, the condition gives (0, 0)")]


def test_each_game_of_a_tournament_is_replayed_on_its_own_environment(tmp_path):
    lines = [game_line(env, 0, [], 2, 2, (0, 0)) for env in (21, 40, 21)]  # Standard 8x8, Random Board 2 (6x8)
    report = replay_run(write_tournament(tmp_path / "t", lines))
    assert report.games == Counter({("env 21", "random vs greedy"): 2, ("env 40", "random vs greedy"): 1})
    assert [(m.phase, m.message) for m in report.mismatches] == [
        (f"env {env}", "the game is not over after 0 plies and no forfeit is recorded") for env in (21, 40, 21)]


def test_a_tournament_on_a_suite_skips_the_broken_entry_only(tmp_path, suite):
    keys = [f"{suite}:1", f"{suite}:0"]  # the entry to break first: its games are skipped, not those after them
    lines = [game_line(key, 0, [], 2, 2, (0, 0)) for key in keys]
    directory = write_tournament(tmp_path / "t", lines, {"kind": "tournament", "envs": keys})
    intact = replay_run(directory)
    assert intact.findings == [] and intact.notes == [
        "commitments OK: the salted sha256 of the sealed condition of each of the 2 held-out environment(s) equals its "
        "commitment in the suite's public.json"]
    assert intact.games == Counter({(f"env {key}", "random vs greedy"): 1 for key in keys})
    failed = break_entry(suite, 1)
    report = replay_run(directory)
    assert [f.message for f in report.findings] == [failed] and report.notes == []
    assert report.games == Counter({(f"env {keys[1]}", "random vs greedy"): 1})


# ------------------------------------------------------------------------------ suite_commitments


def test_suite_commitments_of_paper_and_inline_environments_say_nothing():
    assert suite_commitments([]) == ([], [], frozenset())
    assert suite_commitments([21, 0]) == ([], [], frozenset())


def test_suite_commitments_count_each_entry_once(suite):
    keys = [f"{suite}:1", 21, f"{suite}:0", f"{suite}:1"]
    assert suite_commitments(keys) == ([], [
        "commitments OK: the salted sha256 of the sealed condition of each of the 2 held-out environment(s) equals its "
        "commitment in the suite's public.json"], frozenset())


def test_suite_commitments_name_every_broken_entry_in_order(suite):
    second = break_entry(suite, 1)
    keys = [f"{suite}:1", f"{suite}:0"]
    assert suite_commitments(keys) == ([Finding(str(suite), None, second)], [], frozenset({keys[0]}))
    first = break_entry(suite, 0)
    findings, notes, broken = suite_commitments(keys)
    assert findings == [Finding(str(suite), None, first), Finding(str(suite), None, second)]
    assert notes == [] and broken == frozenset(keys)


# ------------------------------------------------------------------------------ commitment_check


def committed(run):
    return json.loads((run / "manifest.json").read_text())["condition_sha256"]


def test_commitment_check_of_an_intact_run(run):
    assert commitment_check(run, 21) == ([], [COMMITMENT_OK])
    (run / "report.md").unlink()
    assert commitment_check(run, 21) == ([], [COMMITMENT_OK])


def test_commitment_check_before_commitments_and_before_the_end(run):
    (run / "metrics.json").unlink()
    assert commitment_check(run, 21) == ([], ["commitment: not revealed yet (no metrics.json: the run has not ended)"])
    edit_json(run / "manifest.json", lambda m: m.pop("condition_sha256"))
    assert commitment_check(run, 21) == (
        [], ["commitment: none in the manifest (a run written before commitments): the condition is not checked"])


@pytest.mark.parametrize("metrics", ["{not json", "[1, 2]", '{"commitment": "k=3/5"}', "{}"])
def test_metrics_that_reveal_no_commitment(run, metrics):
    (run / "metrics.json").write_text(metrics, encoding="utf-8")
    findings, notes = commitment_check(run, 21)
    assert notes == [] and findings == [Finding("metrics.json", None, f"the manifest commits to a condition (sha256 "
                                                                      f"{committed(run)}), but no commitment is revealed here")]


@pytest.mark.parametrize("tail", [" and more", ""])
def test_a_report_without_the_condition_line(run, tail):
    path = run / "report.md"
    text = path.read_text(encoding="utf-8")
    line = next(row for row in text.splitlines() if row.startswith("Condition: "))
    broken = line[:-1] + tail if tail else line.replace("Condition: ", "Condition:")
    path.write_text(text.replace(line, broken), encoding="utf-8")
    assert commitment_check(run, 21) == ([Finding("report.md", None, "no 'Condition: ... (salt ..., committed in the "
                                                                     "manifest as sha256 ...)' line")], [])


def test_each_revealed_field_is_checked(run):
    sha = committed(run)
    shown = json.loads((run / "metrics.json").read_text())["commitment"]
    (run / "report.md").unlink()
    edit_json(run / "metrics.json", lambda m: m["commitment"].pop("salt"))
    assert commitment_check(run, 21)[0] == [Finding("metrics.json", None, f"the revealed condition {shown['condition']!r} "
                                                                          f"and salt None do not give the manifest's sha256 {sha}")]
    edit_json(run / "metrics.json", lambda m: m["commitment"].update(salt=shown["salt"], condition=5))
    assert [f.message for f in commitment_check(run, 21)[0]] == [
        f"the revealed condition 5 and salt {shown['salt']!r} do not give the manifest's sha256 {sha}",
        "the revealed condition 5 is not env 21's condition"]
    edit_json(run / "metrics.json", lambda m: m["commitment"].update(condition=shown["condition"], salt="0" * 32))
    assert [f.message for f in commitment_check(run, 21)[0]] == [
        f"the revealed condition {shown['condition']!r} and salt {'0' * 32!r} do not give the manifest's sha256 {sha}"]
    edit_json(run / "metrics.json", lambda m: m["commitment"].update(condition=shown["condition"], salt=5))
    assert [f.message for f in commitment_check(run, 21)[0]] == [
        f"the revealed condition {shown['condition']!r} and salt 5 do not give the manifest's sha256 {sha}"]


def test_the_report_is_checked_after_the_metrics(run):
    sha = committed(run)
    path = run / "report.md"
    path.write_text(path.read_text(encoding="utf-8").replace(f"sha256 {sha}", "sha256 abc"), encoding="utf-8")
    edit_json(run / "metrics.json", lambda m: m["commitment"].update(sha256="def"))
    assert [f.describe() for f in commitment_check(run, 21)[0]] == [
        f"metrics.json: the revealed sha256 def is not the manifest's {sha}",
        f"report.md: the revealed sha256 abc is not the manifest's {sha}"]


def test_the_condition_of_another_environment(run):
    findings, notes = commitment_check(run, 14)
    shown = json.loads((run / "metrics.json").read_text())["commitment"]["condition"]
    assert notes == [] and findings == [Finding(name, None, f"the revealed condition {shown!r} is not env 14's condition")
                                        for name in ("metrics.json", "report.md")]


# ------------------------------------------------------------------------------ game_plies


def test_game_plies_step_through_a_game_with_its_replies(run):
    records = game_records(run)
    game, rules, plies = game_plies(run, 1)
    assert (game.phase, game.game_index, rules.layout.name) == ("adapt", 1, "Standard 8x8")
    assert [p.ply for p in plies] == list(range(60)) and [p.move for p in plies] == records[1]["moves"]
    assert [p.colour for p in plies[:3]] == ["black", "white", "black"] and [p.notation for p in plies[:2]] == ["e3", "d3"]
    assert [[c.call_index for c in p.replies] for p in plies] == [[60 + ply] for ply in range(60)]
    assert rules.counts(plies[0].state) == (4, 1) and rules.counts(plies[-1].state) == (40, 24)
    assert game_plies(run, 0)[0].game_index == 0


def test_game_plies_of_an_evaluation_game_show_the_models_replies_only(run):
    game, _, plies = game_plies(run, 0, "eval")
    assert game.phase == "eval" and len(plies) == len(game.moves)
    assert [c.call_index for c in plies[0].replies] == [game.call_indices[0]] and plies[1].replies == ()
    assert [c.ply for p in plies for c in p.replies] == [p.ply for p in plies if p.colour == "black"]


def test_game_plies_name_a_missing_game_and_what_there_is(run):
    with pytest.raises(TranscriptError) as adapt:
        game_plies(run, 5)
    assert str(adapt.value) == f"{run / 'games.jsonl'}: no adapt game 5 in this run (adapt games: 0-1)"
    with pytest.raises(TranscriptError, match=r"no eval game 1 in this run \(eval games: 0-0\)$"):
        game_plies(run, 1, "eval")
    path = run / "games.jsonl"
    path.write_text("".join(path.read_text(encoding="utf-8").splitlines(keepends=True)[:2]), encoding="utf-8")
    forge(run)
    with pytest.raises(TranscriptError, match=r"no eval game 0 in this run \(eval games: none\)$"):
        game_plies(run, 0, "eval")


def test_game_plies_refuse_an_illegal_move_and_a_tournament(run, tmp_path):
    edit_line(run / "games.jsonl", 1, lambda r: r["moves"].__setitem__(0, 0))
    forge(run)
    with pytest.raises(TranscriptError) as illegal:
        game_plies(run, 1)
    assert str(illegal.value) == f"{run / 'games.jsonl'}: adapt game 1: illegal move at ply 0 (run 'arena replay' for details)"
    directory = write_tournament(tmp_path / "t", [])
    with pytest.raises(TranscriptError) as tournament:
        game_plies(directory, 0)
    assert str(tournament.value) == (f"{directory}: --game steps through 'arena run' directories only "
                                     "(a tournament has no model replies)")
