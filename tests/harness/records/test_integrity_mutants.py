"""What ``check_records`` left free (survivors of `make mutation MODULES=records`): its findings, whole.

The run-level replay tests (``tests/harness/runs``) check damaged runs too, but they play whole
runs, which the records group does not run. Here small run directories are written with the
transcript writer, damaged as a forger would (the chain recomputed and the manifest re-sealed, so
that only the checks below the chain see the damage) and checked: every finding with its file, its
line and its text; the note on how far the run got; the games per phase a manifest sealed with,
without or with partial phase counts.
"""

from __future__ import annotations

import json

import pytest
from record_tamper import edit_line, forge, lines, write_lines

from harness.models.cache import line_hash
from harness.records.chain import broken_link_message
from harness.records.entries import CALLS_FILE, GAMES_FILE, MANIFEST_FILE
from harness.records.integrity import check_records
from harness.records.transcript import TranscriptReader, TranscriptWriter
from tests.harness.records.transcript_factories import call, game, manifest

INCOMPLETE = "incomplete (stopped early, or interrupted: 'arena run --resume' finishes it): "


def write(run_dir, adapt=2, evaluation=1, calls_per_game=1, stopped_in=0):
    """A run: ``adapt`` then ``evaluation`` games, each with its calls; ``stopped_in`` calls of a game never finished."""
    index = 0
    with TranscriptWriter(run_dir) as writer:
        writer.write_manifest(manifest())
        for phase, count in (("adapt", adapt), ("eval", evaluation)):
            for number in range(count):
                for ply in range(calls_per_game):
                    writer.append_call(call(index, number, ply, phase=phase))
                    index += 1
                writer.append_game(game(number, phase=phase))
        for ply in range(stopped_in):
            writer.append_call(call(index, adapt, ply))
            index += 1
    return run_dir


def rewrite(path, change):
    """Replace the records of ``path`` by ``change(records)`` (chain and seal are left to :func:`forge`)."""
    records = change([json.loads(row) for row in lines(path)])
    write_lines(path, [json.dumps(record, separators=(",", ":")).encode() for record in records])


def games_seal(run_dir, **update):
    """Change the manifest's seal of games.jsonl (``phases=None``: a seal from before phase counts)."""
    path = run_dir / MANIFEST_FILE
    data = json.loads(path.read_text())
    data["chains"][GAMES_FILE].update(update)
    path.write_text(json.dumps(data))


def adapt_game(record, index):
    return dict(record, game_index=index, phase="adapt")


def found(check):
    return [finding.describe() for finding in check.findings]


def test_a_complete_run_has_no_findings_and_says_so(tmp_path):
    write(tmp_path)
    check = check_records(tmp_path, budget=2, eval_games=1)
    assert check.ok and check.findings == ()
    assert check.notes == ("complete: 2 of 2 adaptation games and 1 of 1 evaluation games sealed",)
    assert list(check.games.records) == TranscriptReader(tmp_path).games()
    assert list(check.calls.records) == TranscriptReader(tmp_path).calls()


def test_a_run_short_of_either_phase_is_incomplete_but_not_wrong(tmp_path):
    write(tmp_path)
    for budget, eval_games in ((3, 1), (2, 2), (3, 4)):
        check = check_records(tmp_path, budget=budget, eval_games=eval_games)
        assert check.ok
        assert check.notes == (f"{INCOMPLETE}2 of {budget} adaptation games and 1 of {eval_games} evaluation games sealed",)


def test_broken_links_in_every_file_are_findings_not_refusals(tmp_path):
    write(tmp_path, calls_per_game=2)
    edit_line(tmp_path / GAMES_FILE, 0, lambda r: r.update(black_discs=11))
    edit_line(tmp_path / CALLS_FILE, 0, lambda r: r.update(reply="MOVE: c4"))
    check = check_records(tmp_path, budget=2, eval_games=1)
    assert found(check) == [f"games.jsonl:2: {broken_link_message(1)}", f"calls.jsonl:2: {broken_link_message(1)}"]
    assert [g.black_discs for g in check.games.records] == [11, 10, 10]
    assert check.calls.records[0].reply == "MOVE: c4"


