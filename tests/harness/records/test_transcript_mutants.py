"""What the transcript writer, reader and resume left free (survivors of `make mutation MODULES=records`).

Pinned here: the texts and the file each refusal names (a user acts on them), the repair of
auxiliary logs (`open_log_for_append`, which no records test called), resume of a run whose calls
all belong to an unfinished game or which has no manifest, a seal of a single line, what closing
twice and writing a manifest from a dict leave on disk.
"""

from __future__ import annotations

import json
import warnings

import pytest
from record_tamper import edit_line, rechain

from harness.play.decisions import FailureCounts
from harness.records.chain import scan_chain
from harness.records.entries import CALLS_FILE, GAMES_FILE, MANIFEST_FILE, CallEntry, GameEntry, TranscriptError
from harness.records.transcript import (
    ResumePoint,
    TranscriptReader,
    TranscriptWriter,
    open_log_for_append,
    parse_log,
    read_log,
    read_manifest,
    resume_point,
)
from tests.harness.records import transcript_factories as factories

# Quieter entries than the shared factories' defaults: no failure counted, a call of one token each way.
QUIET_GAME = dict(failures=FailureCounts())
QUIET_CALL = dict(tokens_in=1, tokens_out=1, cost_usd=0.0, latency_s=0.1, cache_key="k", template_hash="h")


def game(index, phase="adapt"):
    return factories.game(index, phase, **QUIET_GAME)


def call(index, game_index, phase="adapt"):
    return factories.call(index, game_index, phase=phase, **QUIET_CALL)


def manifest_data():
    return {
        "run_id": "run-1",
        "config": {"model": "mock/echo"},
        "versions": {"python": "3.11"},
        "git": {"commit": "abc", "dirty": False},
        "template_hashes": {},
        "seeds": {"run": 7},
    }


def write_run(run_dir, games=2, orphan_calls=0, with_manifest=True):
    with TranscriptWriter(run_dir) as writer:
        if with_manifest:
            writer.write_manifest(manifest_data())
        for g in range(games):
            writer.append_call(call(g, g))
            writer.append_game(game(g))
        for extra in range(orphan_calls):
            writer.append_call(call(games + extra, games))


# ---------------------------------------------------------------- open_log_for_append


