"""``arena demo --agent cwm`` and ``arena bench cwm``: the code-world-model agent from the command line, offline."""

from __future__ import annotations

import json

import pytest

from harness.sandbox.command import bubblewrap_problem

pytestmark = pytest.mark.skipif(bubblewrap_problem() is not None, reason=f"bubblewrap cannot run: {bubblewrap_problem()}")
BLITZ = "47"  # Majority/Blitz on the 6x8 board: ten placements a side, so MCTS games are short


@pytest.mark.long
def test_demo_with_the_cwm_agent_uses_the_offline_coder_and_hides_k_until_the_end(invoke, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ARENA_MODEL", raising=False)
    result = invoke("demo", "--agent", "cwm", "--env", BLITZ, "--budget", "6", "--games", "1", "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    before, marker, after = result.output.partition("Revealed after the run: ")
    assert marker, result.output
    assert "cwm with mock/coder (no API key set: the embedded offline model)" in before and "within 6 games" in before
    assert "Blitz" not in before and "K = " not in before and "K stays hidden" in before
    assert after.startswith("env 47 is Random Board 2 (6x8) / Majority/Blitz, true K = 101/100.")
    assert "cwm" in after and "belief after    6 games" in after
    (run_dir,) = tmp_path.iterdir()
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["cwm"]["counts"]["model_calls"] >= 1 and metrics["cwm"]["sandbox"] == "bubblewrap"


def test_demo_names_an_unknown_agent(invoke, tmp_path):
    result = invoke("demo", "--agent", "llm-oracle", "--out", str(tmp_path))
    assert result.exit_code == 2 and "--agent 'llm-oracle': choose one of llm-strategist, cwm, llm-policy" in result.output
    assert not list(tmp_path.iterdir())


def test_bench_cwm_prints_a_row_per_case_and_exits_by_its_verdicts(invoke):
    result = invoke("bench", "cwm", "--envs", BLITZ, "--random", "1", "--games", "2", "--simulations", "8", "--budget", "8")
    lines = result.output.splitlines()
    rows = [line for line in lines if "pass ✓" in line or "FAIL ✗" in line]
    assert len(rows) == 2, result.output
    assert rows[0].split()[:3] == ["env", "47", "6x8"] and "Random 0:0" in rows[1]
    assert "101/100" in rows[0] and "7/10" in rows[1]  # the true K of each case: a benchmark shows it
    assert result.exit_code == (0 if all("pass ✓" in row for row in rows) else 1), result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--games", "0"), "--games must be 1 or more"),
        (("--mode", "beam"), "--mode 'beam': choose one of conversation, tree"),
        (("--envs", "none", "--random", "0"), "no cases"),
    ],
)
def test_bench_cwm_names_bad_options(invoke, args, message):
    result = invoke("bench", "cwm", *args)
    assert result.exit_code == 2 and message in result.output, result.output
