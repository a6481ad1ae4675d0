"""The harness speed work: ``bench harness`` counts, concurrent evaluation, and caches that keep the text identical.

No timing is asserted: the in-flight peak is a count (calls entered and not yet
answered), and concurrent evaluation is compared with sequential play record by record.
"""

from __future__ import annotations

import json
import random

import pytest
from run_checks import interrupted_then_resumed

from engine.environments import make_env
from engine.protocol.observation import observe
from engine.protocol.record import GameRecord
from harness.bench.harness import IN_FLIGHT_TARGET, OVERHEAD_TARGET_S, ConcurrencyResult, bench_concurrency, bench_overhead
from harness.models.cache import ResponseCache
from harness.models.client import ModelClient
from harness.models.mock import make_mock
from harness.prompting.memory import EpisodeMemory, GameSummary
from harness.prompting.renderer import PromptRenderer, belief_context, fit_memory, memory_block, move_context
from harness.records.transcript import TranscriptReader
from harness.runs.llm_run import CACHE_FILE, LlmRunConfig, run_llm

TIMING_FIELDS = {"latency_s", "cache_hit"}  # which of two identical concurrent requests met the model is timing


@pytest.mark.parametrize(("games", "concurrency"), [(3, 8), (4, 2)])
def test_peak_in_flight_is_the_smaller_of_concurrency_and_games(tmp_path, games, concurrency):
    result = bench_concurrency(games=games, concurrency=concurrency, latency=0.05, out=tmp_path)
    assert result.peak_in_flight == result.client_peak_in_flight == min(concurrency, games) == result.expected_peak
    logged = TranscriptReader(tmp_path / "concurrency").calls()
    # the model saw at least the peak at once, and never more calls than the run logged (a cache hit is logged too)
    assert min(concurrency, games) <= result.calls <= len(logged)
    assert result.passed is None and "32" in result.measurable
    metrics = json.loads((tmp_path / "concurrency" / "metrics.json").read_text())
    assert metrics["eval_games"] == games and metrics["adapt_games"] == 0


def test_overhead_counts_the_model_moves(tmp_path):
    result = bench_overhead(games=2, out=tmp_path)
    calls = TranscriptReader(tmp_path / "overhead").calls()
    games = TranscriptReader(tmp_path / "overhead").games()
    assert result.games == 2 and [g.game_index for g in games] == [0, 1]
    # one model call per placement of the self-playing agent, both games' calls counted
    assert result.moves == len(calls) and {c.game_index for c in calls} == {0, 1}
    assert result.moves >= 2 * 4  # each 8x8 game has more than four placements per side, all the model's
    # the derived figures are the measured ones, not invented: per second and per move from the same total
    assert result.moves_per_second == result.moves / result.seconds
    assert result.seconds_per_move == result.seconds / result.moves
    assert result.passed == (result.seconds_per_move < OVERHEAD_TARGET_S)


def test_concurrency_verdicts():
    reached = ConcurrencyResult(64, 32, 0.05, 1000, 2.0, IN_FLIGHT_TARGET, IN_FLIGHT_TARGET)
    assert reached.passed is True and reached.ideal_calls_per_second == pytest.approx(640)
    assert ConcurrencyResult(64, 32, 0.05, 1000, 2.0, 20, 20).passed is False
    assert ConcurrencyResult(64, 32, 0.0, 1000, 2.0, 1, 32).passed is None  # nothing to wait on


def _config(**changes):
    base = dict(model="mock/first-legal", env=21, budget=4, eval_games=6, opponents=("random", "mcts:n=8"), seed=3, checkpoints=(2,))
    return LlmRunConfig(**{**base, **changes})


def _contents(run_dir):
    reader = TranscriptReader(run_dir)
    games = [g.model_dump() for g in reader.games()]
    calls = [{k: v for k, v in c.model_dump().items() if k not in TIMING_FIELDS} for c in reader.calls()]
    metrics = json.loads((run_dir / "metrics.json").read_text())
    metrics.pop("commitment")  # each run commits to its condition with a fresh random salt
    return games, calls, metrics


def test_concurrent_evaluation_writes_what_sequential_play_writes(tmp_path):
    sequential = run_llm(_config(concurrency=1, referee=False), out=tmp_path, run_id="sequential")  # as the other: in-process
    client = ModelClient(
        "mock/first-legal",
        cache=ResponseCache(tmp_path / "concurrent" / CACHE_FILE),
        concurrency=8,
        seed=3,
        mock=make_mock("mock/first-legal", seed=3, latency_s=0.01),
    )
    concurrent = run_llm(_config(concurrency=8), out=tmp_path, run_id="concurrent", client=client)
    assert client.max_in_flight > 1  # the evaluation games did overlap
    games, calls, metrics = _contents(concurrent)
    assert (games, calls, metrics) == _contents(sequential)
    assert [g["game_index"] for g in games if g["phase"] == "eval"] == list(range(12))


