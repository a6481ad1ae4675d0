"""Transcripts: record validation, secret refusal, append-only JSONL, corruption reports, torn tails and resume."""

import json
import warnings

import pytest
from pydantic import ValidationError
from record_tamper import rechain

from harness.records.entries import CALLS_FILE, GAMES_FILE, TRANSCRIPT_SCHEMA, GameEntry, TranscriptError, secret_paths
from harness.records.transcript import TranscriptReader, TranscriptWriter, resume_point
from tests.harness.records.transcript_factories import call, game, manifest

FAKE_KEY = "sk-" + "A1b2C3d4E5f6G7h8I9j0"


def write_run(run_dir, games=3, calls_per_game=2):
    with TranscriptWriter(run_dir) as writer:
        writer.write_manifest(manifest())
        index = 0
        for g in range(games):
            for ply in range(calls_per_game):
                writer.append_call(call(index, g, ply))
                index += 1
            writer.append_game(game(g))


def test_round_trip(tmp_path):
    write_run(tmp_path, games=3)
    reader = TranscriptReader(tmp_path)
    stored = reader.manifest()
    assert stored.model_dump(exclude={"created_at", "chains", "sealed_at"}) == manifest().model_dump(
        exclude={"created_at", "chains", "sealed_at"}
    )
    assert stored.chains[GAMES_FILE].lines == 3 and stored.chains[CALLS_FILE].lines == 6
    assert stored.chains[GAMES_FILE].phases == {"adapt": 3, "eval": 0}
    # the writer lists each game's calls
    assert reader.games() == [game(g, call_indices=(2 * g, 2 * g + 1)) for g in range(3)]
    assert [c.call_index for c in reader.calls()] == list(range(6))
    assert reader.calls()[0] == call(0, 0, 0)
    assert resume_point(tmp_path) == (3, 6)
    assert reader.games()[0].to_game_record().rewards == (1, -1)
    for name in (GAMES_FILE, CALLS_FILE):
        lines = (tmp_path / name).read_text().splitlines()
        assert all(json.loads(line)["schema_version"] == TRANSCRIPT_SCHEMA == 2 for line in lines)


def test_writer_accepts_dicts_but_validates_them(tmp_path):
    with TranscriptWriter(tmp_path) as writer:
        writer.append_game(game(0).model_dump())
        with pytest.raises(ValidationError):
            writer.append_game(game(1).model_dump() | {"phase": "warmup"})
        with pytest.raises(ValidationError):
            writer.append_call(call(0, 0).model_dump() | {"tokens_in": -1})
    assert len(TranscriptReader(tmp_path).games()) == 1
    assert (tmp_path / CALLS_FILE).read_text() == ""


def test_forfeit_requires_loss_rewards():
    assert game(0, forfeit_by="white", rewards=(1, -1)).forfeit_by == "white"
    with pytest.raises(ValidationError, match="forfeited by black"):
        game(0, forfeit_by="black", rewards=(1, -1))


def test_unknown_schema_version_is_refused():
    with pytest.raises(ValidationError, match="schema_version 9 is not supported"):
        GameEntry.model_validate(game(0).model_dump() | {"schema_version": 9})


@pytest.mark.parametrize(
    "config",
    [
        {"api_key": "x"},
        {"OPENAI_API_KEY": "x"},
        {"provider": {"auth_token": "x"}},
        {"token": "x"},
        {"hf_token": "x"},
        {"client_secret": "x"},
        {"db": [{"password": "x"}]},
        {"note": f"use {FAKE_KEY} for now"},
        {"headers": [FAKE_KEY]},
    ],
)
def test_manifest_refuses_secrets_without_echoing_them(config):
    with pytest.raises(ValidationError) as error:
        manifest(**config)
    text = str(error.value)
    assert "looks like a secret" in text
    assert FAKE_KEY not in text and "'x'" not in text


def test_manifest_allows_token_counts_and_harmless_values():
    # "sk-" inside a word is harmless; the string is split so that secret scanners stay quiet.
    ok = manifest(
        max_tokens=10, tokens_in=1, token_budget=5, max_completion_tokens=3, task="mas" + "k-generation-with-long-name", model="sk-short"
    )
    assert ok.config["max_tokens"] == 10
    assert secret_paths({"a": {"b": [1, {"api_key": 2}]}}) == ["a.b[1].api_key"]


def test_a_new_writer_refuses_a_used_run_directory(tmp_path):
    write_run(tmp_path, games=1)
    with pytest.raises(TranscriptError, match="already holds records"):
        TranscriptWriter(tmp_path)