def test_findings_of_every_check_are_kept_together(tmp_path):
    """A chain finding, a count finding, a finding in each phase and a call finding: none replaces another."""
    write(tmp_path, adapt=2, evaluation=2)
    rewrite(tmp_path / CALLS_FILE, lambda rows: rows[:1] + rows[2:])  # call 1 deleted
    forge(tmp_path)
    games_seal(tmp_path, phases={"adapt": 3, "eval": 3})
    with (tmp_path / GAMES_FILE).open("ab") as log:
        log.write(b'{"torn')
    assert found(check_records(tmp_path, budget=2, eval_games=2)) == [
        "games.jsonl:5: the last line is incomplete (6 bytes and no newline): the file was cut mid-line, or the run was "
        "killed while writing it (resume it to repair)",
        "games.jsonl: the manifest seals 3 adaptation games, more than the budget of 2",
        "games.jsonl: the manifest seals 3 evaluation games, more than the 2 the config plays",
        "games.jsonl:5: adapt game 2 is missing (the file ends before it): lines were deleted or cut off",
        "games.jsonl:5: eval game 2 is missing (the file ends before it): lines were deleted or cut off",
        "calls.jsonl:2: call 1 is missing (it should come before call 2, on this line): a line was deleted",
        "games.jsonl:2: adapt game 1 lists call 1, which calls.jsonl does not hold",
    ]


def test_a_seal_without_phase_counts_gives_the_budget_to_adaptation_first(tmp_path):
    write(tmp_path)
    games_seal(tmp_path, phases=None)
    assert check_records(tmp_path, budget=2, eval_games=1).ok
    check = check_records(tmp_path, budget=1, eval_games=1)
    assert found(check) == [
        "games.jsonl: the manifest seals 2 evaluation games, more than the 1 the config plays",
        "games.jsonl:2: adapt game 1 is beyond the 1 adapt game(s) the manifest seals",
        "games.jsonl:4: eval game 1 is missing (the file ends before it): lines were deleted or cut off",
    ]
    assert check.notes == (f"{INCOMPLETE}1 of 1 adaptation games and 2 of 1 evaluation games sealed",)
    check = check_records(tmp_path, budget=4, eval_games=0)
    assert check.notes == (f"{INCOMPLETE}3 of 4 adaptation games and 0 of 0 evaluation games sealed",)
    assert found(check)[-1] == "games.jsonl:3: eval game 0 is beyond the 0 eval game(s) the manifest seals"


def test_a_seal_counting_one_phase_only_counts_the_other_as_none(tmp_path):
    write(tmp_path)
    games_seal(tmp_path, phases={"adapt": 2})
    check = check_records(tmp_path, budget=2, eval_games=1)
    assert found(check) == ["games.jsonl:3: eval game 0 is beyond the 0 eval game(s) the manifest seals"]
    assert check.notes == (f"{INCOMPLETE}2 of 2 adaptation games and 0 of 1 evaluation games sealed",)


def test_without_a_seal_the_lines_on_file_are_counted(tmp_path):
    write(tmp_path)
    data = json.loads((tmp_path / MANIFEST_FILE).read_text())
    del data["chains"][GAMES_FILE]
    (tmp_path / MANIFEST_FILE).write_text(json.dumps(data))
    check = check_records(tmp_path, budget=5, eval_games=1)
    assert found(check) == [
        "games.jsonl: the manifest holds no seal of this file (written before hash chains, or the run never closed it): "
        "its lines cannot be checked against the manifest",
        "games.jsonl:4: adapt game 2 is missing (the file ends before it): lines were deleted or cut off",
        "games.jsonl:3: eval game 0 is beyond the 0 eval game(s) the manifest seals",
    ]
    assert check.notes == (f"{INCOMPLETE}3 of 5 adaptation games and 0 of 1 evaluation games sealed",)


def test_duplicated_extra_and_missing_games_are_named_on_their_lines(tmp_path):
    write(tmp_path, adapt=1, evaluation=1, calls_per_game=0)
    rewrite(
        tmp_path / GAMES_FILE,
        lambda rows: [rows[0], adapt_game(rows[0], 3), adapt_game(rows[0], 2), adapt_game(rows[0], 2), adapt_game(rows[0], 5), rows[1]],
    )
    forge(tmp_path)
    games_seal(tmp_path, phases={"adapt": 5, "eval": 1})
    assert found(check_records(tmp_path, budget=5, eval_games=1)) == [
        "games.jsonl:4: adapt game 2 appears again (first on line 3): a line was duplicated",
        "games.jsonl:5: adapt game 5 is beyond the 5 adapt game(s) the manifest seals",
        "games.jsonl:3: adapt game 1 is missing (it should come before adapt game 2, on this line): a line was deleted",
        "games.jsonl:7: adapt game 4 is missing (the file ends before it): lines were deleted or cut off",
    ]


