"""arena replay / rerun / compare: offline checks of run directories."""

import json
import sys

import pytest
from record_tamper import SMALL_RUN, edit_line, forge, rechain
from run_checks import forbid_model_calls
from typer.testing import CliRunner

from engine import make_env
from engine.notation import format_move
from harness.cli.main import app
from harness.models.client import ModelClient
from harness.records.transcript import TranscriptError
from harness.runs.compare import compare_table
from harness.runs.llm_run import LlmRunConfig, run_llm
from harness.runs.replay import replay_run
from harness.runs.rerun import CacheOnlyClient, rerun
from harness.tournaments.plan import make_plan, round_robin
from harness.tournaments.tournament import run_tournament


def config(**changes):
    """The config of the ``base_run`` fixture (conftest.py), with changes."""
    return LlmRunConfig(**{**SMALL_RUN, **changes})


def rewrite_game(run_dir, line_index, change):
    path = run_dir / "games.jsonl"
    lines = path.read_text().splitlines()
    record = json.loads(lines[line_index])
    change(record)
    lines[line_index] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n")
    return record


def invoke(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_a_recorded_run_replays_with_zero_mismatches(run_dir):
    report = replay_run(run_dir)
    assert report.ok and report.games_checked == 12
    assert report.games[("adapt", "self")] == 10 and report.games[("eval", "random")] == 2
    result = invoke("replay", run_dir)
    assert result.exit_code == 0, result.output
    assert "replayed 12 games" in result.output and "no mismatches" in result.output
    assert "records: intact" in result.output and "complete: 10 of 10 adaptation games and 2 of 2 evaluation games" in result.output


def test_an_illegal_move_is_detected_with_the_game_index_and_ply(run_dir):
    rules = make_env(21).rules
    state = rules.initial_state()
    illegal = next(m for m in range(rules.layout.cells) if m not in rules.legal_moves(state))

    def tamper(record):
        record["moves"][0] = illegal

    rewrite_game(run_dir, 3, tamper)
    assert replay_run(run_dir).findings  # the chain shows the edit; forged links and seal leave it to the engine:
    forge(run_dir)
    report = replay_run(run_dir)
    assert report.findings == [] and len(report.mismatches) == 1
    mismatch = report.mismatches[0]
    assert (mismatch.phase, mismatch.game_index, mismatch.ply) == ("adapt", 3, 0)
    assert format_move(illegal, rules.layout) in mismatch.message and "not legal" in mismatch.message
    result = invoke("replay", run_dir)
    assert result.exit_code == 1
    assert "adapt game 3" in result.output and "ply 0" in result.output


def test_changed_rewards_and_counts_are_detected(run_dir):
    def tamper(record):
        assert record["forfeit_by"] is None
        record["rewards"] = [1, -1] if record["rewards"] != [1, -1] else [-1, 1]

    rewrite_game(run_dir, 11, tamper)  # eval game 1
    rewrite_game(run_dir, 2, lambda record: record.update(black_discs=record["black_discs"] + 1))
    forge(run_dir)  # links and seal recomputed: only the engine can tell
    report = replay_run(run_dir)
    assert report.findings == []
    found = {(m.phase, m.game_index) for m in report.mismatches}
    assert found == {("eval", 1), ("adapt", 2)}
    assert any("rewards" in m.message for m in report.mismatches if m.phase == "eval")
    assert any("final counts" in m.message for m in report.mismatches if m.phase == "adapt")
    result = invoke("replay", run_dir)
    assert result.exit_code == 1 and "eval game 1" in result.output


def test_a_corrupted_line_is_an_error_with_its_line_number(run_dir):
    path = run_dir / "games.jsonl"
    lines = path.read_text().splitlines()
    lines[4] = '{"game_index": 4, "phase": "adapt", "moves": oops'
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(TranscriptError) as error:
        replay_run(run_dir)
    assert error.value.line == 5
    result = invoke("replay", run_dir)
    assert result.exit_code == 2
    assert "games.jsonl:5" in result.output and "Traceback" not in result.output


def test_step_through_one_game_plain(run_dir):
    result = invoke("replay", run_dir, "--game", "0", "--plain")
    assert result.exit_code == 0, result.output
    out = result.output
    assert "adapt game 0" in out and "ply 0: black plays" in out
    assert "reply (attempt 0) [legal]:" in out
    assert any("a b c" in line and "reply (attempt 0)" in line for line in out.splitlines())  # beside the board
    assert "final: black" in out
    moves = json.loads((run_dir / "games.jsonl").read_text().splitlines()[0])["moves"]
    assert out.count("\nply ") == len(moves)
    assert invoke("replay", run_dir, "--game", "0", "--phase", "eval", "--plain").exit_code == 0
    missing = invoke("replay", run_dir, "--game", "99", "--plain")
    assert missing.exit_code == 2 and "no adapt game 99" in missing.output


def test_rerun_reproduces_exactly_with_zero_network_calls(run_dir, tmp_path, monkeypatch):
    forbid_model_calls(monkeypatch)
    report = rerun(run_dir, tmp_path / "again")
    assert report.reproduced, report.summary()
    assert report.games_compared == 12
    assert "reproduced exactly" in report.summary()
    result = invoke("rerun", run_dir, "--out", tmp_path / "cli")
    assert result.exit_code == 0 and "reproduced exactly" in result.output


def test_rerun_after_losing_a_cache_entry_reports_the_miss(run_dir, tmp_path):
    path = run_dir / "cache.jsonl"
    lines = path.read_text().splitlines()
    # Drop the reply to some request of a later game: the rerun stops there with a clear message.
    path.write_text("\n".join(lines[:40] + lines[41:]) + "\n")
    result = invoke("rerun", run_dir, "--out", tmp_path / "broken")
    assert result.exit_code == 2 and "cache.jsonl:41" in result.output and "hash chain breaks" in result.output
    rechain(path)  # the links recomputed: the lost reply still shows
    report = rerun(run_dir, tmp_path / "again")
    assert not report.reproduced
    assert report.cache_miss and "no cached reply" in report.cache_miss and "while playing" in report.cache_miss
    assert report.cache_disagreements and "the cache holds no reply for its request" in report.cache_disagreements[0]
    result = invoke("rerun", run_dir, "--out", tmp_path / "cli")
    assert result.exit_code == 1 and "cache miss" in result.output


def test_rerun_names_the_calls_whose_cached_reply_disagrees_with_the_calls_log(run_dir, tmp_path):
    record = edit_line(run_dir / "cache.jsonl", 5, lambda r: r["response"].update(text="I resign."))
    rechain(run_dir / "cache.jsonl")  # a consistent cache, but not the one the run met
    calls = [json.loads(line) for line in (run_dir / "calls.jsonl").read_text().splitlines()]
    affected = [c["call_index"] for c in calls if c["cache_key"] == record["key"]]
    assert affected
    report = rerun(run_dir, tmp_path / "again")
    assert not report.reproduced
    assert [d.split(":")[0] for d in report.cache_disagreements] == [f"call {i} (calls.jsonl" for i in affected]
    assert "is 'I resign.', the call recorded" in report.cache_disagreements[0]
    result = invoke("rerun", run_dir, "--out", tmp_path / "cli")
    assert result.exit_code == 1 and f"cache disagrees with the calls log: call {affected[0]} (calls.jsonl:" in result.output


def test_rerun_reports_the_first_divergence(run_dir, tmp_path):
    rules = make_env(21).rules

    def tamper(record):
        record["moves"][5] = next(m for m in range(rules.layout.cells) if m != record["moves"][5])

    rewrite_game(run_dir, 6, tamper)
    forge(run_dir)
    report = rerun(run_dir, tmp_path / "again")
    assert not report.reproduced and report.divergence.startswith("adapt game 6, ply 5: expected")


def test_cache_only_client_never_imports_litellm(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "litellm", None)
    from harness.models.cache import ResponseCache

    CacheOnlyClient("openai/gpt-4o-mini", ResponseCache(tmp_path / "none.jsonl"))


def test_compare_shows_runs_and_tournament_baselines(base_run, tmp_path):
    other = run_llm(config(seed=1, opponents=("random", "greedy")), out=tmp_path, run_id="other")
    plan = make_plan(round_robin(["random", "greedy"]), [21], 2, 0)
    run_tournament(plan, tmp_path / "baseline", jobs=1)
    table = compare_table([base_run, other, tmp_path / "baseline"], force=True)  # their opponents differ
    assert "| r | llm-policy (W=1) | mock/first-legal | 21 | 10/10 | random | 2 |" in table
    assert "| other | llm-policy (W=1) |" in table and "| greedy |" in table
    assert "| baseline | random | (baseline) | 21 |" in table
    result = invoke("compare", base_run, other, tmp_path / "baseline", "--force")
    assert result.exit_code == 0 and "other" in result.output and "baseline" in result.output
    assert replay_run(tmp_path / "baseline").ok  # tournament directories replay too
    bad = invoke("compare", tmp_path / "nope")
    assert bad.exit_code == 2


def test_a_call_that_failed_for_good_is_cached_and_replayed(tmp_path):
    from harness.models.cache import CachedFailure, ResponseCache
    from harness.models.errors import ModelCallError
    from harness.models.mock import MockModel, first_legal

    cache_path = tmp_path / "cache.jsonl"
    failing = MockModel(reply_fn=first_legal, schedule={0: "server_error", 1: "server_error"})
    client = ModelClient("mock/first-legal", mock=failing, cache=ResponseCache(cache_path), max_retries=1,
                         backoff_base_s=0.001)
    request = client.request([{"role": "user", "content": "Legal moves: d3, c4"}])
    import asyncio

    with pytest.raises(ModelCallError) as first:
        asyncio.run(client.complete(request))
    assert first.value.kind == "server_error" and failing.calls == 2
    reloaded = ResponseCache(cache_path)
    assert isinstance(reloaded.lookup(request.key(), 0), CachedFailure) and reloaded.lookup(request.key(), 1) is None
    # the same request again in this client: a fresh call (a re-ask after a failure), which succeeds
    assert asyncio.run(client.complete(request)).text == "d3" and failing.calls == 3
    # a new client on the saved cache meets the failure first, then the reply, without calling the model
    replayed = ModelClient("mock/first-legal", mock=failing, cache=ResponseCache(cache_path))
    with pytest.raises(ModelCallError, match="replayed from the response cache") as again:
        asyncio.run(replayed.complete(request))
    assert again.value.kind == "server_error" and again.value.errors == first.value.errors
    assert asyncio.run(replayed.complete(request)).cache_hit
    assert failing.calls == 3  # no new call


def test_rerun_reproduces_a_run_with_calls_that_failed_for_good(tmp_path, monkeypatch):
    from harness.models.cache import ResponseCache
    from harness.models.mock import MockModel, first_legal

    # every attempt of calls 3-5 and 20-22 fails: two moves fail for good (max_retries=2 -> 3 attempts each)
    schedule = {i: "server_error" for i in (3, 4, 5, 20, 21, 22)}
    client = ModelClient("mock/first-legal", mock=MockModel(reply_fn=first_legal, schedule=schedule), max_retries=2,
                         backoff_base_s=0.001, cache=ResponseCache(tmp_path / "runs" / "f" / "cache.jsonl"))
    run_dir = run_llm(config(budget=4, on_failure="random", checkpoints=(4,)), out=tmp_path / "runs", run_id="f", client=client)
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["failures"]["api_error"] == 2 and metrics["failures"]["fallbacks"] == 0  # each move re-asked, then fine
    forbid_model_calls(monkeypatch)
    report = rerun(run_dir, tmp_path / "again")
    assert report.reproduced, report.summary()
    assert report.games_compared == 6


def _replayed(env_id, moves, black, white, rewards, forfeit_by):
    from harness.runs.replay import ReplayGame, check_game

    env = make_env(env_id)
    game = ReplayGame(env_id, "adapt", 0, "self", env.layout.name, tuple(moves), black, white, tuple(rewards), forfeit_by, 1)
    return check_game(env.rules, env.condition, game)


def _finished_game(env_id=21, seed=0):
    import numpy as np

    from engine.protocol.policy import RandomPolicy
    from harness.play.game import play_game

    env = make_env(env_id)
    rng = np.random.default_rng(seed)
    return play_game(env.rules, env.condition, RandomPolicy(rng), RandomPolicy(rng))


def test_replay_compares_each_colours_final_count():
    record = _finished_game()
    assert _replayed(21, record.moves, record.black, record.white, record.rewards, None) == []
    for black, white in ((record.black, record.white + 1), (record.white, record.black), (record.black - 1, record.white)):
        found = _replayed(21, record.moves, black, white, record.rewards, None)
        assert any("final counts" in m.message for m in found), (black, white)


def test_replay_checks_who_forfeited():
    record = _finished_game()
    cut = record.moves[:7]  # white is to move after 7 placements from the start (no pass this early)
    assert all(m >= 0 for m in cut)
    rules = make_env(21).rules
    state = rules.initial_state()
    for move in cut:
        state = rules.play(state, move)
    black, white = rules.counts(state)
    assert _replayed(21, cut, black, white, (1, -1), "white") == []
    wrong_colour = _replayed(21, cut, black, white, (-1, 1), "black")
    assert any("forfeit by black recorded, but white is to move" in m.message for m in wrong_colour)
    assert any("rewards" in m.message for m in _replayed(21, cut, black, white, (-1, 1), "white"))
    not_recorded = _replayed(21, cut, black, white, (0, 0), None)
    assert any("not over" in m.message for m in not_recorded)
    finished_but_forfeit = _replayed(21, record.moves, record.black, record.white, (-1, 1), "black")
    assert any("the game is over" in m.message for m in finished_but_forfeit)
