"""The adaptive tournament's decision logic, on games drawn from a known-strength model (no engine)."""

from __future__ import annotations

import numpy as np
import pytest

from harness.sweep.adaptive import Standing, half_width, run_adaptive, run_round_robin
from harness.sweep.adaptive_bench import Pool, bench_adaptive
from harness.sweep.rating import Game

EASY = Pool(elos=(0.0, 400.0, 800.0, 1200.0), nu=0.5)  # neighbours 400 Elo apart: decided in a few dozen games a pair


def test_the_confidence_sequence_holds_at_every_look_under_the_null() -> None:
    """Fair games (p = 1/2, 20% draws), looked at after every game up to 1,000: few paths ever cross at a = 0.05."""
    rng = np.random.default_rng(7)
    paths, looks, a = 2000, 1000, 0.05
    scores = rng.choice([0.0, 0.5, 1.0], p=[0.4, 0.2, 0.4], size=(paths, looks))
    n = np.arange(1, looks + 1)
    deviation = np.abs(np.cumsum(scores - 0.5, axis=1)) / n
    bound = np.array([half_width(int(k), a) for k in n])
    crossed = np.any(deviation >= bound, axis=1).mean()
    assert crossed <= a  # Ville: at most a over all looks (in fact well under it)
    assert half_width(100, a) > half_width(400, a) > half_width(1600, a)


def test_adaptive_finds_the_true_order_with_fewer_games_than_the_round_robin() -> None:
    result = bench_adaptive(EASY, [0, 1])
    for seed in result:
        assert seed.adaptive.stopped_by == "decision" and seed.adaptive.ranking == EASY.true_order
        assert seed.round_robin.decided and seed.round_robin.ranking == EASY.true_order
        assert seed.adaptive.games < seed.round_robin.games


def test_the_next_pairing_is_the_widest_undecided_neighbour_pair() -> None:
    agents = ("a", "b", "c")
    standing = Standing(agents)
    for k in range(200):  # a beats b every game (decided); b and c split 4 games (undecided); a beats c
        standing = standing.record(Game("a", "b", 1.0))
        if k < 4:
            standing = standing.record(Game("b", "c", float(k % 2)))
        if k < 40:
            standing = standing.record(Game("a", "c", 1.0))
    assert standing.ranking()[0] == "a"
    assert standing.verdict(0, 1) == 1 and standing.verdict(1, 2) == 0
    assert set(standing.next_pairing() or ()) == {"b", "c"}
    assert not standing.decided()


def test_a_neighbour_pair_decided_against_the_fit_is_swapped() -> None:
    """The fit ranks b over c from their games against a, but c beat b 60 times in 60: the order follows the test."""
    standing = Standing(("a", "b", "c"))
    for _ in range(60):
        standing = standing.record(Game("b", "a", 1.0)).record(Game("c", "b", 1.0))
    for _ in range(400):
        standing = standing.record(Game("b", "a", 1.0))
    assert standing.verdict(1, 2) == -1
    order = standing.ranking()
    assert order.index("c") < order.index("b")


@pytest.mark.parametrize(("cap", "stopped_by"), [({"max_games": 20}, "game cap"), ({"max_cost_usd": 1.0}, "dollar cap")])
def test_caps_stop_an_undecided_tournament(cap: dict[str, float], stopped_by: str) -> None:
    equal = Pool(elos=(0.0, 0.1, 0.2), nu=0.5)  # nearly equal: never decided this soon
    outcome = run_adaptive(equal.agents, equal.player(0, cost_per_game=0.25), **cap)  # type: ignore[arg-type]
    assert outcome.stopped_by == stopped_by and not outcome.decided
    if stopped_by == "game cap":
        assert outcome.games <= 20
    else:
        assert outcome.cost_usd == 1.0 and outcome.games == 4  # no game starts once the cap is reached
    fixed = run_round_robin(equal.agents, equal.player(0, cost_per_game=0.25), **cap)  # type: ignore[arg-type]
    assert fixed.stopped_by == stopped_by and not fixed.decided