def test_five_missing_games_are_listed_and_the_rest_counted(tmp_path):
    write(tmp_path, adapt=1, evaluation=0, calls_per_game=0)
    games_seal(tmp_path, phases={"adapt": 6, "eval": 0})
    listed = [
        f"games.jsonl:2: adapt game {index} is missing (the file ends before it): lines were deleted or cut off" for index in range(1, 6)
    ]
    assert found(check_records(tmp_path, budget=6, eval_games=0)) == listed
    games_seal(tmp_path, phases={"adapt": 8, "eval": 0})
    assert found(check_records(tmp_path, budget=8, eval_games=0)) == [*listed, "games.jsonl: 2 more adapt game(s) are missing"]


def test_an_empty_games_file_misses_its_first_game_on_line_one(tmp_path):
    write(tmp_path, adapt=0, evaluation=0)
    games_seal(tmp_path, phases={"adapt": 1, "eval": 0})
    assert found(check_records(tmp_path, budget=1, eval_games=0)) == [
        "games.jsonl:1: adapt game 0 is missing (the file ends before it): lines were deleted or cut off"
    ]


def test_a_repeated_call_is_named_with_its_first_line(tmp_path):
    write(tmp_path, calls_per_game=2)
    rewrite(tmp_path / CALLS_FILE, lambda rows: rows[:2] + rows[1:])
    forge(tmp_path)
    assert found(check_records(tmp_path, budget=2, eval_games=1)) == ["calls.jsonl:3: call 1 appears again (first on line 2)"]


def outside_calls(run_dir, indices):
    """A run of no games whose calls (outside any game) carry ``indices``."""
    with TranscriptWriter(run_dir) as writer:
        writer.write_manifest(manifest())
        for index in indices:
            writer.append_call(call(index, None, ply=None))
    return check_records(run_dir, budget=0, eval_games=0)


def test_five_missing_calls_are_listed_and_the_rest_counted(tmp_path):
    listed = [
        f"calls.jsonl:2: call {index} is missing (it should come before call 6, on this line): a line was deleted" for index in range(1, 6)
    ]
    assert found(outside_calls(tmp_path / "five", [0, 6])) == listed
    eight = found(outside_calls(tmp_path / "eight", [0, 3, 9]))
    assert eight == [
        "calls.jsonl:2: call 1 is missing (it should come before call 3, on this line): a line was deleted",
        "calls.jsonl:2: call 2 is missing (it should come before call 3, on this line): a line was deleted",
        *[
            f"calls.jsonl:3: call {index} is missing (it should come before call 9, on this line): a line was deleted"
            for index in range(4, 7)
        ],
        "calls.jsonl: 2 more call(s) are missing",
    ]
    assert outside_calls(tmp_path / "none", []).ok


def test_a_chained_game_must_list_its_calls_and_a_legacy_one_need_not(tmp_path):
    write(tmp_path, calls_per_game=2)
    edit_line(tmp_path / GAMES_FILE, 1, lambda r: r.update(call_indices=None))
    forge(tmp_path)
    assert found(check_records(tmp_path, budget=2, eval_games=1)) == [
        "games.jsonl:2: adapt game 1 does not list its calls (call_indices), which every chained game line does"
    ]
    edit_line(tmp_path / GAMES_FILE, 1, lambda r: r.update(schema_version=1))
    forge(tmp_path)
    assert check_records(tmp_path, budget=2, eval_games=1).ok


