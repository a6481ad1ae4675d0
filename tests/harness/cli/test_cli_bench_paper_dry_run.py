"""``arena bench paper --dry-run``: the plan's pairs and game counts, a wall-time estimate, model costs; nothing written."""

from __future__ import annotations

import re

import pytest

from harness.bench.paper_plan import make_paper_plan
from tests.harness.cli.cli_args import options

SMALL = dict(budget="4", games="1", checkpoint_games="1")  # a plan of a few games a pair


def _number(output: str, pattern: str) -> int:
    found = re.search(pattern, output)
    assert found, (pattern, output)
    return int(found.group(1).replace(",", ""))


def test_quick_dry_run_prints_what_a_quick_run_plays_and_writes_nothing(invoke, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a real run would create runs/<timestamp>-bench-paper here
    result = invoke("bench", "paper", "--quick", "--dry-run")
    assert result.exit_code == 0, result.output
    plan = make_paper_plan(quick=True)
    pairs = len(plan.tasks())
    below = [c for c in plan.checkpoints if c < plan.budget]  # the budget's checkpoint is the final evaluation
    checkpoint_games = len(below) * len(plan.checkpoint_opponents) * plan.checkpoint_games
    eval_games = len(plan.opponents) * plan.games
    assert _number(result.output, r"(\d+) pairs \(") == pairs
    assert _number(result.output, r"per pair: ([\d,]+) adaptation games") == plan.budget
    assert _number(result.output, r"; ([\d,]+) checkpoint games") == checkpoint_games
    assert _number(result.output, r"; ([\d,]+) evaluation games") == eval_games
    assert _number(result.output, r"in total: ([\d,]+) adaptation") == pairs * plan.budget
    assert _number(result.output, r"\+ ([\d,]+) checkpoint") == pairs * checkpoint_games
    assert _number(result.output, r"\+ ([\d,]+) evaluation games") == pairs * eval_games
    assert f"environments: {', '.join(map(str, plan.env_ids))}" in result.output
    for agent in plan.agents:
        assert f"  {agent}: ~" in result.output, result.output
    assert re.search(r"wall time: ~\d+ (s|min|h) at --jobs 2", result.output), result.output
    assert "how: timed" in result.output and "model calls: none (no model agent)" in result.output
    assert list(tmp_path.iterdir()) == []


def test_a_model_agent_shows_its_calls_tokens_and_cost(invoke, tmp_path):
    out = tmp_path / "run"
    result = invoke(
        "bench", "paper", *options(dry_run=True, envs="5", agents="llm-policy:model=mock/first-legal", **SMALL, in_process=True, out=out)
    )
    assert result.exit_code == 0, result.output
    calls = _number(result.output, r"llm-policy:model=mock/first-legal: ([\d,]+) model calls")
    assert calls > 4  # self-play asks for every move of both colours: many calls a game
    assert "$0.00 for mock/first-legal" in result.output
    assert not out.exists()


def test_a_real_model_is_estimated_with_no_key_and_never_played(invoke, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # a plan before spending needs no key
    result = invoke(
        "bench", "paper", *options(dry_run=True, envs="5", agents="llm-strategist:model=openai/gpt-4o-mini", **SMALL, out=tmp_path / "run")
    )
    assert result.exit_code == 0, result.output
    assert "not played: a real model would be called" in result.output
    assert _number(result.output, r"llm-strategist:model=openai/gpt-4o-mini: ([\d,]+) model calls") >= 1
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--resume", "RUN"], "--dry-run estimates a new run: leave out --resume"),
        (["--envs", "5", "--agents", "no-such-agent"], "unknown agent 'no-such-agent'"),
        (["--envs", "5", "--jobs", "0"], "--jobs must be 1 or more"),
        (["--envs", "5", "--budget", "0"], "--budget must be 1 or more"),
    ],
)
def test_bad_combinations_are_named(invoke, user_error, tmp_path, args, fragment):
    args = [str(tmp_path / "run") if a == "RUN" else a for a in args]
    result = invoke("bench", "paper", "--dry-run", *args)
    user_error(result, fragment)
    assert list(tmp_path.iterdir()) == []


def test_without_dry_run_a_real_model_still_needs_its_key(invoke, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = invoke("bench", "paper", *options(envs="5", agents="llm-policy:model=openai/gpt-4o-mini", **SMALL, out=tmp_path / "run"))
    assert result.exit_code == 2 and "needs OPENAI_API_KEY" in result.output, result.output
    assert not (tmp_path / "run").exists()


def test_an_opponent_trained_once_per_environment_is_timed_once_not_in_every_game(invoke, tmp_path, monkeypatch):
    import harness.envs.ppo as ppo

    trainings = []
    train = ppo.train_ppo

    def counted(*args, **kwargs):
        trainings.append(1)
        return train(*args, **kwargs)

    monkeypatch.setattr(ppo, "train_ppo", counted)
    result = invoke(
        "bench",
        "paper",
        *options(
            dry_run=True,
            envs="5",
            agents=["interval", "greedy"],
            opponents=["ppo-2k:games=16", "random"],
            budget="20",
            games="2",
            checkpoint_games="1",
            in_process=True,
            out=tmp_path / "run",
        ),
    )
    assert result.exit_code == 0, result.output
    assert trainings == [1]  # both agents' probes and every timed game use the one training, as a run's pairs do
    assert re.search(r"PPO-2K: trained once per environment and shared by its pairs: ~\d+ (s|min) each", result.output)
    assert not (tmp_path / "run").exists()
