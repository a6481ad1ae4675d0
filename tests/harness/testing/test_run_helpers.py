"""The run helpers for matches, tournaments and bench paper (the plugin's arena_match, arena_tournament and
arena_bench fixtures), and the mock/echo and mock/fixed:MOVE models."""

from __future__ import annotations

import pytest

from engine.suite import SuiteSettings, write_suite
from harness.models.mock import UnknownMockModel, legal_moves_in, make_mock
from harness.testing import BenchRunResult, TournamentRunResult, read_bench_run, read_tournament_run

ASK = [{"role": "user", "content": "Board ...\nLegal moves: c4, d3, f5"}]
RING = """; name: Tiny ring
. . . . . .
. # . . # .
. . B W . .
. . W B . .
. # . . # .
. . . . . .
"""


def test_mock_echo_answers_the_first_legal_move_and_mock_fixed_always_its_move():
    assert [make_mock("mock/echo").complete(ASK).text for _ in range(2)] == ["c4", "c4"]
    fixed = make_mock("mock/fixed:z9")
    assert fixed.name == "mock/fixed:z9" and {fixed.complete(ASK).text for _ in range(3)} == {"z9"}
    with pytest.raises(UnknownMockModel, match="give the reply after the colon, e.g. mock/fixed:d3"):
        make_mock("mock/fixed:")
    with pytest.raises(UnknownMockModel, match=r"mock/echo.*mock/fixed:MOVE"):
        make_mock("mock/nope")


def test_arena_match_returns_the_parsed_run_with_the_model_agents_calls(arena_match):
    match = arena_match("llm-policy:model=mock/echo", "random", env=0, games=2, referee=False)
    assert isinstance(match, TournamentRunResult) and match.manifest["kind"] == "match"
    assert match.results.total_games == 2 and [game.game for game in match.games] == [0, 1]
    assert match.results.agents == ("llm-policy:model=mock/echo", "random")
    assert {game.a_colour for game in match.games} == {"black", "white"}
    assert match.calls and all(call["reply"] == legal_moves_in(call["messages"][-1]["content"])[0] for call in match.calls)
    assert all(call["verdict"] == "legal" and call["side"] == "a" for call in match.calls)
    assert read_tournament_run(match.run_dir) == match and "Model calls:" in match.report


def test_arena_tournament_on_a_custom_environment_and_an_id(arena_tournament, tmp_path):
    (tmp_path / "ring.txt").write_text(RING, encoding="utf-8")
    spec = f"layout={tmp_path / 'ring.txt'},condition=minority>0.3,turns=12"
    run = arena_tournament(["greedy", "random", "corner"], envs=[0, spec], games=1, referee=False)
    assert run.results.env_ids == (0, spec) and len(run.results.over_envs) == 3  # three pairings, round robin
    assert len(run.games) == 3 * 2 and {game.env_id for game in run.games} == {0, spec} and not run.calls
    assert 0.0 <= run.win_rate(2) <= 1.0
    versus = arena_tournament(["greedy"], vs=["random"], envs=[spec], games=2, referee=False)
    assert [row.agent_b for row in versus.results.over_envs] == ["random"]


def test_arena_bench_plays_published_and_held_out_environments(arena_bench, tmp_path):
    write_suite(SuiteSettings(count=2, seed=4, sizes=(6, 7)), tmp_path / "suite")
    bench = arena_bench(["interval"], envs=[5], suite=tmp_path / "suite", budget=3, games=1, checkpoint_games=1, referee=False)
    assert isinstance(bench, BenchRunResult) and bench.manifest["kind"] == "bench-paper"
    keys = [pair.env_id for pair in bench.pairs]
    assert keys[0] == 5 and len(keys) == 3 and all(str(key).startswith(str((tmp_path / "suite").resolve())) for key in keys[1:])
    assert all(pair.status == "ok" and pair.games_used <= 3 for pair in bench.pairs)
    assert bench.pair(5, "interval").final and bench.summary.plan == bench.plan
    assert "## Generalisation: the published 56 vs held-out environments" in bench.report
    assert read_bench_run(bench.run_dir) == bench
