"""``arena run`` under the referee: the model agent in a process of its own, the same run as in-process, marked as such."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.runs.llm_run import LlmRunConfig, run_llm


def _lines(path: Path) -> list[dict]:
    """A record file's lines without what depends on timing or on the line before (latency, chain hash)."""
    lines = []
    for text in path.read_text().splitlines():
        line = json.loads(text)
        line.pop("prev_hash", None)
        line.pop("latency_s", None)
        lines.append(line)
    return lines


@pytest.mark.parametrize(("agent", "model"), [("llm-policy", "mock/first-legal"), ("llm-strategist", "mock/reasoner")])
def test_a_refereed_run_is_the_in_process_run_and_says_it_was_enforced(tmp_path, agent, model):
    settings = dict(agent=agent, model=model, env=21, budget=8, eval_games=3, opponents=("random", "greedy"), seed=3,
                    checkpoints=(4, 8), batch=3, search_depth=1, endgame=4, concurrency=4)
    refereed = run_llm(LlmRunConfig(**settings), out=tmp_path, run_id="refereed")
    in_process = run_llm(LlmRunConfig(**settings, referee=False), out=tmp_path, run_id="in-process")
    files = ["games.jsonl", "calls.jsonl", "beliefs.jsonl"] + (["strategies.jsonl"] if agent == "llm-strategist" else [])
    for name in files:
        assert _lines(refereed / name) == _lines(in_process / name), name
    games = _lines(refereed / "games.jsonl")
    assert [g["phase"] for g in games] == ["adapt"] * 8 + ["eval"] * 6
    assert all(g["black"] == agent for g in games if g["phase"] == "adapt")
    metrics = json.loads((refereed / "metrics.json").read_text())
    assert metrics["referee"].startswith("referee process (enforced")
    assert "Referee: referee process (enforced" in (refereed / "report.md").read_text()
    unenforced = json.loads((in_process / "metrics.json").read_text())
    assert unenforced["referee"].startswith("in-process (UNENFORCED")
    assert "Referee: in-process (UNENFORCED" in (in_process / "report.md").read_text()
