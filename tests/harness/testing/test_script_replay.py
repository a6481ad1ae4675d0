"""``arena run --model mock/script:FILE`` plays a run again move for move from the replies ``arena calls-to-script`` wrote."""

from __future__ import annotations

import json
import random

from typer.testing import CliRunner

from harness.cli.main import app
from harness.models.mock import first_legal
from harness.testing import ScriptedModel, read_run, run_arena, script_from_calls

WIDE = {"COLUMNS": "200", "NO_COLOR": "1"}
RUN = ("--env", "3", "--budget", "2", "--eval-games", "3", "--seed", "5", "--concurrency", "8")


def arena(*args: str) -> str:
    result = CliRunner().invoke(app, [str(a) for a in args], env=WIDE)
    assert result.exit_code == 0, result.output
    return result.output


def run_dir(output: str) -> str:
    return output.rsplit("run directory: ", 1)[1].strip()


def test_a_run_replayed_from_its_calls_plays_the_same_moves(tmp_path):
    first = read_run(run_dir(arena("run", "--model", "mock/random-legal", *RUN, "--in-process", "--out", tmp_path / "a")))
    script = tmp_path / "replies.jsonl"
    said = arena("calls-to-script", first.run_dir, "--out", script)
    lines = [json.loads(line) for line in script.read_text(encoding="utf-8").splitlines()]
    assert f"wrote {len(lines)} scripted replies" in said
    assert len(lines) == sum(not call.cache_hit for call in first.calls) and all("prompt_sha256" in line for line in lines)
    again = read_run(run_dir(arena("run", "--model", f"mock/script:{script}", *RUN, "--out", tmp_path / "b")))
    assert again.moves == first.moves and len(again.eval_games) == 3  # refereed this time: the agent's process read FILE
    assert [call.reply for call in again.calls] == [call.reply for call in first.calls]


def test_failed_attempts_are_scripted_too(tmp_path):
    def legal(request):
        return first_legal(request.messages, random.Random(0))

    failures = {0: "rate_limit", 4: "server_error", 5: "timeout", 9: "garbage", 12: "truncated"}
    first = run_arena(ScriptedModel(legal, failures=failures), out=tmp_path / "a", env=3, budget=1, eval_games=1)
    lines = script_from_calls(first.run_dir)
    assert [line.failure for line in lines if line.failure] == ["rate_limit", "server_error", "timeout"]
    assert sum(call.retries for call in first.calls) == 3  # the reply failures are replies: re-asked, not retried
    script = tmp_path / "replies.jsonl"
    script.write_text("".join(json.dumps(line.to_json()) + "\n" for line in lines), encoding="utf-8")
    replayed = ScriptedModel(script)
    again = run_arena(replayed, out=tmp_path / "b", env=3, budget=1, eval_games=1)
    assert again.moves == first.moves and replayed.remaining == 0
    assert replayed.injected == {"rate_limit": 1, "server_error": 1, "timeout": 1}
