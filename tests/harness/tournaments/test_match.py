"""run_match: colour alternation, per-colour tallies, determinism, whole matches."""

import numpy as np
import pytest

from engine import BLACK, WHITE, make_env
from engine.protocol.policy import RandomPolicy
from harness.play.game import play_game
from harness.tournaments.match import MatchResult, Tally, run_match, tally
from harness.tournaments.stats import wilson


def named_random(name):
    def factory(rng):
        policy = RandomPolicy(rng)
        policy.name = name
        return policy

    return factory


def test_colours_alternate_and_tallies_split_by_colour():
    result = run_match(make_env(5), named_random("A"), named_random("B"), games=9, seed=11)
    assert result.a_colours == (BLACK, WHITE) * 4 + (BLACK,)
    for index, (colour, record) in enumerate(zip(result.a_colours, result.records)):
        assert (record.black_policy, record.white_policy) == (("A", "B") if index % 2 == 0 else ("B", "A"))
        assert result.a_rewards[index] == record.rewards[colour]
    assert (result.as_black.games, result.as_white.games) == (5, 4)
    overall, black, white = result.overall, result.as_black, result.as_white
    assert (overall.wins, overall.draws, overall.losses) == (
        black.wins + white.wins,
        black.draws + white.draws,
        black.losses + white.losses,
    )
    assert black == tally([result.a_rewards[i] for i in range(0, 9, 2)])
    assert (result.policy_a, result.policy_b) == ("A", "B")


def test_tally_rates_and_intervals():
    t = tally([1, 1, 0, -1, 1])
    assert t == Tally(3, 1, 1) and t.games == 5
    assert t.rate("win") == 0.6 and t.interval("draw") == wilson(1, 5)
    assert Tally().rate("win") == 0.0 and Tally().interval("lose") == (0.0, 1.0)


def test_same_seed_same_match_and_each_game_replays_alone():
    env = make_env(3)
    first = run_match(env, RandomPolicy, RandomPolicy, games=6, seed=2024)
    second = run_match(env, RandomPolicy, RandomPolicy, games=6, seed=2024)
    other = run_match(env, RandomPolicy, RandomPolicy, games=6, seed=2025)
    assert first == second
    assert [r.moves for r in first.records] != [r.moves for r in other.records]
    game_seed = np.random.SeedSequence(2024).spawn(6)[3]  # odd game: A plays white
    seed_a, seed_b = game_seed.spawn(2)
    a, b = RandomPolicy(np.random.default_rng(seed_a)), RandomPolicy(np.random.default_rng(seed_b))
    assert play_game(env.rules, env.condition, b, a).moves == first.records[3].moves


@pytest.mark.parametrize("env_id", [0, 32])
def test_random_match_sums_to_the_game_count(env_id):
    games = 40
    result = run_match(make_env(env_id), RandomPolicy, RandomPolicy, games=games, seed=env_id)
    assert result.games == games == len(result.a_rewards)
    assert result.overall.wins + result.overall.draws + result.overall.losses == games
    assert result.as_black.games + result.as_white.games == games
    rows = result.table()
    assert [row["scope"] for row in rows] == ["overall", "A black", "A white"]
    for row in rows:
        assert row["win"] + row["draw"] + row["lose"] == row["games"]
        assert row["win_rate"] + row["draw_rate"] + row["lose_rate"] == pytest.approx(1.0)
        for outcome in ("win", "draw", "lose"):
            assert row[f"{outcome}_low"] <= row[f"{outcome}_rate"] <= row[f"{outcome}_high"]
    text = result.render()
    assert f"env {env_id}" in text and "n=40" in text
    assert MatchResult.model_validate_json(result.model_dump_json()) == result


def test_empty_match():
    result = run_match(make_env(0), RandomPolicy, RandomPolicy, games=0, seed=0)
    assert result.games == 0 and result.overall == Tally()
    assert result.table()[0]["win_low"] == 0.0 and result.table()[0]["win_high"] == 1.0
    with pytest.raises(ValueError, match="games"):
        run_match(make_env(0), RandomPolicy, RandomPolicy, games=-1, seed=0)
