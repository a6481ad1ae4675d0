"""``--max-cost-usd`` holds or is refused: a model litellm's price table does not know needs its price given.

Without ``--price-per-mtok-in``/``--price-per-mtok-out`` a cap on such a model is refused before anything runs (its
calls would count as $0 and the cap would never stop the run); with them every reply is costed at that price, and
the cap stops the run. Against the stub server on 127.0.0.1 (its replies report 12 prompt and 3 reply tokens).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from typer.testing import CliRunner

from harness.cli.main import app
from harness.models.messages import ModelResponse
from harness.models.options import ModelOptions
from harness.models.pricing import cost_cap_problem, price_known
from harness.records.transcript import TranscriptReader
from harness.runs.llm_run import CapReached, LlmRunConfig, run_llm
from harness.testing.stub_server import LegalMoves, StubServer


@pytest.fixture(autouse=True)
def dummy_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-a-secret")


def invoke(*args: object) -> Any:
    return CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "250", "NO_COLOR": "1"})


def run_args(api_base: str, out: Any, *extra: object) -> list[object]:
    return ["run", "--model", "openai/cap-test-model", "--api-base", api_base, "--env", "26", "--budget", "4", "--eval-games", "1",
            "--checkpoints", "", "--in-process", "--concurrency", "1", "--out", out, *extra]  # fmt: skip


def test_a_cap_on_an_unpriced_model_is_refused_before_anything_runs(tmp_path):
    result = invoke(*run_args("http://127.0.0.1:9/v1", tmp_path / "out", "--max-cost-usd", "0.5"))  # nothing is called
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in result.output, result.output
    for words in ("--max-cost-usd 0.5", "openai/cap-test-model is not in litellm's price table", "--price-per-mtok-in"):
        assert words in errors[0], errors[0]
    assert not (tmp_path / "out").exists()


def test_half_a_price_is_refused_naming_both_flags(tmp_path):
    result = invoke(*run_args("http://127.0.0.1:9/v1", tmp_path, "--max-cost-usd", "0.5", "--price-per-mtok-in", "3"))
    assert result.exit_code == 2 and "--price-per-mtok-in and --price-per-mtok-out" in result.output, result.output


def test_the_given_price_goes_into_the_estimate(tmp_path):
    price = ("--price-per-mtok-in", "1", "--price-per-mtok-out", "2")
    result = invoke(*run_args("http://127.0.0.1:9/v1", tmp_path, "--dry-run", *price))
    assert result.exit_code == 0 and "unpriced" not in result.output and "$0.08" in result.output, result.output


def test_with_the_price_given_every_reply_is_costed_and_the_cap_stops_the_run(tmp_path):
    # a stub reply: 12 prompt tokens x $0.001 + 3 reply tokens x $0.002 = $0.018 (no estimate here: the CLI's gate)
    with StubServer(responder=LegalMoves(0)) as stub:
        options = ModelOptions(api_base=stub.url, price_per_mtok_in=1000, price_per_mtok_out=2000)
        config = LlmRunConfig(model=stub.model, model_options=options, env=26, budget=4, eval_games=1, checkpoints=(),
                              referee=False, concurrency=1, max_cost_usd=0.05)  # fmt: skip
        with pytest.raises(CapReached):
            run_llm(config, out=tmp_path, run_id="r")
        requests = len(stub.requests)
    run_dir = tmp_path / "r"
    calls = TranscriptReader(run_dir).calls()
    assert all(call.cost_usd == pytest.approx(0.018) for call in calls if not call.cache_hit)
    assert requests == 3  # $0.036 after two calls, under the cap; $0.054 after the third: no fourth
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["cost_usd"] == pytest.approx(0.054) and metrics["stopped"].startswith("cost cap reached")
    config = json.loads((run_dir / "manifest.json").read_text())["config"]["model_options"]
    assert (config["price_per_mtok_in"], config["price_per_mtok_out"]) == (1000, 2000)  # a resume prices the same


def test_the_price_is_known_from_the_table_or_given():
    assert price_known("openai/gpt-4o-mini") and price_known("mock/first-legal")
    assert not price_known("openai/cap-test-model")
    given = ModelOptions(price_per_mtok_in=1.0, price_per_mtok_out=4.0)
    assert price_known("openai/cap-test-model", given) and cost_cap_problem("openai/cap-test-model", given, 1.0) is None
    assert cost_cap_problem("openai/cap-test-model", None, None) is None  # no cap: nothing to hold
    reply = given.price(ModelResponse(model="m", text="d3", prompt_tokens=1_000_000, completion_tokens=500_000))
    assert reply.cost_usd == pytest.approx(3.0) and "given price" in (reply.cost_note or "")
