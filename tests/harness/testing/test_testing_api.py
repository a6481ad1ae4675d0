"""The scripted model, fault specs, the plugin's cheap import and ``arena stub-server`` by hand."""

from __future__ import annotations

import asyncio
import json
import select
import subprocess
import sys
import urllib.request

import pytest

from harness.models.client import ModelClient
from harness.models.errors import EndpointDown, ModelCallError
from harness.testing import FaultSpec, FaultSpecError, MockExhausted, ScriptedModel, ScriptError, ScriptLine

ASK = [{"role": "user", "content": "Legal moves: c4, d3"}]


def ask(client: ModelClient, content: str = "Legal moves: c4, d3") -> str:
    return asyncio.run(client.complete(client.request([{"role": "user", "content": content}], temperature=0.0))).text


def test_replies_in_order_then_one_clear_error_with_the_count():
    model = ScriptedModel(["c4", "d3"])
    assert [model.complete(ASK).text for _ in range(2)] == ["c4", "d3"]
    with pytest.raises(MockExhausted, match=r"all 2 used by 2 call\(s\); call 3 asked for one more"):
        model.complete(ASK)


def test_a_jsonl_script_and_a_bad_one(tmp_path):
    script = tmp_path / "s.jsonl"
    script.write_text('"c4"\n\n{"reply": "d3", "finish_reason": "length"}\n{"failure": "refusal"}\n', encoding="utf-8")
    model = ScriptedModel(script)
    replies = [model.complete(ASK) for _ in range(3)]
    assert [(r.text, r.finish_reason) for r in replies][:2] == [("c4", "stop"), ("d3", "length")]
    assert "sorry" in replies[2].text and model.used == 3 and model.remaining == 0
    script.write_text('"c4"\n{"fail": "x"}\n', encoding="utf-8")
    with pytest.raises(ScriptError, match=r"s.jsonl:2: a script line is a JSON string"):
        ScriptedModel(script)
    with pytest.raises(ScriptError, match="cannot read the script"):
        ModelClient(f"mock/script:{tmp_path / 'missing.jsonl'}")


def test_keyed_lines_answer_their_own_request_whatever_the_order():
    from harness.models.script import prompt_digest
    from harness.testing import load_script  # noqa: F401 - public

    a, b = [{"role": "user", "content": "A"}], [{"role": "user", "content": "B"}]
    model = ScriptedModel(
        [ScriptLine(reply="for a", prompt_sha256=prompt_digest(a)), ScriptLine(reply="for b", prompt_sha256=prompt_digest(b))]
    )
    assert [model.complete(b).text, model.complete(a).text] == ["for b", "for a"]
    with pytest.raises(MockExhausted, match="no scripted reply left for request 3"):
        model.complete(a)


def test_injected_failures_take_the_clients_real_paths():
    model = ScriptedModel(lambda request: "c4" if "c4" in request.prompt else "pass", failures={0: "server_error", 2: "auth"})
    client = ModelClient(model.name, mock=model, backoff_base_s=0.001)
    assert ask(client) == "c4" and client.usage.retries == 1  # a 500, retried
    with pytest.raises(EndpointDown, match="authentication failed"):
        ask(client, "again")  # a 401 stops the client at once
    assert model.calls == 3 and model.injected == {"server_error": 1, "auth": 1}
    assert model.requests[0].params == {"temperature": 0.0}
    bad = ScriptedModel(["c4"], failures={0: "bad_request"})
    with pytest.raises(ModelCallError, match="bad_request"):
        ask(ModelClient(bad.name, mock=bad))  # a client error: not retried
    with pytest.raises(ValueError, match="unknown failure kinds"):
        ScriptedModel(["c4"], failures={0: "gremlins"})


def test_fault_specs():
    assert FaultSpec.parse("0.2:rate_limit+illegal").rates == (("rate_limit", 0.1), ("illegal", 0.1))
    assert FaultSpec.parse("stall=0.05,malformed=0.1").total == pytest.approx(0.15)
    spec = FaultSpec.parse("0.2", seed=7)
    drawn = [spec.draw(i) for i in range(2000)]
    assert drawn == [spec.draw(i) for i in range(2000)] and 300 < sum(d is not None for d in drawn) < 500
    for bad in ("lots", "1.5", "0.2:gremlins", "rate_limit=0.7,stall=0.6"):
        with pytest.raises(FaultSpecError):
            FaultSpec.parse(bad)


def test_loading_the_plugin_imports_neither_litellm_nor_the_harness():
    code = (
        "import sys, harness.testing.plugin, harness.testing; "
        "print(sorted(m for m in ('litellm', 'harness.runs', 'harness.models', 'engine') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True).stdout
    assert out.strip() == "[]"


def test_arena_stub_server_by_hand_answers_a_legal_move_then_stops():
    command = [sys.executable, "-m", "harness.cli.main", "stub-server", "--requests", "1", "--faults", "0"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as server:
        started, _, _ = select.select([server.stdout], [], [], 120)  # a server that never starts fails, not hangs
        if not started:
            server.kill()
            pytest.fail(f"arena stub-server printed nothing in 120 s: {server.communicate()[1][-2000:]}")
        first = server.stdout.readline()
        url = first.split("listening on ", 1)[1].split(" ", 1)[0]
        body = json.dumps({"model": "stub-model", "messages": [{"role": "user", "content": "Legal moves: c4, f5"}]})
        request = urllib.request.Request(f"{url}/chat/completions", body.encode(), {"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as answer:
            reply = json.loads(answer.read())["choices"][0]["message"]["content"]
        output, _ = server.communicate(timeout=60)
    assert reply in ("c4", "f5") and server.returncode == 0
    assert "request 1: ok" in output and "stopped after 1 request(s); faults met: none" in output
