"""``arena demo``: the llm-strategist on the offline reasoner, compared with baselines."""

from __future__ import annotations

import re

import numpy as np

from engine import make_env, parse_move
from engine.protocol.observation import observe
from harness.cli.demo import OFFLINE_MODEL, default_model, greedy_factory


def test_demo_adapts_then_compares_with_the_baselines(invoke, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ARENA_MODEL", raising=False)
    result = invoke("demo", "--budget", "8", "--batch", "4", "--games", "2", "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert "mock/reasoner" in result.output and "env 14" in result.output
    assert "belief after    8 games" in result.output
    for row in ("llm-strategist", "minimax:depth=3", "positional", "vs random", "vs greedy", "vs positional"):
        assert row in result.output
    before, marker, after = result.output.partition("Revealed after the run: ")
    assert marker, result.output
    for condition in ("Majority", "80%", "K = ", "0.8"):  # nothing of the condition until the run has ended
        assert condition not in before
    assert "K stays hidden" in before
    assert after.startswith("env 14 is Standard 8x8 / Majority<80%, true K = 4/5.")
    run_dirs = list(tmp_path.iterdir())
    assert len(run_dirs) == 1 and (run_dirs[0] / "metrics.json").exists()


def test_default_model_prefers_arena_model_then_a_key(monkeypatch):
    monkeypatch.delenv("ARENA_MODEL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert default_model()[0] == OFFLINE_MODEL
    monkeypatch.setenv("OPENAI_API_KEY", "placeholder")
    assert default_model()[0] == "openai/gpt-4o-mini"
    monkeypatch.setenv("ARENA_MODEL", "mock/strategist")
    assert default_model()[0] == "mock/strategist"


def test_greedy_takes_the_most_flips():
    rules = make_env(0).rules
    state = rules.initial_state()
    for move in ("e3", "f3"):  # black e3, white f3 ...
        state = rules.play(state, parse_move(move, rules.layout))
    obs = observe(rules, state)
    best = max(rules.flips(state, m).bit_count() for m in obs.legal_moves)
    make_greedy = greedy_factory(rules)
    for seed in range(5):
        move = make_greedy(np.random.default_rng(seed)).act(obs)
        assert rules.flips(state, move).bit_count() == best


def test_demo_of_llm_policy_with_hidden_legal_moves_records_the_track(invoke, tmp_path, monkeypatch):
    import json

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ARENA_MODEL", raising=False)
    result = invoke(
        "demo", "--agent", "llm-policy", "--legal-moves", "hidden", "--budget", "2", "--games", "1", "--env", "5", "--out", str(tmp_path)
    )
    assert result.exit_code == 0, result.output
    assert "llm-policy with mock/random-legal" in result.output and re.search(r"^\s*llm-policy\s+\d+%", result.output, re.MULTILINE)
    (run_dir,) = tmp_path.iterdir()
    config = json.loads((run_dir / "manifest.json").read_text())["config"]
    assert config["agent"] == "llm-policy" and config["legal_moves"] == "hidden"
    prompts = [
        message["content"]
        for line in (run_dir / "calls.jsonl").read_text().splitlines()
        for message in json.loads(line)["messages"]
        if message["role"] == "user"
    ]
    assert prompts and not any("Your legal moves:" in prompt for prompt in prompts)
    assert any("The legal moves are not listed" in prompt for prompt in prompts)


def test_demo_refuses_legal_moves_for_agents_that_never_see_a_move_prompt(invoke, tmp_path):
    result = invoke("demo", "--legal-moves", "hidden", "--out", str(tmp_path))
    assert result.exit_code == 2 and "only llm-policy sees move prompts" in result.output, result.output
    result = invoke("demo", "--agent", "llm-policy", "--legal-moves", "sometimes", "--out", str(tmp_path))
    assert result.exit_code == 2 and "choose shown or hidden" in result.output, result.output
    assert list(tmp_path.iterdir()) == []
