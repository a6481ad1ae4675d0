"""arena replay on damaged runs: every kind of damage is a non-zero exit naming the file and line; intact runs replay clean."""

from __future__ import annotations

import json

import pytest
from record_tamper import edit_line, forge, lines, write_lines
from run_checks import Killed, interrupted_then_resumed
from test_replay_run import config
from typer.testing import CliRunner

from harness.cli.main import app
from harness.records.transcript import TranscriptReader
from harness.runs.llm_run import run_llm
from harness.runs.replay import replay_run

pytestmark = pytest.mark.long  # end-to-end: collected first (tests/conftest.py)

FINDINGS_EXIT, USER_ERROR_EXIT = 1, 2


def replay(run_dir):
    return CliRunner().invoke(app, ["replay", str(run_dir)], env={"COLUMNS": "400"})


def fails(run_dir, *expected, code=FINDINGS_EXIT):
    """``arena replay`` exits with ``code`` and its output holds every ``expected`` piece."""
    result = replay(run_dir)
    assert result.exit_code == code, result.output
    for piece in expected:
        assert piece in result.output, f"{piece!r} not in:\n{result.output}"
    return result.output


def game_line_of(run_dir, phase, index):
    """The 1-based games.jsonl line holding (phase, index)."""
    for number, row in enumerate(lines(run_dir / "games.jsonl"), 1):
        record = json.loads(row)
        if (record["phase"], record["game_index"]) == (phase, index):
            return number
    raise AssertionError(f"no {phase} game {index}")


# ------------------------------------------------------------------------------ intact runs


def test_an_intact_run_replays_clean(run_dir):
    result = replay(run_dir)
    assert result.exit_code == 0, result.output
    assert "records: intact" in result.output and "complete: 10 of 10 adaptation games" in result.output


def test_a_run_interrupted_and_resumed_replays_clean(tmp_path):
    stop = lambda e: e.phase == "adapt" and e.game_index == 5  # noqa: E731
    whole, cut, kept = interrupted_then_resumed(config(budget=12, checkpoints=(12,)), tmp_path, stop)
    assert len(kept) == 6
    for run in (whole, cut):
        result = replay(run)
        assert result.exit_code == 0, result.output
        assert "records: intact" in result.output and "complete: 12 of 12" in result.output
    # the chained games are byte for byte those of the uninterrupted run
    assert (cut / "games.jsonl").read_bytes() == (whole / "games.jsonl").read_bytes()


def test_a_run_killed_mid_write_fails_replay_until_resumed(tmp_path):
    """Killed while writing a game line (torn tail): replay names it; resume repairs it, continues the chain, seals."""
    cfg = config(budget=8, eval_games=2, checkpoints=(8,))

    def hook(entry):
        if entry.phase == "adapt" and entry.game_index == 4:
            raise Killed

    with pytest.raises(Killed):
        run_llm(cfg, out=tmp_path, run_id="r", on_game=hook)
    run = tmp_path / "r"
    incomplete = replay(run)
    assert incomplete.exit_code == 0 and "incomplete" in incomplete.output and "5 of 8 adaptation games" in incomplete.output
    with (run / "games.jsonl").open("ab") as handle:  # the kill came halfway through the next game's line
        handle.write(lines(run / "games.jsonl")[-1][:90])
    fails(run, "games.jsonl:6: the last line is incomplete")
    with pytest.warns(UserWarning, match="incomplete last game line"):
        run_llm(resume=run)
    result = replay(run)
    assert result.exit_code == 0, result.output
    assert "complete: 8 of 8 adaptation games and 2 of 2 evaluation games" in result.output
    assert len(TranscriptReader(run).games()) == 10


# A run killed with SIGKILL (no close, so no seal) and resumed: test_kill_resume.py replays it at both points.


# ------------------------------------------------------------------------------ damage the chain shows


def test_a_deleted_game_line(run_dir):
    path = run_dir / "games.jsonl"
    rows = lines(path)
    write_lines(path, rows[:3] + rows[4:])  # adapt game 3
    fails(
        run_dir,
        "games.jsonl:4: prev_hash is not the hash of line 3",
        "adapt game 3 is missing",
        "the manifest seals 12 line(s), the file holds 11",
    )
    forge(run_dir)  # links and seal recomputed: completeness still shows it
    fails(run_dir, "games.jsonl:4: adapt game 3 is missing", "calls.jsonl:", "which games.jsonl does not hold")


def test_a_duplicated_game_line(run_dir):
    path = run_dir / "games.jsonl"
    rows = lines(path)
    write_lines(path, rows[:4] + [rows[3]] + rows[4:])
    fails(run_dir, "games.jsonl:5: prev_hash is not the hash of line 4", "games.jsonl:5: adapt game 3 appears again (first on line 4)")
    forge(run_dir)
    fails(run_dir, "games.jsonl:5: adapt game 3 appears again (first on line 4)")


