"""``arena run --move-format tool|json`` against the stub server with its faults: every fault classified, the run
replays, reruns from its cache alone, audits clean, and a planted ghost move is flagged; compare never pools formats."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from harness.models.options import ModelOptions
from harness.records.transcript import TranscriptReader
from harness.runs.audit import audit_run, prompt_legal_list
from harness.runs.compare import IncomparableRuns, compare_rows
from harness.runs.llm_run import LlmRunConfig, run_llm
from harness.testing.faults import FaultSpec
from tests.run_checks import assert_replays_and_reruns

pytestmark = pytest.mark.long  # whole runs against the stub server
FAULTS = "0.3:rate_limit+server_error+malformed+truncated+illegal+no_call+other_function+bad_arguments"
# The reason each fault met by a move request is recorded with (its words in the call's reason).
REASONS = {
    "tool": {
        "no_call": "free text, not a play_move call",
        "other_function": "called resign instead of play_move",
        "bad_arguments": "not JSON",
    },
    "json": {"no_call": "free text, not a JSON object", "bad_arguments": "not JSON"},
}


def _run(stub, tmp_path: Path, move_format: str, name: str, seed: int = 5) -> Path:
    config = LlmRunConfig(
        agent="llm-policy", model=stub.model, env=14, budget=1, eval_games=1, seed=seed, checkpoints=(), referee=False,
        move_format=move_format, backoff_base_s=0.01, model_options=ModelOptions(api_base=stub.url),
    )  # fmt: skip
    return run_llm(config, out=tmp_path, run_id=name)


def _calls(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "calls.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize(("move_format", "via_litellm"), [("tool", False), ("json", False), ("tool", True)])
def test_a_structured_run_classifies_every_fault_replays_reruns_and_audits_clean(
    stub_server, tmp_path, monkeypatch, move_format, via_litellm
):
    if via_litellm:
        monkeypatch.setenv("ARENA_OPENAI_VIA_LITELLM", "1")
    stub_server.faults = FaultSpec.parse(FAULTS, seed=11)
    run = _run(stub_server, tmp_path, move_format, move_format)
    met, calls = stub_server.faults_met, _calls(run)
    assert TranscriptReader(run).manifest().config["move_format"] == move_format
    answered = [c for c in calls if c.get("tool_calls")] if move_format == "tool" else [c for c in calls if (c["reply"] or "")[:1] == "{"]
    assert len(answered) > 30 and all(json.loads(c["reply"])["move"] == c["parsed_move"] for c in answered if c["verdict"] == "legal")
    sent = stub_server.requests[0]["json"]
    assert ("tools" in sent and sent["tool_choice"] == "required") if move_format == "tool" else "response_format" in sent
    for fault, words in REASONS[move_format].items():
        assert met.get(fault, 0) == sum(words in (c.get("reason") or "") for c in calls), fault
    assert met.get("other_function", 0) and met.get("bad_arguments", 0)  # the seed meets every kind
    assert met.get("illegal", 0) == sum(c["failure_kind"] == "illegal_move" for c in calls)
    assert met.get("truncated", 0) == sum(c["failure_kind"] == "truncated" for c in calls)
    transient = met.get("rate_limit", 0) + met.get("server_error", 0) + met.get("malformed", 0)
    assert transient == sum(len(c["errors"]) for c in calls) and not any(c["verdict"] == "call_failed" for c in calls)
    assert_replays_and_reruns(run, tmp_path, monkeypatch, games=2)
    assert audit_run(run).findings == []
    _plant_ghost(run, move_format)
    assert [finding.kind for finding in audit_run(run).findings] == ["unrecorded_substitution"]


def _plant_ghost(run: Path, move_format: str) -> None:
    """The first accepted move's reply (and its call) made to name another legal move than the one played."""
    calls = _calls(run)
    position, call = next(
        (i, c)
        for i, c in enumerate(calls)
        if c.get("ply") is not None and c["verdict"] == "legal" and len(prompt_legal_list(c["messages"])) > 1
    )
    other = next(move for move in prompt_legal_list(call["messages"]) if move != call["parsed_move"])
    reply = json.dumps({"move": other})
    call.update(reply=reply, parsed_move=other, parse_span=[10, 10 + len(other)])
    if move_format == "tool":
        call["tool_calls"][0]["arguments"] = reply
    calls[position] = call
    (run / "calls.jsonl").write_text("".join(json.dumps(c) + "\n" for c in calls), encoding="utf-8")


def test_compare_never_pools_move_formats(stub_server, tmp_path):
    text, tool = _run(stub_server, tmp_path, "text", "text"), _run(stub_server, tmp_path, "tool", "tool")
    with pytest.raises(IncomparableRuns, match="move format differs"):
        compare_rows([text, tool])
    assert {row[-1] for row in compare_rows([text, tool], force=True)} == {"move format=text", "move format=tool"}
    assert Counter(c["tool_calls"] is None for c in _calls(text)) == Counter({True: len(_calls(text))})
