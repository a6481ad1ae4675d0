"""``arena bench az``'s boards, win-rate rows and results file (cheap agents stand in for az), and the W/D/L record."""

from __future__ import annotations

import numpy as np
import pytest

from harness.bench.az_eval import board_set, held_out_layouts, read_results, win_rates
from harness.bench.record import WinDrawLoss


def test_held_out_boards_are_fixed_and_of_the_promised_kinds():
    boards = held_out_layouts()
    assert boards == held_out_layouts()
    assert [(b.rows, b.cols, len(b.obstacles)) for b in boards] == [(8, 8, 0), (8, 8, 4), (7, 7, 3), (10, 10, 8)]
    assert len(held_out_layouts(benchmark=True)) == 11
    assert [(b.rows, b.cols, len(b.obstacles)) for b in board_set("check")] == [(8, 8, 0), (6, 6, 0), (8, 8, 4)]
    assert len(board_set("benchmark")) == 7
    with pytest.raises(ValueError, match="board set 'nine'"):
        board_set("nine")


def test_win_rates_count_every_game_and_draws_half():
    rows = win_rates("greedy", ["random"], held_out_layouts()[:2], games=2, seed=3)
    assert [(r.board, r.opponent, r.record.games) for r in rows] == [
        ("Standard 8x8", "random", 2),
        ("held-out 8x8, 4 blocked", "random", 2),
    ]
    with pytest.raises(ValueError, match="games=0"):
        win_rates("greedy", ["random"], held_out_layouts()[:1], games=0)


def test_the_record_scores_draws_half_with_either_interval():
    wilson, normal = WinDrawLoss(3, 2, 5), WinDrawLoss(3, 2, 5, interval_method="normal")
    assert wilson.rate == normal.rate == pytest.approx(0.4) and wilson.games == 10
    assert wilson.interval != normal.interval
    for record in (wilson, normal):
        assert record.interval[0] < 0.4 < record.interval[1]
    assert WinDrawLoss(0, 0, 0, "normal").interval == (0.0, 1.0) and WinDrawLoss(0, 0, 0).rate == 0.0


def test_results_file_resumes_and_a_game_does_not_depend_on_its_companions(tmp_path):
    results = tmp_path / "az.jsonl"
    boards = board_set("check")[1:]
    win_rates("greedy", ["random", "corner"], boards, games=2, seed=1, results=results)
    assert len(results.read_text().splitlines()) == 8
    played = []
    rows = win_rates("greedy", ["corner", "random"], boards, games=3, seed=1, results=results, on_game=lambda: played.append(1))
    assert len(played) == 12 and len(results.read_text().splitlines()) == 12  # progress counts all 12; the file got the 4 missing
    fresh = win_rates("greedy", ["random"], boards, games=3, seed=1)
    assert [r.record for r in rows if r.opponent == "random"] == [r.record for r in fresh]
    assert len(read_results(results, "greedy", 2)) == 0  # another seed's games are not this run's
    results.write_text(results.read_text() + "not json\n")
    with pytest.raises(ValueError, match=r"az.jsonl:13: not a line"):
        read_results(results, "greedy", 1)


def test_a_random_opening_makes_deterministic_players_play_different_games():
    from agents.base import AgentContext
    from engine.environments import make_env
    from harness.bench.league import EpsilonPolicy
    from harness.play.game import play_game
    from harness.registry.specs import make_agent

    env = make_env(0)

    def moves(opening: int, seed: int) -> list[int]:
        rng = np.random.default_rng(seed)
        players = [
            EpsilonPolicy(make_agent("positional", AgentContext(env.rules), np.random.default_rng(0)), 0.0, rng, opening) for _ in range(2)
        ]
        return list(play_game(env.rules, env.condition, *players).moves)

    assert moves(0, 1) == moves(0, 2)  # the same game every time without an opening
    opened = {tuple(moves(4, seed)) for seed in range(6)}
    assert len(opened) > 1 and {game[:4] for game in opened} != {tuple(moves(0, 1)[:4])}
    with pytest.raises(ValueError, match="opening=-1"):
        win_rates("greedy", ["random"], board_set("check")[:1], games=1, opening=-1)
