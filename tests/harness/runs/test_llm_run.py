"""arena run with llm-policy on mock models: end to end, failures, kill and resume, missing API key."""

import json

import pytest
from run_checks import assert_replays_and_reruns, interrupted_then_resumed

from engine import make_env
from harness.models.errors import ModelConfigError
from harness.records.transcript import TranscriptReader
from harness.runs.llm_run import LlmRunConfig, run_llm


def config(**changes):
    base = dict(model="mock/first-legal", env=21, budget=20, eval_games=2, opponents=("random",), seed=0)
    return LlmRunConfig(**{**base, **changes})


def replay_legally(game, rules):
    state = rules.initial_state()
    for move in game.moves:
        assert move in rules.legal_moves(state)
        state = rules.play(state, move)
    if game.forfeit_by is None:
        assert rules.is_over(state)
        assert rules.counts(state) == (game.black_discs, game.white_discs)


@pytest.mark.long
def test_200_game_run_end_to_end(tmp_path, monkeypatch):
    run_dir = run_llm(config(budget=200, eval_games=2, checkpoints=(10, 200)), out=tmp_path, run_id="r")
    reader = TranscriptReader(run_dir)
    games = reader.games()
    assert [g.game_index for g in games if g.phase == "adapt"] == list(range(200))
    assert [g.game_index for g in games if g.phase == "eval"] == [0, 1]
    assert [g.agent_colour for g in games if g.phase == "eval"] == ["black", "white"]
    rules = make_env(21).rules
    for game in games:
        replay_legally(game, rules)
    calls = reader.calls()
    assert [c.call_index for c in calls] == list(range(len(calls)))
    assert all(c.verdict == "legal" for c in calls if c.game_index is not None)
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["adapt_games"] == 200 and metrics["evaluation"]["random"]["games"] == 2
    assert [b["checkpoint"] for b in metrics["beliefs"]] == [10, 200]
    assert metrics["belief_failures"] == 2  # first-legal never answers with a belief: counted, not fatal
    assert metrics["failed_attempts"] == 2 and metrics["call_failures"] == {"belief_error": 2}  # every failed call counts
    assert metrics["tokens_in"] > 0
    assert (run_dir / "report.md").read_text().startswith("# llm-policy")
    assert reader.manifest().config["budget"] == 200 and reader.manifest().template_hashes
    assert_replays_and_reruns(run_dir, tmp_path, monkeypatch, 202)


def test_flaky_model_completes_with_failures_classified(tmp_path):
    run_dir = run_llm(config(model="mock/flaky-first-legal", budget=10, on_failure="random", backoff_base_s=0.01), out=tmp_path, run_id="r")
    games = TranscriptReader(run_dir).games()
    assert len(games) == 12
    rules = make_env(21).rules
    for game in games:
        replay_legally(game, rules)
    calls = TranscriptReader(run_dir).calls()
    failed = [c for c in calls if c.game_index is not None and c.verdict != "legal"]
    assert failed and all(c.failure_kind for c in failed)
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["failed_attempts"] == len([c for c in calls if c.failure_kind])  # moves' and the beliefs' failures
    assert sum(v for k, v in metrics["failures"].items() if k not in ("forfeits", "fallbacks")) == len(failed)


@pytest.mark.long
def test_kill_and_resume_equals_an_uninterrupted_run(tmp_path):
    whole, cut, kept = interrupted_then_resumed(
        config(budget=30), tmp_path, lambda entry: entry.phase == "adapt" and entry.game_index == 11
    )
    assert len(kept) == 12
    strip = lambda games: [g.model_dump() for g in games]  # noqa: E731
    assert strip(TranscriptReader(cut).games()) == strip(TranscriptReader(whole).games())
    calls_cut, calls_whole = TranscriptReader(cut).calls(), TranscriptReader(whole).calls()
    assert [(c.game_index, c.ply, c.reply) for c in calls_cut] == [(c.game_index, c.ply, c.reply) for c in calls_whole]
    metrics = json.loads((cut / "metrics.json").read_text())
    assert metrics["adapt_games"] == 30 and metrics["eval_games"] == 2


def test_missing_api_key_fails_before_any_game(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelConfigError, match="OPENAI_API_KEY"):
        run_llm(config(model="openai/gpt-4o-mini"), out=tmp_path / "runs")
    assert not (tmp_path / "runs").exists()


def test_cli_run_writes_the_run_directory(tmp_path):
    from typer.testing import CliRunner

    from harness.cli.main import app

    result = CliRunner().invoke(
        app,
        [
            "run",
            "--agent",
            "llm-policy",
            "--model",
            "mock/first-legal",
            "--env",
            "21",
            "--budget",
            "4",
            "--eval-games",
            "2",
            "--opponents",
            "random",
            "--out",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 0, result.output
    (run_dir,) = tmp_path.iterdir()
    assert {p.name for p in run_dir.iterdir()} >= {"manifest.json", "games.jsonl", "calls.jsonl", "metrics.json", "report.md"}
    bad = CliRunner().invoke(app, ["run", "--model", "mock/nope", "--env", "21", "--out", str(tmp_path / "x")])
    assert bad.exit_code == 2 and "unknown mock model" in bad.output


def test_privileged_opponents_are_marked_in_metrics_and_report(tmp_path):
    run_dir = run_llm(config(budget=2, eval_games=2, opponents=("random", "mcts:n=8")), out=tmp_path, run_id="p")
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["evaluation"]["mcts:n=8"]["privileged"] is True
    assert metrics["evaluation"]["random"]["privileged"] is False
    report = (run_dir / "report.md").read_text()
    assert "| mcts:n=8\\* |" in report and "privileged: simulator access to the true K" in report
