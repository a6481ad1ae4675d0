"""End to end through real litellm HTTP: a run against the stub server with injected faults.

Each run injects one kind of fault into 30% of the requests (at least 20% asserted) (and one run mixes
all kinds): 429s with Retry-After, 500s, timeouts, malformed JSON bodies and truncated
replies. The run must complete with every game counted once, every failure classified,
and the client's retries visible in calls.jsonl.
"""

import json
import os
import random

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from harness.models.cache import ResponseCache  # noqa: E402
from harness.models.client import ModelClient  # noqa: E402
from harness.models.mock import first_legal  # noqa: E402
from harness.records.transcript import TranscriptReader  # noqa: E402
from harness.runs.llm_run import LlmRunConfig, run_llm  # noqa: E402
from harness.testing.stub_server import StubServer, malformed, ok, rate_limit, server_error, stall, truncated  # noqa: E402

MODEL = "openai/stub-model"
KEY = "test-key-not-a-secret"
TIMEOUT_S = 0.5  # the runs that inject timeouts; an ordinary reply may time out too on a loaded machine (see below)
# A timeout fault is a request the server takes and never answers (until it stops): the client's timeout always
# fires on it, whatever the load, rather than racing a slow reply against the timeout.
CALM_TIMEOUT_S = 10.0  # the other runs: no ordinary reply takes that long, so every attempt reaches the server
FAULTS = {
    "rate_limit": lambda: rate_limit(retry_after=0.01),
    "server_error": lambda: server_error(500),
    "timeout": stall,
    "malformed": malformed,
    "truncated": lambda: truncated("After weighing the corners my move is"),
}
RATE = 0.3  # per request; the run must see at least 20% (a margin for the draw)


def fault_responder(kinds: tuple[str, ...], seed: int):
    rng = random.Random(seed)
    injected: list[str] = []

    def respond(request: dict, index: int):
        if rng.random() < RATE:
            kind = rng.choice(kinds)
            injected.append(kind)
            return FAULTS[kind]()
        injected.append("ok")
        return ok(first_legal(request.get("messages", []), rng))

    return respond, injected


@pytest.fixture(scope="module")
def warm_litellm():
    with StubServer() as stub:  # litellm's first call in a process sets itself up: not inside a timed test
        import asyncio

        client = ModelClient(MODEL, api_base=stub.url, api_key=KEY, timeout_s=30)
        asyncio.run(client.complete(client.request([{"role": "user", "content": "hello"}])))


@pytest.mark.long
@pytest.mark.parametrize("kinds", [(kind,) for kind in FAULTS] + [tuple(FAULTS)], ids=[*FAULTS, "mixed"])
def test_run_completes_with_faults_classified_and_retries_recorded(tmp_path, warm_litellm, kinds):
    respond, injected = fault_responder(kinds, seed=len(kinds[0]))
    budget, eval_games = 2, 2
    with StubServer(responder=respond) as stub:
        run_dir = tmp_path / "runs" / "r"
        timeout_s = TIMEOUT_S if "timeout" in kinds else CALM_TIMEOUT_S
        client = ModelClient(
            MODEL,
            api_base=stub.url,
            api_key=KEY,
            timeout_s=timeout_s,
            max_retries=4,
            backoff_base_s=0.005,
            backoff_max_s=0.02,
            cache=ResponseCache(run_dir / "cache.jsonl"),
        )
        config = LlmRunConfig(
            model=MODEL,
            env=26,
            budget=budget,
            eval_games=eval_games,
            opponents=("random",),
            seed=0,
            checkpoints=(),
            on_failure="random",
            max_retries=3,
        )
        run_llm(config, out=tmp_path / "runs", run_id="r", client=client)
        requests = len(stub.requests)
    faults = [k for k in injected if k != "ok"]
    assert len(faults) >= 0.2 * requests, (len(faults), requests)
    assert set(faults) == set(kinds)

    reader = TranscriptReader(run_dir)
    games, calls = reader.games(), reader.calls()
    assert [g.game_index for g in games if g.phase == "adapt"] == list(range(budget))  # none lost, none twice
    assert [g.game_index for g in games if g.phase == "eval"] == list(range(eval_games))
    # every HTTP request is in calls.jsonl: a reply with its retries, or a call that failed for good
    answered = sum(1 + c.retries for c in calls if c.verdict != "call_failed")
    failed_for_good = [c for c in calls if c.verdict == "call_failed"]
    attempts_per_failure = client.max_retries + 1
    recorded = answered + attempts_per_failure * len(failed_for_good)
    # An attempt that timed out may have timed out before the server took the request (a loaded machine):
    # the log then holds attempts the server never counted, each one a recorded timeout. Nothing else may differ.
    timed_out = sum(error.startswith("timeout") for c in calls for error in c.errors) + len(failed_for_good)
    assert requests <= recorded <= requests + (timed_out if "timeout" in kinds else 0), (recorded, requests)
    for call in calls:
        assert len(call.errors) == call.retries  # each retry's cause, classified
        assert all(
            error.split(" ")[0].rstrip(":") in {"rate_limit", "server_error", "timeout", "malformed_response"} for error in call.errors
        )
        if call.verdict != "legal":
            assert call.failure_kind and call.reason  # classified, with the reason
    if set(kinds) & {"rate_limit", "server_error", "timeout", "malformed"}:
        assert sum(c.retries for c in calls) > 0
    if "truncated" in kinds:
        assert any(c.failure_kind == "truncated" and c.finish_reason == "length" for c in calls)
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["adapt_games"] == budget and metrics["eval_games"] == eval_games
    unusable = [c for c in calls if c.verdict not in (None, "legal")]
    assert metrics["failed_attempts"] == len(unusable)
