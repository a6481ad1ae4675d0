"""Every failed request to the model, retried or failed for good, is counted by kind in metrics.json, report.md
and the viewer's overview; a run stopped by a failing endpoint reports the failures it met.

Runs against the stub server on 127.0.0.1 with scripted faults (by request index): 429 with Retry-After, 500,
a malformed body; the client retries each (5 retries, backoff of a millisecond).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.models.errors import EndpointDown, attempt_failures
from harness.models.options import ModelOptions
from harness.records.transcript import TranscriptReader
from harness.runs.llm_run import LlmRunConfig, run_llm
from harness.testing.stub_server import LegalMoves, StubServer, malformed, rate_limit, server_error
from harness.view.overview import failures
from harness.view.sources import index_calls, read_run

RETRIES = 5  # the model client's retries of a transient failure
pytestmark = pytest.mark.long  # end-to-end runs through the stub server (the first pays for importing litellm)


@pytest.fixture(autouse=True)
def dummy_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-a-secret")


def config(stub: StubServer, **options: Any) -> LlmRunConfig:
    return LlmRunConfig(
        model=stub.model, model_options=ModelOptions(api_base=stub.url, **options), env=26, budget=2, eval_games=1,
        opponents=("random",), checkpoints=(), referee=False, on_failure="random", backoff_base_s=0.001,
    )  # fmt: skip


def scripted(faults: dict[int, Any]):
    """A responder: the fault at its request index, else a legal move."""
    legal = LegalMoves(0)
    return lambda request, index: faults[index]() if index in faults else legal(request, index)


def requests_on_record(run_dir: Path) -> int:
    """The requests the calls on record made: each call's failed attempts, and its answer if it had one."""
    total = 0
    for call in TranscriptReader(run_dir).calls():
        retried, final = attempt_failures(call.errors, call.retries, call.verdict, call.reason, call.cache_hit)
        answered = not call.cache_hit and call.verdict != "call_failed"
        total += len(retried) + (final is not None) + answered
    return total


def test_retried_and_final_failures_are_counted_by_kind_in_metrics_report_and_viewer(tmp_path):
    faults = {0: lambda: rate_limit(0.01), 1: lambda: server_error(500), 2: malformed}  # the first call: 3 retries, then ok
    faults |= {index: lambda: server_error(500) for index in range(4, 4 + RETRIES + 1)}  # the second call fails for good
    with StubServer(responder=scripted(faults)) as stub:
        run_dir = run_llm(config(stub), out=tmp_path, run_id="r")
        requests = len(stub.requests)
    counted = json.loads((run_dir / "metrics.json").read_text())["attempt_failures"]
    expected = {"retried": {"malformed_response": 1, "rate_limit": 1, "server_error": 1 + RETRIES}, "failed": {"server_error": 1}}
    assert counted == expected
    assert requests == requests_on_record(run_dir)  # every request on record, each failure among them
    report = (run_dir / "report.md").read_text()
    assert (
        "Failed requests to the model, by kind: retried malformed_response 1, rate_limit 1, server_error 6; "
        "failed for good server_error 1." in report
    )
    assert "Failed attempts: 1 (api_error 1)" in report  # the move's attempt whose call failed for good
    shown = failures(source := read_run(run_dir), index_calls(source))
    assert shown["request retried: rate_limit"] == 1 and shown["request retried: server_error"] == 6
    assert shown["request retried: malformed_response"] == 1 and shown["request failed for good: server_error"] == 1


def test_a_run_without_failures_reports_none(tmp_path):
    with StubServer(responder=LegalMoves(0)) as stub:
        run_dir = run_llm(config(stub), out=tmp_path, run_id="r")
    assert json.loads((run_dir / "metrics.json").read_text())["attempt_failures"] == {"retried": {}, "failed": {}}
    assert "Failed requests" not in (run_dir / "report.md").read_text()


def test_a_run_stopped_by_a_failing_endpoint_reports_its_failures_and_a_resume_counts_them_once(tmp_path):
    with StubServer(responder=lambda request, index: server_error(500)) as stub:
        port, run_config = stub.port, config(stub, max_consecutive_failures=2)
        with pytest.raises(EndpointDown):
            run_llm(run_config, out=tmp_path, run_id="r")  # a call fails for good, the move is asked again: the same
        requests = len(stub.requests)
    run_dir = tmp_path / "r"
    assert TranscriptReader(run_dir).games() == []  # the game in progress is not written
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["attempt_failures"] == {"retried": {"server_error": 2 * RETRIES}, "failed": {"server_error": 2}}
    assert metrics["failed_attempts"] == 2 and requests == 2 * (RETRIES + 1) == requests_on_record(run_dir)
    report = (run_dir / "report.md").read_text()
    assert "Failed attempts: 2 (api_error 2)" in report and "failed for good server_error 2" in report
    with StubServer(responder=LegalMoves(0), port=port) as healthy:  # the endpoint comes back
        run_llm(resume=run_dir)
        assert requests + len(healthy.requests) == requests_on_record(run_dir)  # the failure met again from the cache: none
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["attempt_failures"] == {"retried": {"server_error": 2 * RETRIES}, "failed": {"server_error": 2}}
    assert metrics["failed_attempts"] == 2  # the replayed failure is counted once, by the game that met it
