"""``arena bench az``'s held-out boards and win-rate rows (cheap agents stand in for az)."""

from __future__ import annotations

import pytest

from harness.bench.az_eval import WinRow, held_out_layouts, win_rates


def test_held_out_boards_are_fixed_and_of_the_promised_kinds():
    boards = held_out_layouts()
    assert boards == held_out_layouts()
    assert [(b.rows, b.cols, len(b.obstacles)) for b in boards] == [(8, 8, 0), (8, 8, 4), (7, 7, 3), (10, 10, 8)]
    assert len(held_out_layouts(benchmark=True)) == 11


def test_win_rates_count_every_game_and_draws_half():
    rows = win_rates("greedy", ["random"], held_out_layouts()[:2], games=2, seed=3)
    assert [(r.board, r.opponent, r.games) for r in rows] == [("Standard 8x8", "random", 2),
                                                             ("held-out 8x8, 4 blocked", "random", 2)]
    row = WinRow("b", "o", 3, 2, 5)
    assert row.rate == pytest.approx(0.4) and row.interval[0] < 0.4 < row.interval[1]
    with pytest.raises(ValueError, match="games=0"):
        win_rates("greedy", ["random"], held_out_layouts()[:1], games=0)