def test_an_interrupted_concurrent_evaluation_resumes_to_the_same_run(tmp_path):
    whole, cut, kept = interrupted_then_resumed(
        _config(concurrency=4), tmp_path, lambda entry: entry.phase == "eval" and entry.game_index == 5
    )
    assert [g.game_index for g in kept if g.phase == "eval"] == list(range(6))  # in order, no gap
    (games, calls, metrics), (games_whole, calls_whole, metrics_whole) = _contents(cut), _contents(whole)
    assert games == games_whole and calls == calls_whole
    for key in ("cache_hits", "cached_tokens_in", "cached_tokens_out"):  # calls made before the kill: cache hits on resume
        metrics.pop(key), metrics_whole.pop(key)
    assert metrics["tokens_in"] > 0  # the tokens of every call, as the uninterrupted run counts them
    assert metrics == metrics_whole


# ------------------------------------------------------------------ the caches keep the text identical


def _memories(layout, games: int = 45, seed: int = 0):
    """Memories of 0..games random summaries, built game by game with ``add`` (incremental bins)."""
    rng = random.Random(seed)
    cells = layout.playable_mask.bit_count()
    memory = EpisodeMemory()
    yield memory
    for index in range(1, games + 1):
        own = rng.randint(0, cells)
        opp = rng.randint(0, cells - own)
        memory = memory.add(GameSummary(index, index % 2, own, opp, cells - own - opp, rng.choice((-1, 0, 1))))
        yield memory


def test_incremental_rho_bins_equal_a_fresh_count():
    layout = make_env(5).layout
    for memory in _memories(layout):
        memory.rho_bins(10), memory.rho_bins(3)  # cached, then carried forward by add
        fresh = EpisodeMemory(memory.games)
        assert memory.rho_bins(10) == fresh.rho_bins(10) and memory.rho_bins(3) == fresh.rho_bins(3)
        assert memory.totals() == fresh.totals()
        assert all(g.rho_value == float(g.rho) for g in memory.games)


@pytest.mark.parametrize("env_id", [0, 5, 42])
def test_spliced_memory_gives_the_same_prompts(env_id):
    env = make_env(env_id)
    renderer = PromptRenderer()
    state = env.rules.initial_state()
    for number, memory in enumerate(_memories(env.layout, games=30, seed=env_id)):
        legal = env.rules.legal_moves(state)
        if not legal:
            state = env.rules.initial_state()
            legal = env.rules.legal_moves(state)
        obs = observe(env.rules, state)
        for tokens in (1500, 250, 1):
            block = memory_block(memory, tokens, renderer)
            assert block.view == fit_memory(memory, tokens, renderer)
            for show_legal, answer, feedback in ((True, "line", None), (False, "json", "e3 is not legal")):
                context = move_context(obs, block.view, number, 50, show_legal, answer, feedback)
                full = renderer.render("move", **context)
                assert renderer.render_reusing("move", {"memory": block.text}, **context) == full
            context = belief_context(block.view, number, 50)
            assert renderer.render_reusing("belief", {"memory": block.text}, **context) == renderer.render("belief", **context)
        state = env.rules.play(state, legal[number % len(legal)])


def test_observation_with_known_legal_moves_equals_observe():
    env = make_env(42)
    state = env.rules.initial_state()
    while legal := env.rules.legal_moves(state):
        expected, got = observe(env.rules, state), observe(env.rules, state, legal)
        assert (got.grid == expected.grid).all() and not got.grid.flags.writeable
        assert (got.legal_moves, got.colour, got.move_number, got.state) == (
            expected.legal_moves,
            expected.colour,
            expected.move_number,
            expected.state,
        )
        state = env.rules.play(state, legal[-1])


def test_records_are_unchanged_by_the_summary_arithmetic():
    layout = make_env(0).layout
    record = GameRecord(
        layout=layout.name,
        black_policy="a",
        white_policy="b",
        moves=(),
        black=40,
        white=24,
        rho_black=40 / 64,
        rho_white=24 / 64,
        rewards=(1, -1),
        plies=0,
    )
    summary = GameSummary.from_record(1, record, 1, layout)
    assert (summary.own, summary.opp, summary.rho_value, summary.rho_slot(10)) == (24, 40, 0.375, 3)
    assert GameSummary(2, 0, 64, 0, 0, 1).rho_slot(10) == 9 and GameSummary(3, 0, 0, 0, 64, 0).rho_slot(10) == 0
