"""``arena run`` says how the budget and K were held: model agents still adapt in-process, marked unenforced."""

from __future__ import annotations

import json

from harness.runs.llm_run import LlmRunConfig, run_llm


def test_a_model_run_records_and_reports_that_it_was_not_refereed(tmp_path):
    config = LlmRunConfig(agent="llm-policy", model="mock/first-legal", env=14, budget=2, eval_games=2)
    run_dir = run_llm(config, out=tmp_path, run_id="r")
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["referee"].startswith("in-process (UNENFORCED")
    assert "Referee: in-process (UNENFORCED" in (run_dir / "report.md").read_text()
