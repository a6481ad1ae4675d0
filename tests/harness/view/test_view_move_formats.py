"""`arena view` of a run whose moves were function calls: each call shows its tool calls, its reasoning tokens and
its reasoning text (kept in calls.jsonl, never fed back into a prompt)."""

from __future__ import annotations

import json

from harness.models.cache import GENESIS_HASH, chain_line, line_hash
from harness.runs.llm_run import LlmRunConfig, run_llm
from harness.view.build import write_view
from tests.harness.view.test_view_browser import SHOWN, open_page


def test_a_tool_call_run_page_shows_each_calls_tool_calls_and_reasoning(browser, tmp_path):
    config = LlmRunConfig(
        model="mock/random-legal", env=21, budget=1, eval_games=1, seed=1, checkpoints=(), referee=False, move_format="tool"
    )
    run = run_llm(config, out=tmp_path, run_id="tool")
    calls = [json.loads(line) for line in (run / "calls.jsonl").read_text().splitlines()]
    first = next(c for c in calls if c["game_index"] == 0 and c["phase"] == "adapt" and c["ply"] == 4)
    assert first["tool_calls"][0]["name"] == "play_move" and first["reply"] == first["tool_calls"][0]["arguments"]
    first.update(reasoning="The corner is two moves away.", reasoning_tokens=7)
    _rewrite_chained(run / "calls.jsonl", calls)
    page = open_page(browser, write_view(run, tmp_path / "tool.html").page, "?game=0")
    page.wait_for(SHOWN)
    page.evaluate("arenaView.setPly(4)")
    where = f'.call[data-call-index="{first["call_index"]}"]'
    assert page.evaluate(f"document.querySelector('{where} .tool-calls').textContent") == f"play_move({first['reply']})"
    assert page.evaluate(f"document.querySelector('{where} .reasoning').textContent") == "The corner is two moves away."
    assert page.errors == []


def _rewrite_chained(path, records):
    """The records written again as a hash-chained file (their old links dropped)."""
    previous, lines = GENESIS_HASH, []
    for record in records:
        record.pop("prev_hash", None)
        line = chain_line(previous, json.dumps(record, separators=(",", ":")).encode())
        lines.append(line)
        previous = line_hash(line)
    path.write_bytes(b"".join(line + b"\n" for line in lines))
