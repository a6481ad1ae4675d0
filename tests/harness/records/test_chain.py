"""Hash chains: what the writer and the cache write, what readers refuse, how resume continues the chain, the seal."""

from __future__ import annotations

import json
import warnings

import pytest
from record_tamper import edit_line, lines, rechain, write_lines
from test_transcript import call, game, manifest, write_run

from harness.models.cache import GENESIS_HASH, CacheFileError, ResponseCache, chain_line, line_hash, split_link
from harness.models.messages import ModelResponse
from harness.records.chain import scan_chain
from harness.records.entries import CACHE_FILE, CALLS_FILE, GAMES_FILE, TranscriptError
from harness.records.integrity import check_records
from harness.records.transcript import TranscriptReader, TranscriptWriter, read_manifest


def links(path):
    """(prev_hash, hash) of every line."""
    return [(json.loads(row)["prev_hash"], line_hash(row)) for row in lines(path)]


def assert_chained(path):
    previous = GENESIS_HASH
    for prev, own in links(path):
        assert prev == previous
        previous = own
    return previous


def test_chain_line_and_split_link_round_trip():
    for body in (b'{"a":1,"b":[2,3]}', b"{}", b'{"key":"k","response":{"text":"d3"}}'):
        line = chain_line("ab" * 32, body)
        assert line.startswith(b'{"prev_hash":"' + b"ab" * 32 + b'"') and json.loads(line)["prev_hash"] == "ab" * 32
        assert split_link(line) == ("ab" * 32, body)
    moved = json.dumps({"a": 1, "prev_hash": "cd" * 32}).encode()  # not first: still found
    assert split_link(moved) == ("cd" * 32, b'{"a":1}')
    assert split_link(b'{"a":1}') == (None, b'{"a":1}') and split_link(b"not json") == (None, b"not json")
    with pytest.raises(ValueError, match="one JSON object on one line"):
        chain_line(GENESIS_HASH, b"[1]")


def test_every_line_carries_the_hash_of_the_line_before_and_the_manifest_seals_them(tmp_path):
    with TranscriptWriter(tmp_path) as writer:
        sealed = writer.write_manifest(manifest())
        assert sealed.chains[GAMES_FILE].lines == 0 and sealed.chains[GAMES_FILE].last_hash == GENESIS_HASH
        writer.append_call(call(0, 0))
        writer.append_call(call(1, None, ply=None))  # a call outside a game
        writer.append_call(call(2, 0, 1))
        writer.append_game(game(0))
        writer.append_call(call(3, 0, 0, phase="eval"))
        writer.append_game(game(0, phase="eval", opponent="random", agent_colour="black"))
        assert read_manifest(tmp_path).chains[GAMES_FILE].lines == 0  # sealed when it closes
    seal = read_manifest(tmp_path).chains
    assert seal[GAMES_FILE].lines == 2 and seal[GAMES_FILE].last_hash == assert_chained(tmp_path / GAMES_FILE)
    assert seal[CALLS_FILE].lines == 4 and seal[CALLS_FILE].last_hash == assert_chained(tmp_path / CALLS_FILE)
    assert seal[GAMES_FILE].phases == {"adapt": 1, "eval": 1} and CACHE_FILE not in seal
    games = TranscriptReader(tmp_path).games()
    assert [g.call_indices for g in games] == [(0, 2), (3,)]  # each game lists its own calls
    check = check_records(tmp_path, budget=1, eval_games=1)
    assert check.ok and check.notes[0].startswith("complete: 1 of 1 adaptation games and 1 of 1")


def test_a_reader_refuses_a_broken_link_naming_the_line_and_verify_false_reads_on(tmp_path):
    write_run(tmp_path, games=3)
    edit_line(tmp_path / GAMES_FILE, 0, lambda r: r.update(black_discs=11))
    with pytest.raises(TranscriptError, match=r"games.jsonl:2: the hash chain breaks here: prev_hash is not the hash of line 1"):
        TranscriptReader(tmp_path).games()
    assert [g.black_discs for g in TranscriptReader(tmp_path, verify=False).games()] == [11, 10, 10]
    edit_line(tmp_path / CALLS_FILE, 2, lambda r: r.pop("prev_hash"))
    with pytest.raises(TranscriptError, match=r"calls.jsonl:3: the line carries no prev_hash"):
        TranscriptReader(tmp_path).calls()


