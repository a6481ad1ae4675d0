"""`arena run --dry-run`: the estimate with no key and nothing written; real runs print it and refuse over --max-cost-usd.

There is no 16x16 environment among the built-in ones (0-55: layouts of 8x8, 12x10, 6x8, 10x10); env 4 (12x10) is the largest.
"""

from __future__ import annotations

import re

import pytest

from tests.harness.cli.cli_args import options


@pytest.fixture(autouse=True)
def no_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


@pytest.mark.parametrize("agent", ["llm-policy", "llm-strategist"])
@pytest.mark.parametrize("env", ["0", "4"])
def test_dry_run_prints_calls_tokens_and_dollars_without_a_key(invoke, tmp_path, agent, env):
    out = tmp_path / "runs"
    result = invoke("run", "--dry-run", "--agent", agent, "--model", "openai/gpt-4o-mini", "--env", env, "--out", out)
    assert result.exit_code == 0, result.output
    total = next(line for line in result.output.splitlines() if re.search(r"\btotal\b", line))
    calls, prompt, reply = (int(n.replace(",", "")) for n in re.findall(r"[\d,]+", total))
    assert calls > 0 and prompt > calls and reply > 0
    assert re.search(r"cost: \$\d+\.\d\d", result.output)
    assert "2,020 (2,000 adaptation + 20 evaluation)" in result.output
    assert not out.exists()  # nothing written


def test_a_run_estimated_over_max_cost_usd_does_not_start(invoke, tmp_path):
    out = tmp_path / "runs"
    result = invoke("run", "--model", "openai/gpt-4o-mini", "--env", "0", "--max-cost-usd", "0.5", "--out", out)
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "--max-cost-usd" in errors[0] and "Traceback" not in result.output
    assert not out.exists()


def test_a_real_run_prints_the_estimate_in_its_header(invoke, tmp_path):
    result = invoke(
        "run",
        *options(
            model="mock/first-legal",
            env="0",
            budget="1",
            eval_games="1",
            checkpoints="",
            in_process=True,
            max_cost_usd="0.01",
            out=tmp_path,
        ),
    )
    assert result.exit_code == 0, result.output
    assert re.search(r"estimate: 2 games .*model calls, .* prompt \+ .* reply tokens, \$0\.00", result.output)
