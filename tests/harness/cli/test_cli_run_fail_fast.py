"""`arena run` against a dead or refusing endpoint stops at once with one error line; `--resume` finishes it later.

Through typer's CliRunner, litellm and the stub server on 127.0.0.1 (or a port with nothing
listening). The only clock in these tests is a hang guard (HANG_GUARD_S) on how soon a run stops: the stop itself
comes at the first attempt (no retries, no backoff); starting the agent's process is most of the time, and on a
loaded 2-core machine that alone can pass 30 s, so the issue's 30 s figure is measured, not asserted (README).
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

import pytest

from harness.models.mock import first_legal
from harness.records.transcript import TranscriptReader
from harness.testing.stub_server import StubServer, client_error, free_port, ok, stall, unauthorized
from tests.harness.cli.cli_args import MODEL, options, stub_run_args

ENDPOINT_DOWN_EXIT = 3
HANG_GUARD_S = 180  # a run that retried or waited on the dead endpoint would take far longer


@pytest.fixture(autouse=True)
def dummy_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-a-secret")


def legal_replies(stalls: list[int] | None = None, every: int = 0):
    """A responder answering the first legal move; with ``every``, it stalls each ``every``-th request (noted in ``stalls``)."""
    rng = random.Random(0)

    def respond(request, index):
        if every and index % every == every - 1:
            stalls.append(index)
            return stall()
        return ok(first_legal(request.get("messages", []), rng))

    return respond


def run_args(api_base: str, out: Path, *extra: str) -> list[str]:
    return stub_run_args(api_base, out, *extra, budget="2", eval_games="1")


def stopped_on_the_endpoint(result, *fragments: str) -> Path:
    """Exit 3, one error line with the fragments and the resume command, no traceback; the run directory."""
    assert result.exit_code == ENDPOINT_DOWN_EXIT, result.output
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, result.output
    for fragment in (*fragments, "arena run --resume "):
        assert fragment in errors[0], errors[0]
    return Path(errors[0].rsplit("arena run --resume ", 1)[1].strip())


def assert_budget_untouched(run_dir: Path) -> None:
    assert TranscriptReader(run_dir).games() == []  # no adaptation game recorded, no forfeit
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["adapt_games"] == 0 and metrics["stopped"]


def assert_completed(run_dir: Path) -> None:
    games = TranscriptReader(run_dir).games()
    assert [(g.phase, g.game_index) for g in games] == [("adapt", 0), ("adapt", 1), ("eval", 0)]
    assert all(g.forfeit_by is None for g in games)


def test_nothing_listening_stops_within_30_s_then_resume_completes(invoke, tmp_path):
    port = free_port()
    started = time.monotonic()
    result = invoke(*run_args(f"http://127.0.0.1:{port}/v1", tmp_path))
    assert time.monotonic() - started < HANG_GUARD_S
    run_dir = stopped_on_the_endpoint(result, f"http://127.0.0.1:{port}/v1", "connection refused")
    assert_budget_untouched(run_dir)
    with StubServer(responder=legal_replies(), port=port):  # the endpoint comes back
        resumed = invoke("run", "--resume", run_dir)
    assert resumed.exit_code == 0, resumed.output
    assert_completed(run_dir)


def test_a_401_stops_at_the_first_request_then_resume_completes(invoke, tmp_path):
    with StubServer(default=unauthorized()) as stub:
        started = time.monotonic()
        result = invoke(*run_args(stub.url, tmp_path))
        assert time.monotonic() - started < HANG_GUARD_S
        run_dir = stopped_on_the_endpoint(result, stub.url, "authentication failed", "HTTP 401")
        assert len(stub.requests) == 1
        assert_budget_untouched(run_dir)
        stub.responder = legal_replies()  # the key is fixed: every request now gets a legal move
        resumed = invoke("run", "--resume", run_dir)
    assert resumed.exit_code == 0, resumed.output
    assert_completed(run_dir)


def test_n_failed_calls_in_a_row_stop_the_run(invoke, tmp_path):
    with StubServer(default=client_error(400)) as stub:
        result = invoke(*run_args(stub.url, tmp_path, "--max-consecutive-failures", "2"))
        run_dir = stopped_on_the_endpoint(result, stub.url, "2 calls in a row failed", "bad_request HTTP 400")
        assert len(stub.requests) == 2
    assert_budget_untouched(run_dir)


def test_with_timeout_2_a_run_whose_endpoint_stalls_10_percent_of_requests_finishes(invoke, tmp_path):
    stalls: list[int] = []
    with StubServer(responder=legal_replies(stalls, every=10)) as stub:
        result = invoke(
            "run", *options(model=MODEL, api_base=stub.url, env="26", budget="1", eval_games="0", checkpoints="", timeout="2", out=tmp_path)
        )
        requests = len(stub.requests)
    assert result.exit_code == 0, result.output
    (run_dir,) = tmp_path.iterdir()
    calls = TranscriptReader(run_dir).calls()
    timeouts = [error for call in calls for error in call.errors if error.startswith("timeout")]
    assert stalls and len(stalls) == requests // 10
    assert len(timeouts) == len(stalls)  # every stalled request is a timeout, retried, in the call's record
    assert all(call.verdict == "legal" for call in calls)
    assert json.loads((run_dir / "metrics.json").read_text())["adapt_games"] == 1