def test_schema_1_lines_without_links_are_still_read(tmp_path):
    rows = [json.dumps(game(i).model_dump(mode="json", exclude={"call_indices"}) | {"schema_version": 1}).encode() for i in range(2)]
    write_lines(tmp_path / GAMES_FILE, rows)
    assert [g.legacy for g in TranscriptReader(tmp_path).games()] == [True, True]
    scan = scan_chain(tmp_path / GAMES_FILE)
    assert [f.describe() for f in scan.findings()] == [
        "games.jsonl:1: 2 line(s) carry no prev_hash (first here): written before hash chains or edited, so they cannot be checked"
    ]


def test_resume_after_a_torn_line_continues_the_chain_from_the_last_intact_line(tmp_path):
    write_run(tmp_path, games=2)
    with TranscriptWriter(tmp_path, resume=True) as writer:
        writer.append_call(call(4, 2, 0))
    intact = lines(tmp_path / GAMES_FILE)[-1]
    with (tmp_path / GAMES_FILE).open("ab") as handle:
        handle.write(chain_line(line_hash(intact), game(2).model_dump_json().encode())[:60])  # killed mid-write
    with (tmp_path / CALLS_FILE).open("ab") as handle:
        handle.write(b'{"prev_hash":"0')
    with pytest.warns(UserWarning, match="dropping"):
        writer = TranscriptWriter(tmp_path, resume=True)
    kept_call = lines(tmp_path / CALLS_FILE)[-1]
    assert writer.resumed_from == (2, 4) and json.loads(kept_call)["call_index"] == 3  # the unfinished game's call dropped
    with writer:
        writer.append_call(call(4, 2, 0))
        writer.append_game(game(2))
    assert links(tmp_path / GAMES_FILE)[2][0] == line_hash(intact)
    assert links(tmp_path / CALLS_FILE)[4][0] == line_hash(kept_call)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [g.call_indices for g in TranscriptReader(tmp_path).games()] == [(0, 1), (2, 3), (4,)]
    assert check_records(tmp_path, budget=3, eval_games=0).ok
    assert read_manifest(tmp_path).chains[GAMES_FILE].lines == 3


def test_resume_refuses_a_run_that_lost_or_changed_sealed_lines(tmp_path):
    write_run(tmp_path, games=3)
    path = tmp_path / GAMES_FILE
    original = path.read_bytes()
    write_lines(path, lines(path)[:2])
    with pytest.raises(TranscriptError, match=r"games.jsonl: the manifest seals 3 line\(s\), the file holds 2: lines were lost"):
        TranscriptWriter(tmp_path, resume=True)
    path.write_bytes(original)
    edit_line(path, 2, lambda r: r.update(rewards=[-1, 1]))
    rechain(path)  # even with the links made whole again
    with pytest.raises(TranscriptError, match=r"games.jsonl:3: this is not the line the manifest sealed"):
        TranscriptWriter(tmp_path, resume=True)
    assert path.read_bytes() != original  # nothing repaired or rewritten


def test_the_cache_is_chained_verified_on_load_and_continued_by_any_writer(tmp_path):
    path = tmp_path / CACHE_FILE
    first = ResponseCache(path)
    first.put("k1", ModelResponse(model="m", text="d3"))
    second = ResponseCache(path)  # a second writer on the same file: each append chains onto the file's last line
    second.put("k2", ModelResponse(model="m", text="e3"))
    first.put("k3", ModelResponse(model="m", text="f3"))
    assert_chained(path)
    assert "k2" in ResponseCache(path) and ResponseCache(path).get("k3").text == "f3"
    with path.open("ab") as handle:
        handle.write(b'{"prev_hash":"abc')  # killed mid-write: cut off on load, the chain goes on
    reloaded = ResponseCache(path)
    assert reloaded.skipped_torn_line
    reloaded.put("k4", ModelResponse(model="m", text="g3"))
    assert_chained(path) and len(lines(path)) == 4
    edit_line(path, 1, lambda r: r["response"].update(text="a1"))
    with pytest.raises(CacheFileError, match=r"cache.jsonl:3: the hash chain breaks here"):
        ResponseCache(path)


def test_the_cache_is_sealed_when_the_writer_closes(tmp_path):
    with TranscriptWriter(tmp_path) as writer:
        writer.write_manifest(manifest())
        cache = ResponseCache(tmp_path / CACHE_FILE)
        cache.put("k1", ModelResponse(model="m", text="d3"))
        cache.put("k2", ModelResponse(model="m", text="e3"))
    seal = read_manifest(tmp_path).chains[CACHE_FILE]
    assert seal.lines == 2 and seal.last_hash == line_hash(lines(tmp_path / CACHE_FILE)[-1])
