"""rerun's decisions one by one, fast (the mutation group `replay`, docs/testing.md).

The comparison (`_first_divergence`) and the report on games and texts built here; the
cache-only client on a two-line cache; `rerun` itself on one tiny run (tiny_run.py: 3 games,
about 0.4 s a rerun), its cache or games damaged in targeted ways.
"""

from __future__ import annotations

import asyncio
import json
import sys

import pytest
from record_tamper import forge
from tiny_run import write_tournament

from harness.models.cache import CachedFailure, ResponseCache
from harness.models.client import ModelClient
from harness.models.errors import ModelCallError
from harness.models.messages import ModelResponse
from harness.records.transcript import TranscriptError, TranscriptReader
from harness.runs.replay import llm_config
from harness.runs.rerun import CacheMiss, CacheOnlyClient, RerunReport, _first_divergence, _NoNetwork, _short, rerun
from harness.runs.rerun import cache_disagreements as disagreements_of

MISS = "(the rerun asked something the original run did not)"


def rows(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def write_rows(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


# ------------------------------------------------------------------------------ the comparison


def test_the_first_divergence_of_each_kind(tiny):
    games, config = TranscriptReader(tiny).games(), llm_config(tiny)
    adapt0, adapt1, eval0 = games
    assert _first_divergence(games, games, config, False) == (None, 3)
    moves = list(adapt1.moves)
    moves[5] = 0
    changed = adapt1.model_copy(update={"moves": tuple(moves)})
    assert _first_divergence(games, [adapt0, changed, eval0], config, False) == (
        "adapt game 1, ply 5: expected b1, got a1", 2)
    first = adapt0.model_copy(update={"moves": (19, *adapt0.moves[1:])})
    assert _first_divergence(games, [first, adapt1, eval0], config, False) == ("adapt game 0, ply 0: expected e3, got d3", 1)
    short = adapt0.model_copy(update={"moves": adapt0.moves[:-1]})
    assert _first_divergence(games, [short, adapt1, eval0], config, False) == ("adapt game 0: expected 60 plies, got 59", 1)
    assert _first_divergence([short], [adapt0], config, False) == ("adapt game 0: expected 59 plies, got 60", 1)
    won = eval0.model_copy(update={"rewards": (1, -1)})
    assert _first_divergence(games, [adapt0, adapt1, won], config, False) == (
        "eval game 0: expected rewards (-1, 1) (forfeit None), got (1, -1) (forfeit None)", 3)
    forfeit = eval0.model_copy(update={"forfeit_by": "black"})
    assert _first_divergence(games, [adapt0, adapt1, forfeit], config, False) == (
        "eval game 0: expected rewards (-1, 1) (forfeit None), got (-1, 1) (forfeit black)", 3)


def test_games_missing_from_or_added_by_the_rerun(tiny):
    games, config = TranscriptReader(tiny).games(), llm_config(tiny)
    adapt0, adapt1, eval0 = games
    assert _first_divergence(games, [adapt0, adapt1], config, False) == ("eval game 0: recorded, not played by the rerun", 2)
    assert _first_divergence(games, [adapt0, adapt1], config, True) == (None, 2)  # the cache miss says where it stopped
    assert _first_divergence(games, [adapt1, eval0], config, True) == (None, 0)
    extra = eval0.model_copy(update={"game_index": 1})  # an index adapt has, a phase eval has: still not in the original
    assert _first_divergence(games, [*games, extra], config, False) == (
        "eval game 1: played by the rerun, not in the original", 3)
    assert _first_divergence([adapt0], [adapt0, adapt1], config, False) == (
        "adapt game 1: played by the rerun, not in the original", 1)


def test_the_report():
    done = RerunReport("o", "n", 3, None, None)
    assert done.reproduced and done.summary() == "reproduced exactly: 3 games identical move by move (rerun in n)"
    assert not RerunReport("o", "n", 3, "d", None).reproduced and not RerunReport("o", "n", 3, None, "m").reproduced
    assert not RerunReport("o", "n", 3, None, None, ("x",)).reproduced
    everything = RerunReport("o", "n", 2, "adapt game 1, ply 5: x", "while playing eval game 0: y", ("a", "b"))
    assert everything.summary() == "\n".join([
        "cache disagrees with the calls log: a", "cache disagrees with the calls log: b",
        "cache miss: while playing eval game 0: y", "first divergence: adapt game 1, ply 5: x",
        "(2 games compared; rerun in n)"])
    assert RerunReport("o", "n", 0, "d", None).summary() == "first divergence: d\n(0 games compared; rerun in n)"


def test_short_cuts_after_sixty_characters():
    assert _short("x" * 60) == repr("x" * 60)
    assert _short("x" * 61) == repr("x" * 60 + "...")
    assert _short("") == "''"


# ------------------------------------------------------------------------------ the cache-only client


def ask(client, text):
    request = client.request([{"role": "user", "content": text}])
    return request, asyncio.run(client.complete(request))


def test_the_cache_only_client_answers_from_the_cache_and_never_calls(tmp_path):
    cache_path = tmp_path / "cache.jsonl"
    recorded = ModelClient("mock/first-legal", cache=ResponseCache(cache_path))
    request, reply = ask(recorded, "Legal moves: d3, c4")
    client = CacheOnlyClient("mock/first-legal", ResponseCache(cache_path))
    for _ in range(2):  # a reply answers every occurrence of its request
        assert asyncio.run(client.complete(request)).text == reply.text == "d3"
    assert client.misses == []
    other = client.request([{"role": "user", "content": "Legal moves: e6"}])
    with pytest.raises(CacheMiss) as miss:
        asyncio.run(client.complete(other))
    assert str(miss.value) == f"no cached reply for request {other.key()[:12]}… {MISS}"
    assert client.misses == [other.key()]
    with pytest.raises(CacheMiss, match="^the cache-only client was asked to call the model$"):
        asyncio.run(_NoNetwork().acomplete([], {}))


def test_the_cache_only_client_of_a_real_model_needs_no_litellm(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "litellm", None)  # importing it fails
    cache = ResponseCache(tmp_path / "cache.jsonl")
    client = CacheOnlyClient("openai/gpt-4o-mini", cache)
    request = client.request([{"role": "user", "content": "Legal moves: d3, c4"}])
    cache.put(request.key(), ModelResponse(model="openai/gpt-4o-mini", text="c4"))
    assert asyncio.run(client.complete(request)).text == "c4" and client.misses == []


def test_a_cached_failure_is_replayed_once_then_missed(tmp_path):
    cache = ResponseCache(tmp_path / "cache.jsonl")
    client = CacheOnlyClient("mock/first-legal", cache)
    request = client.request([{"role": "user", "content": "Legal moves: d3"}])
    cache.put(request.key(), CachedFailure(message="HTTP 500", kind="server_error"))
    with pytest.raises(ModelCallError) as failed:
        asyncio.run(client.complete(request))
    assert failed.value.kind == "server_error" and client.misses == []
    with pytest.raises(CacheMiss):
        asyncio.run(client.complete(request))
    assert client.misses == [request.key()]


# ------------------------------------------------------------------------------ rerun


def test_a_rerun_that_reproduces_the_run(run, tmp_path):
    report = rerun(str(run), str(tmp_path / "again"))
    assert report == RerunReport(run, tmp_path / "again" / "t-rerun", 3, None, None, ())
    assert [g.moves for g in TranscriptReader(report.rerun_dir).games()] == [g.moves for g in TranscriptReader(run).games()]


def test_rerun_refuses_a_tournament_and_a_run_without_a_readable_cache(run, tmp_path):
    directory = write_tournament(tmp_path / "tour", [])
    with pytest.raises(TranscriptError) as tournament:
        rerun(directory, tmp_path / "out")
    assert str(tournament.value) == f"{directory}: rerun needs an 'arena run' directory (a tournament makes no model calls)"
    cache = run / "cache.jsonl"
    text = cache.read_text(encoding="utf-8")
    cache.write_text(text.replace("{", "[", 1), encoding="utf-8")
    with pytest.raises(TranscriptError) as unreadable:
        rerun(run, tmp_path / "out")
    assert str(unreadable.value).startswith(f"{cache}: the response cache cannot be read: {cache}:1: unreadable cache line")
    cache.unlink()
    with pytest.raises(TranscriptError) as missing:
        rerun(run, tmp_path / "out")
    assert str(missing.value) == f"{cache}: the run has no response cache, so it cannot be rerun offline"


def drop_cached_reply(run, call_index):
    """Remove the cached reply of call ``call_index`` (links and seal forged); its request's key."""
    key = rows(run / "calls.jsonl")[call_index]["cache_key"]
    write_rows(run / "cache.jsonl", [r for r in rows(run / "cache.jsonl") if r["key"] != key])
    forge(run)
    return key


def test_a_rerun_stopped_by_a_cache_miss_says_where(run, tmp_path):
    first_eval_call = TranscriptReader(run).games()[2].call_indices[0]
    key = drop_cached_reply(run, first_eval_call)
    report = rerun(run, tmp_path / "again")
    line = first_eval_call + 1
    assert report.cache_disagreements == (f"call {first_eval_call} (calls.jsonl:{line}): the cache holds no reply for its "
                                          f"request {key[:12]}...",)
    assert report.cache_miss == f"while playing eval game 0: no cached reply for request {key[:12]}… {MISS}"
    assert (report.divergence, report.games_compared, report.reproduced) == (None, 2, False)


def test_a_cache_miss_after_the_last_recorded_game(run, tmp_path):
    games = run / "games.jsonl"
    eval_call = rows(games)[2]["call_indices"][0]
    write_rows(games, rows(games)[:2])
    key = drop_cached_reply(run, eval_call)
    report = rerun(run, tmp_path / "again")
    assert report.cache_miss == f"after the last game: no cached reply for request {key[:12]}… {MISS}"
    assert (report.divergence, report.games_compared) == (None, 2)


def test_a_rerun_that_plays_differently(run, tmp_path):
    path = run / "games.jsonl"
    records = rows(path)
    records[1]["moves"][5] = 0
    write_rows(path, records)
    forge(run)
    report = rerun(run, tmp_path / "again")
    assert (report.divergence, report.cache_miss, report.games_compared) == ("adapt game 1, ply 5: expected a1, got b1", None, 2)


def test_cache_disagreements_name_each_call_and_skip_calls_without_a_reply(run):
    calls = rows(run / "calls.jsonl")
    reply = calls[3]["reply"]
    calls[1]["cache_key"] = None
    calls[2]["reply"] = None
    calls[3]["reply"] = "y" * 70
    calls[4]["cache_key"] = "f" * 64
    write_rows(run / "calls.jsonl", calls)
    forge(run)
    cache = ResponseCache(run / "cache.jsonl")
    assert disagreements_of(TranscriptReader(run).calls_log(), cache) == (
        f"call 3 (calls.jsonl:4): the cache's reply to its request {calls[3]['cache_key'][:12]}... is {reply!r}, "
        f"the call recorded {'y' * 60 + '...'!r}",
        f"call 4 (calls.jsonl:5): the cache holds no reply for its request {'f' * 12}...",
    )