@pytest.mark.parametrize(
    "what, change",
    [
        ("move", lambda r: r["moves"].__setitem__(-1, r["moves"][-2])),
        ("reward", lambda r: r.update(rewards=[-r["rewards"][0], -r["rewards"][1]] if r["rewards"] != [0, 0] else [1, -1])),
        ("disc count", lambda r: r.update(white_discs=r["white_discs"] + 1)),
    ],
)
@pytest.mark.parametrize("index", [2, 11])  # a line in the middle (the next line's link breaks), the last (the seal)
def test_an_edited_game_line(run_dir, what, change, index):
    edit_line(run_dir / "games.jsonl", index, change)
    if index < 11:
        fails(run_dir, f"games.jsonl:{index + 2}: prev_hash is not the hash of line {index + 1}: line {index + 1} was edited")
    else:
        fails(run_dir, f"games.jsonl:{index + 1}: the last line hashes to", "the line was edited after the run was sealed")


def test_an_edited_call_line(run_dir):
    edit_line(run_dir / "calls.jsonl", 6, lambda r: r.update(reply="MOVE: a1"))
    fails(run_dir, "calls.jsonl:8: prev_hash is not the hash of line 7: line 7 was edited")


def test_a_deleted_call_line(run_dir):
    path = run_dir / "calls.jsonl"
    rows = lines(path)
    deleted = json.loads(rows[6])
    write_lines(path, rows[:6] + rows[7:])
    game_line = game_line_of(run_dir, deleted["phase"], deleted["game_index"])
    fails(
        run_dir,
        "calls.jsonl:7: prev_hash is not the hash of line 6",
        "calls.jsonl:7: call 6 is missing",
        f"games.jsonl:{game_line}: adapt game {deleted['game_index']} lists call 6, which calls.jsonl does not hold",
    )
    forge(run_dir)
    fails(run_dir, "calls.jsonl:7: call 6 is missing", f"games.jsonl:{game_line}:")


def test_an_edited_cache_line(run_dir):
    edit_line(run_dir / "cache.jsonl", 3, lambda r: r["response"].update(text="MOVE: a1"))
    fails(run_dir, "cache.jsonl:5: prev_hash is not the hash of line 4")


@pytest.mark.parametrize("name", ["games.jsonl", "calls.jsonl"])
def test_a_file_cut_mid_line(run_dir, name):
    path = run_dir / name
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 25])
    count = data.count(b"\n")
    fails(run_dir, f"{name}:{count}: the last line is incomplete", f"the manifest seals {count} line(s), the file holds {count - 1}")


def test_a_file_cut_at_a_line_boundary(run_dir):
    path = run_dir / "games.jsonl"
    write_lines(path, lines(path)[:10])  # the two evaluation games gone
    fails(
        run_dir,
        "games.jsonl:11: the manifest seals 12 line(s), the file holds 10",
        "games.jsonl:11: eval game 0 is missing (the file ends before it)",
    )


def test_a_missing_manifest(run_dir):
    (run_dir / "manifest.json").unlink()
    fails(run_dir, "manifest.json", "no manifest", code=USER_ERROR_EXIT)


@pytest.mark.parametrize("name", ["games.jsonl", "calls.jsonl", "cache.jsonl"])
def test_a_manifest_whose_count_disagrees(run_dir, name):
    path = run_dir / "manifest.json"
    manifest = json.loads(path.read_text())
    sealed = manifest["chains"][name]["lines"]
    manifest["chains"][name]["lines"] = sealed + 1
    path.write_text(json.dumps(manifest))
    fails(run_dir, f"{name}:{sealed + 1}: the manifest seals {sealed + 1} line(s), the file holds {sealed}")


def test_a_manifest_that_seals_more_games_than_the_budget(run_dir):
    path = run_dir / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["chains"]["games.jsonl"]["phases"] = {"adapt": 11, "eval": 1}
    path.write_text(json.dumps(manifest))
    fails(run_dir, "more than the budget of 10", "adapt game 10 is missing")


def test_a_manifest_without_a_seal(run_dir):
    path = run_dir / "manifest.json"
    manifest = json.loads(path.read_text())
    del manifest["chains"]
    path.write_text(json.dumps(manifest))
    fails(run_dir, "games.jsonl: the manifest holds no seal of this file")


def test_replay_reports_every_finding_not_only_the_first(run_dir):
    edit_line(run_dir / "games.jsonl", 2, lambda r: r.update(white_discs=r["white_discs"] + 1))
    edit_line(run_dir / "calls.jsonl", 3, lambda r: r.update(reply="x"))
    report = replay_run(run_dir)
    assert {(f.file, f.line) for f in report.findings} == {("games.jsonl", 4), ("calls.jsonl", 5)}
    assert any("final counts" in m.message for m in report.mismatches)  # and the engine still re-plays the games
