"""``arena bench referee``: both ways play the same games; the table shows both times and their ratio."""

from __future__ import annotations

from harness.bench.referee import bench_referee


def test_both_ways_play_the_same_games():
    result = bench_referee(26, "adaptive-minimax:population=4,train_depth=1", budget=12, seed=2, repeats=2)
    assert result.same_games and result.games == 12 and result.repeats == 2 and len(result.samples) == 2


def test_the_command_prints_the_comparison(invoke):
    result = invoke("bench", "referee", "--env", "26", "--agent", "interval", "--budget", "10", "--repeats", "1")
    assert result.exit_code == (1 if "FAIL" in result.output else 0), result.output  # a timing: either, told by the exit code
    for text in ("referee overhead: interval on env 26", "in-process", "ratio", "<= 1.10", "yes"):
        assert text in result.output, result.output


def test_bad_options_are_user_errors(invoke, user_error):
    user_error(invoke("bench", "referee", "--budget", "0"), "--budget must be 1 or more")
    user_error(invoke("bench", "referee", "--repeats", "0"), "--repeats must be 1 or more")
    user_error(invoke("bench", "referee", "--env", "99"), "unknown environment id 99")