def test_an_auxiliary_log_loses_only_its_torn_last_line_and_appends_in_utf8(tmp_path):
    path = tmp_path / "beliefs.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":2}\n{"c":')
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        handle = open_log_for_append(path)
    with handle:
        handle.write('{"d":"\u00e9"}\n')
    assert path.read_bytes() == b'{"a":1}\n{"b":2}\n{"d":"\xc3\xa9"}\n'
    assert [str(w.message) for w in caught] == [f"{path}: resuming: dropping an incomplete last line (5 bytes)"]


def test_a_complete_or_missing_auxiliary_log_is_left_as_it_is(tmp_path):
    complete, missing = tmp_path / "strategies.jsonl", tmp_path / "new.jsonl"
    complete.write_bytes(b'{"a":1}\n')
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for path in (complete, missing):
            with open_log_for_append(path) as handle:
                handle.write('{"z":0}\n')
    assert complete.read_bytes() == b'{"a":1}\n{"z":0}\n' and missing.read_bytes() == b'{"z":0}\n'


# ---------------------------------------------------------------- the reader's refusals


def test_the_reader_names_a_missing_directory_and_a_missing_manifest(tmp_path):
    with pytest.raises(TranscriptError) as no_dir:
        TranscriptReader(tmp_path / "nope")
    assert (str(no_dir.value), no_dir.value.path) == (f"{tmp_path / 'nope'}: no such run directory", tmp_path / "nope")
    with pytest.raises(TranscriptError) as no_manifest:
        TranscriptReader(tmp_path).manifest()
    assert no_manifest.value.path == tmp_path / MANIFEST_FILE
    assert str(no_manifest.value) == (
        f"{tmp_path / MANIFEST_FILE}: the run has no manifest (it holds the run's config and the seal of its files)"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [('{"run_id": 5}', "invalid manifest: run_id: Input should be a valid string"), ("[1]", "invalid manifest: Input should be an object")],
)
def test_an_invalid_manifest_names_its_first_problem(tmp_path, text, message):
    data = {**manifest_data(), "run_id": 5} if text.startswith('{"run_id"') else None
    (tmp_path / MANIFEST_FILE).write_text(json.dumps(data) if data else text)
    with pytest.raises(TranscriptError) as invalid:
        read_manifest(tmp_path)
    assert (str(invalid.value), invalid.value.path) == (f"{tmp_path / MANIFEST_FILE}: {message}", tmp_path / MANIFEST_FILE)


@pytest.mark.parametrize(
    ("change", "problems"),
    [
        pytest.param(
            {"seed": "x", "failures": {"parse_error": "y"}},
            "failures.parse_error: Input should be a valid integer, unable to parse string as an integer; "
            "seed: Input should be a valid integer, unable to parse string as an integer",
            id="every problem with its field",
        ),
        pytest.param(
            {"forfeit_by": "black"},  # rewards (1, -1) say white lost
            "line: Value error, a game forfeited by black must have rewards (-1, 1), not (1, -1)",
            id="a whole-record problem is named line",
        ),
    ],
)
def test_a_corrupted_games_line_is_named_with_every_problem(tmp_path, change, problems):
    write_run(tmp_path)
    edit_line(tmp_path / GAMES_FILE, 1, lambda row: row.update(change))
    rechain(tmp_path / GAMES_FILE)
    with pytest.raises(TranscriptError) as corrupted:
        read_log(tmp_path / GAMES_FILE, GameEntry)
    assert str(corrupted.value) == f"{tmp_path / GAMES_FILE}:2: corrupted GameEntry line: {problems}"


def test_a_line_without_its_link_and_a_broken_link_are_refused_by_default(tmp_path):
    write_run(tmp_path)
    edit_line(tmp_path / GAMES_FILE, 1, lambda row: row.pop("prev_hash"))
    with pytest.raises(TranscriptError) as unlinked:
        read_log(tmp_path / GAMES_FILE, GameEntry)
    assert str(unlinked.value) == (
        f"{tmp_path / GAMES_FILE}:2: the line carries no prev_hash, which every schema 2 line "
        "has: it was edited (run 'arena replay' for every finding)"
    )
    rechain(tmp_path / GAMES_FILE)
    edit_line(tmp_path / GAMES_FILE, 0, lambda row: row.update(seed=1))
    with pytest.raises(TranscriptError) as broken:
        read_log(tmp_path / GAMES_FILE, GameEntry)
    assert str(broken.value).startswith(f"{tmp_path / GAMES_FILE}:2: the hash chain breaks here: ")
    assert str(broken.value).endswith(" (run 'arena replay' for every finding)")


def test_repeated_indices_are_named_by_the_reader_and_by_resume(tmp_path):
    write_run(tmp_path)
    edit_line(tmp_path / GAMES_FILE, 1, lambda row: row.update(game_index=0))
    edit_line(tmp_path / CALLS_FILE, 1, lambda row: row.update(call_index=0))
    rechain(tmp_path / GAMES_FILE)
    rechain(tmp_path / CALLS_FILE)
    game_text = f"{tmp_path / GAMES_FILE}:2: game (phase, index) ('adapt', 0) appears again (first on line 1)"
    call_text = f"{tmp_path / CALLS_FILE}:2: call index 0 appears again (first on line 1)"
    for read, text in (
        (TranscriptReader(tmp_path).games_log, game_text),
        (TranscriptReader(tmp_path).calls_log, call_text),
        (lambda: resume_point(tmp_path), game_text),
    ):
        with pytest.raises(TranscriptError) as repeated:
            read()
        assert str(repeated.value) == text + ": a record was double-written"
    edit_line(tmp_path / GAMES_FILE, 1, lambda row: row.update(game_index=1))
    rechain(tmp_path / GAMES_FILE)
    with pytest.raises(TranscriptError) as repeated_call:
        resume_point(tmp_path)
    assert str(repeated_call.value) == call_text + ": a record was double-written"


def test_one_torn_byte_is_a_torn_file_and_is_warned_about(tmp_path):
    write_run(tmp_path)
    with (tmp_path / GAMES_FILE).open("ab") as handle:
        handle.write(b"{")
    reader = TranscriptReader(tmp_path)
    assert reader.torn() == {GAMES_FILE: True, CALLS_FILE: False}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        reader.games_log()
    assert [str(w.message) for w in caught] == [f"{tmp_path / GAMES_FILE}: the last line is incomplete (interrupted write); it is ignored"]


# ---------------------------------------------------------------- the writer


def test_a_new_writer_makes_nested_directories_and_starts_at_zero(tmp_path):
    with TranscriptWriter(tmp_path / "a" / "b") as writer:
        assert writer.resumed_from == ResumePoint(0, 0) and writer.fsync is False
    assert (tmp_path / "a" / "b" / GAMES_FILE).exists()


def test_a_used_directory_is_refused_naming_the_file(tmp_path):
    write_run(tmp_path)
    with pytest.raises(TranscriptError) as used:
        TranscriptWriter(tmp_path)
    assert used.value.path == tmp_path / GAMES_FILE
    assert str(used.value) == f"{tmp_path / GAMES_FILE}: already holds records: resume the run, or choose a new run directory"


def test_closing_twice_rewrites_nothing_and_the_seal_is_timezone_aware(tmp_path):
    writer = TranscriptWriter(tmp_path)
    written = writer.write_manifest(manifest_data())  # a dict is accepted
    assert written.sealed_at.utcoffset() is not None
    manifest = json.loads((tmp_path / MANIFEST_FILE).read_text())
    manifest["schema_version"] = 1  # a legacy manifest is sealed as the current schema
    (tmp_path / MANIFEST_FILE).write_text(json.dumps(manifest))
    writer.close()
    text = (tmp_path / MANIFEST_FILE).read_text()
    assert text.startswith('{\n  "schema_version": 2,\n  "')  # indented by two
    sealed = read_manifest(tmp_path)
    assert sealed.sealed_at.utcoffset() is not None and sealed.sealed_at > written.sealed_at
    writer.close()
    assert (tmp_path / MANIFEST_FILE).read_text() == text


def test_resume_of_a_run_whose_calls_all_belong_to_an_unfinished_game(tmp_path):
    write_run(tmp_path, games=0, orphan_calls=2, with_manifest=False)  # and no manifest either
    with pytest.warns(UserWarning, match=r"dropping 2 call\(s\) of an unfinished game \(\d+ bytes\)$"):
        writer = TranscriptWriter(tmp_path, resume=True)
    with writer:
        assert writer.resumed_from == ResumePoint(0, 0)
        assert (tmp_path / CALLS_FILE).stat().st_size == 0
        writer.append_call(call(0, 0))
    assert [c.call_index for c in TranscriptReader(tmp_path).calls()] == [0]  # the chain starts again


def test_resume_says_what_it_drops_and_how_many_bytes(tmp_path):
    write_run(tmp_path, games=2, orphan_calls=1)
    calls_size, games_size = (tmp_path / CALLS_FILE).stat().st_size, (tmp_path / GAMES_FILE).stat().st_size
    for name in (GAMES_FILE, CALLS_FILE):
        with (tmp_path / name).open("ab") as handle:
            handle.write(b'{"x')
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        TranscriptWriter(tmp_path, resume=True).close()
    dropped_calls = (calls_size + 3) - (tmp_path / CALLS_FILE).stat().st_size
    assert dropped_calls > 3  # the orphan call's line and the torn fragment
    assert [str(w.message) for w in caught] == [
        f"{tmp_path / GAMES_FILE}: resuming: dropping an incomplete last game line (3 bytes)",
        f"{tmp_path / CALLS_FILE}: resuming: dropping 1 call(s) of an unfinished game and an incomplete last line ({dropped_calls} bytes)",
    ]
    assert (tmp_path / GAMES_FILE).stat().st_size == games_size


def test_resume_of_a_clean_run_drops_nothing(tmp_path):
    write_run(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        TranscriptWriter(tmp_path, resume=True).close()


def change_the_sealed_line(run_dir):
    edit_line(run_dir / GAMES_FILE, 0, lambda row: row.update(seed=5))
    rechain(run_dir / GAMES_FILE)


def lose_sealed_lines(run_dir):
    (run_dir / GAMES_FILE).write_bytes((run_dir / GAMES_FILE).read_bytes().split(b"\n")[0] + b"\n")


@pytest.mark.parametrize(
    ("games", "damage", "refusal"),
    [
        pytest.param(
            1,
            change_the_sealed_line,
            ":1: this is not the line the manifest sealed: the file was changed after the run was sealed",
            id="a seal of one line is checked too",
        ),
        pytest.param(
            2,
            lose_sealed_lines,
            ": the manifest seals 2 line(s), the file holds 1: lines were lost after the run was sealed",
            id="lost sealed lines",
        ),
    ],
)
def test_a_sealed_games_file_changed_or_cut_short_is_refused_in_words(tmp_path, games, damage, refusal):
    write_run(tmp_path, games=games)
    damage(tmp_path)
    with pytest.raises(TranscriptError) as refused:
        TranscriptWriter(tmp_path, resume=True)
    assert str(refused.value) == f"{tmp_path / GAMES_FILE}{refusal}, so it cannot be resumed safely ('arena replay' shows where)"


def test_parse_log_verifies_the_chain_by_default(tmp_path):
    write_run(tmp_path)
    edit_line(tmp_path / CALLS_FILE, 0, lambda row: row.update(ply=3))  # the link to line 2 breaks
    with pytest.raises(TranscriptError, match="the hash chain breaks here"):
        parse_log(scan_chain(tmp_path / CALLS_FILE), CallEntry)


def test_an_invalid_nested_manifest_field_is_named_by_its_path(tmp_path):
    (tmp_path / MANIFEST_FILE).write_text(json.dumps({**manifest_data(), "versions": {"python": 3}}))
    with pytest.raises(TranscriptError) as invalid:
        read_manifest(tmp_path)
    assert str(invalid.value) == f"{tmp_path / MANIFEST_FILE}: invalid manifest: versions.python: Input should be a valid string"