def test_corrupted_middle_line_is_an_error_with_its_line_number_and_nothing_changes(tmp_path):
    write_run(tmp_path, games=3)
    path = tmp_path / GAMES_FILE
    lines = path.read_text().splitlines(keepends=True)
    lines[1] = lines[1].replace('"phase":"adapt"', '"phase":"adapt",,')
    path.write_text("".join(lines))
    before = path.read_bytes()
    with pytest.raises(TranscriptError) as error:
        TranscriptReader(tmp_path).games()
    assert error.value.line == 2 and error.value.path == path
    assert f"{path}:2:" in str(error.value)
    for attempt in (lambda: resume_point(tmp_path), lambda: TranscriptWriter(tmp_path, resume=True)):
        with pytest.raises(TranscriptError, match=":2:"):
            attempt()
    assert path.read_bytes() == before


def test_invalid_record_in_calls_names_the_field(tmp_path):
    write_run(tmp_path, games=1)
    path = tmp_path / CALLS_FILE
    path.write_text(path.read_text().replace('"verdict":"legal"', '"verdict":"maybe"', 1))
    with pytest.raises(TranscriptError, match=r"calls.jsonl:1: .*verdict"):
        TranscriptReader(tmp_path).calls()


def test_a_duplicated_game_is_reported(tmp_path):
    write_run(tmp_path, games=2)
    path = tmp_path / GAMES_FILE
    path.write_text(path.read_text() + path.read_text().splitlines(keepends=True)[0])
    with pytest.raises(TranscriptError, match=r"games.jsonl:3: the hash chain breaks here: prev_hash is not the hash of line 2"):
        TranscriptReader(tmp_path).games()
    rechain(path)  # links recomputed: the repeated index still shows
    with pytest.raises(TranscriptError, match=r"games.jsonl:3: .*appears again \(first on line 1\)"):
        TranscriptReader(tmp_path).games()


def test_torn_last_game_line_is_dropped_on_resume_with_its_calls(tmp_path):
    write_run(tmp_path, games=2)
    with TranscriptWriter(tmp_path, resume=True) as writer:  # a third game: its calls, then a torn game line
        writer.append_call(call(4, 2, 0))
        writer.append_call(call(5, 2, 1))
    games_path = tmp_path / GAMES_FILE
    complete = games_path.read_bytes()
    with games_path.open("ab") as handle:
        handle.write(game(2).model_dump_json().encode()[:40])  # kill -9 in the middle of the write

    with pytest.warns(UserWarning, match="incomplete"):
        assert len(TranscriptReader(tmp_path).games()) == 2
    assert TranscriptReader(tmp_path).torn() == {GAMES_FILE: True, CALLS_FILE: False}
    assert resume_point(tmp_path) == (2, 4)  # the unfinished game and its calls do not count
    assert games_path.read_bytes() != complete  # reading and resume_point modify nothing

    with pytest.warns(UserWarning, match="dropping"):
        writer = TranscriptWriter(tmp_path, resume=True)
    assert writer.resumed_from == (2, 4)
    assert games_path.read_bytes() == complete
    with writer:  # the game is played again
        writer.append_call(call(4, 2, 0, reply="c4"))
        writer.append_game(game(2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reader = TranscriptReader(tmp_path)
        assert [g.game_index for g in reader.games()] == [0, 1, 2]
        assert [c.call_index for c in reader.calls()] == [0, 1, 2, 3, 4]
        assert reader.calls()[-1].reply == "c4"
    assert resume_point(tmp_path) == (3, 5)


def test_torn_last_call_line_is_dropped_on_resume(tmp_path):
    write_run(tmp_path, games=1)
    calls_path = tmp_path / CALLS_FILE
    with calls_path.open("ab") as handle:
        handle.write(b'{"schema_version": 1, "call_ind')
    assert resume_point(tmp_path) == (1, 2)
    with pytest.warns(UserWarning):
        TranscriptWriter(tmp_path, resume=True).close()
    assert calls_path.read_text().endswith("\n") and len(calls_path.read_text().splitlines()) == 2


def test_a_complete_line_without_its_newline_still_does_not_count(tmp_path):
    write_run(tmp_path, games=1)
    with (tmp_path / GAMES_FILE).open("ab") as handle:
        handle.write(game(1).model_dump_json().encode())
    assert resume_point(tmp_path).games_done == 1


def test_calls_outside_games_are_kept_on_resume(tmp_path):
    write_run(tmp_path, games=1)
    with TranscriptWriter(tmp_path, resume=True) as writer:
        writer.append_call(call(2, None, ply=None, parsed_move=None, verdict=None))  # a belief checkpoint
    assert resume_point(tmp_path) == (1, 3)


def test_fsync_writer_and_empty_run(tmp_path):
    with TranscriptWriter(tmp_path / "run", fsync=True) as writer:
        writer.append_game(game(0, phase="eval", opponent="random", agent_colour="white"))
    assert resume_point(tmp_path / "run") == (1, 0)
    assert resume_point(tmp_path) == (0, 0)
    with pytest.raises(TranscriptError, match="no manifest"):
        TranscriptReader(tmp_path / "run").manifest()
    with pytest.raises(TranscriptError, match="no such run directory"):
        TranscriptReader(tmp_path / "missing")