@pytest.mark.parametrize(
    ("calls_per_game", "edits", "findings"),
    [
        pytest.param(
            2,
            [(CALLS_FILE, 1, {"game_index": 1}), (CALLS_FILE, 3, {"phase": "eval"})],
            [
                "calls.jsonl:2: call 1 is of adapt game 1, but adapt game 0 (games.jsonl:1) lists it",
                "calls.jsonl:4: call 3 is of eval game 1, but adapt game 1 (games.jsonl:2) lists it",
            ],
            id="a call listed by a game it is not of is named",
        ),
        pytest.param(
            3,
            [(GAMES_FILE, 0, {"call_indices": [0]}), (GAMES_FILE, 1, {"call_indices": [3, 4]})],
            [
                "calls.jsonl:2: call 1 and 1 more (to line 3) are of adapt game 0, but that game (games.jsonl:1) does not list them",
                "calls.jsonl:6: call 5 is of adapt game 1, but that game (games.jsonl:2) does not list it",
            ],
            id="calls a game does not list are named once per game",
        ),
    ],
)
def test_calls_and_the_games_that_list_them_disagree_in_named_lines(tmp_path, calls_per_game, edits, findings):
    write(tmp_path, calls_per_game=calls_per_game)
    for name, index, changes in edits:
        edit_line(tmp_path / name, index, lambda r, changes=changes: r.update(changes))
    forge(tmp_path)
    assert found(check_records(tmp_path, budget=2, eval_games=1)) == findings


def test_calls_of_a_game_missing_before_later_games_are_named(tmp_path):
    write(tmp_path, calls_per_game=3)
    rewrite(tmp_path / GAMES_FILE, lambda rows: rows[1:])
    forge(tmp_path)
    games_seal(tmp_path, phases={"adapt": 2, "eval": 1})
    assert found(check_records(tmp_path, budget=2, eval_games=1)) == [
        "games.jsonl:1: adapt game 0 is missing (it should come before adapt game 1, on this line): a line was deleted",
        "calls.jsonl:1: call 0 and 2 more (to line 3) are of adapt game 0, which games.jsonl does not hold (and later games do)",
    ]


def test_the_calls_of_the_game_a_run_stopped_in_are_a_note(tmp_path):
    write(tmp_path, calls_per_game=1, stopped_in=3)
    check = check_records(tmp_path, budget=3, eval_games=1)
    assert check.ok
    assert check.notes == (
        f"{INCOMPLETE}2 of 3 adaptation games and 1 of 1 evaluation games sealed",
        "calls 3-5 belong to a game the run stopped in (not on record)",
    )


def test_a_call_outside_any_game_is_no_games_and_a_call_of_no_phase_neither(tmp_path):
    with TranscriptWriter(tmp_path) as writer:
        writer.write_manifest(manifest())
        writer.append_call(call(0, None, ply=None))
        writer.append_call(call(1, 0, 0, phase=None))
        writer.append_call(call(2, 0, 0))
        writer.append_game(game(0))
    assert check_records(tmp_path, budget=1, eval_games=0).ok


def test_a_seal_without_phase_counts_counts_its_own_lines_not_the_file_s(tmp_path):
    write(tmp_path)
    games_seal(tmp_path, phases=None, lines=2, last_hash=line_hash(lines(tmp_path / GAMES_FILE)[1]))
    assert found(check_records(tmp_path, budget=2, eval_games=1)) == [
        "games.jsonl:3: the manifest seals 2 line(s), the file holds 3: this line and the ones after it were written "
        "after the seal (a run killed before it closed: resume it), or appended",
        "games.jsonl:3: eval game 0 is beyond the 0 eval game(s) the manifest seals",
    ]


def test_every_call_a_game_lists_is_checked_after_one_that_is_missing(tmp_path):
    write(tmp_path, calls_per_game=2)
    rewrite(tmp_path / CALLS_FILE, lambda rows: rows[1:])
    forge(tmp_path)
    assert found(check_records(tmp_path, budget=2, eval_games=1)) == [
        "calls.jsonl:1: call 0 is missing (it should come before call 1, on this line): a line was deleted",
        "games.jsonl:1: adapt game 0 lists call 0, which calls.jsonl does not hold",
    ]


def test_calls_of_a_stopped_game_are_a_note_when_no_game_lists_a_call(tmp_path):
    write(tmp_path, adapt=1, evaluation=0, calls_per_game=0, stopped_in=3)
    check = check_records(tmp_path, budget=2, eval_games=0)
    assert check.ok
    assert check.notes[1:] == ("calls 0-2 belong to a game the run stopped in (not on record)",)
