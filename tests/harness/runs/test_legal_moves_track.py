"""``--legal-moves shown|hidden``: a track recorded in the run; hidden, no move prompt lists the legal moves."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from harness.cli.main import app
from harness.records.transcript import TranscriptReader
from harness.runs.compare import legal_moves_track
from harness.runs.llm_run import LlmRunConfig, run_llm


def _run(tmp_path, track: str):
    config = LlmRunConfig(agent="llm-policy", model="mock/first-legal", env=5, budget=2, eval_games=1, seed=3,
                          checkpoints=(), legal_moves=track, referee=False)
    return run_llm(config, out=tmp_path / track, run_id=track)


def test_a_hidden_track_shows_no_legal_moves_and_is_recorded(tmp_path):
    shown, hidden = _run(tmp_path, "shown"), _run(tmp_path, "hidden")
    for run_dir, track in ((shown, "shown"), (hidden, "hidden")):
        config = TranscriptReader(run_dir).manifest().config
        assert config["legal_moves"] == track and legal_moves_track(LlmRunConfig.model_validate(config)) == track
    prompts = {run: [c.messages[-1]["content"] for c in TranscriptReader(run).calls() if c.messages]
               for run in (shown, hidden)}
    assert prompts[shown] and all("Your legal moves:" in text for text in prompts[shown])
    assert prompts[hidden] and not any("Your legal moves:" in text for text in prompts[hidden])
    metrics = json.loads((hidden / "metrics.json").read_text())
    assert metrics["calls"] == len(prompts[hidden])  # the mock finds no listed move: its replies fail, on record


def test_compare_refuses_to_pool_the_two_tracks(tmp_path):
    shown, hidden = _run(tmp_path, "shown"), _run(tmp_path, "hidden")
    result = CliRunner().invoke(app, ["compare", str(shown), str(hidden)])
    assert result.exit_code == 2 and "legal moves" in result.output, result.output
