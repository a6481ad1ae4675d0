"""``arena audit``: the strict reader, and each kind of finding built into a copy of a real mock-model run.

The run is the module's small mock/first-legal run (``base_run``, a fresh copy per
test in ``run_dir``); a test rewrites one call record of it as a faulty harness
would have written it, and the audit, through the ``arena`` command, must flag it
(exit 1) while the untouched run stays clean (exit 0).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from engine.environments import make_env
from engine.notation import format_move
from harness.cli.main import app
from harness.prompting.moves import parse_reply
from harness.runs.audit import audit_call, audit_run, harness_version, prompt_legal_list, strict_read
from harness.runs.llm_run import LlmRunConfig, run_llm
from tests.harness.cli.cli_args import options

ENV = 21  # the env of the module's run (record_tamper.SMALL_RUN)


def _audit(*runs: Path) -> Any:
    return CliRunner().invoke(app, ["audit", *map(str, runs)], env={"COLUMNS": "200", "NO_COLOR": "1"})


def _calls(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "calls.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]


def _write_calls(run: Path, calls: list[dict[str, Any]]) -> None:
    (run / "calls.jsonl").write_text("".join(json.dumps(call) + "\n" for call in calls), encoding="utf-8")


def _first_game_call(calls: list[dict[str, Any]]) -> tuple[int, dict[str, Any], str, str]:
    """The first accepted move call whose prompt lists two or more moves: (position, call, played move, another)."""
    for position, call in enumerate(calls):
        legal = prompt_legal_list(call["messages"])
        if call.get("ply") is not None and call.get("verdict") == "legal" and len(legal) >= 2:
            other = next(move for move in legal if move != call["parsed_move"])
            return position, call, call["parsed_move"], other
    raise AssertionError("the run has no move call with two legal moves")


def _record_reply(run: Path, reply: str, recorded: str | None = None) -> None:
    """Replace the reply of the first such call; the record is what the harness's parser reads from it (or ``recorded``)."""
    calls = _calls(run)
    position, call, _, _ = _first_game_call(calls)
    parsed = parse_reply(reply, make_env(ENV).rules.layout)
    call.update(
        reply=reply,
        parsed_move=recorded or parsed.notation,
        parse_span=list(parsed.span),
        parse_candidates=[{"move": m, "source": s, "span": list(sp)} for m, s, sp in parsed.candidates],
    )
    calls[position] = call
    _write_calls(run, calls)


def _kinds(run: Path) -> list[str]:
    return [finding.kind for finding in audit_run(run).findings]


# ------------------------------------------------------------------------------ the records and the clean run


def test_calls_record_where_the_move_was_read(base_run):
    calls = [call for call in _calls(base_run) if call.get("parsed_move")]
    assert calls
    for call in calls:
        start, end = call["parse_span"]
        assert call["reply"][start:end].lower() == call["parsed_move"]
        assert call["parse_candidates"] == []  # the mock replies with a move and nothing else


def test_a_clean_run_passes(base_run):
    result = _audit(base_run)
    assert result.exit_code == 0, result.output
    assert "0 finding(s)" in result.output and "clean" in result.output
    assert harness_version() in result.output


@pytest.mark.long
def test_a_run_with_recorded_failures_passes(tmp_path):
    # flaky mock: empty, garbage, truncated and refused replies and failed calls, each recorded as a failure
    run = run_llm(
        LlmRunConfig(model="mock/flaky-first-legal", env=ENV, budget=3, eval_games=1, opponents=("random",), seed=4, checkpoints=()),
        out=tmp_path,
        run_id="flaky",
    )
    assert any(call.get("failure_kind") for call in _calls(run))
    result = _audit(run)
    assert result.exit_code == 0, result.output


# ------------------------------------------------------------------------------ the four findings the issue names


def test_first_line_one_move_final_line_another_is_flagged(run_dir):
    _, _, played, other = _first_game_call(_calls(run_dir))
    _record_reply(run_dir, f"MOVE: {played}\nOn second thought the other corner is stronger.\n{other}")
    result = _audit(run_dir)
    assert result.exit_code == 1, result.output
    assert "not_final_answer" in result.output and f"{played} was taken, the final answer is {other}" in result.output
    assert "several_answers" in result.output


def test_two_json_objects_are_flagged(run_dir):
    _, _, played, other = _first_game_call(_calls(run_dir))
    _record_reply(run_dir, f'{{"move": "{other}"}}\n{{"move": "{played}"}}')
    assert _kinds(run_dir) == ["several_answers"]
    result = _audit(run_dir)
    assert result.exit_code == 1 and "2 JSON answers" in result.output, result.output


def test_a_reply_repeating_the_prompts_legal_list_is_flagged(run_dir):
    _, call, played, _ = _first_game_call(_calls(run_dir))
    legal = prompt_legal_list(call["messages"])
    _record_reply(run_dir, f"Your legal moves: {', '.join(legal)}\nMOVE: {played}")
    assert _kinds(run_dir) == ["prompt_echo"]
    assert _audit(run_dir).exit_code == 1


def test_a_record_whose_move_differs_from_the_reply_without_a_failure_is_flagged(run_dir):
    _, _, played, other = _first_game_call(_calls(run_dir))
    _record_reply(run_dir, f"MOVE: {other}", recorded=played)  # the reply says one move, the record another
    assert _kinds(run_dir) == ["unrecorded_substitution"]
    result = _audit(run_dir)
    assert result.exit_code == 1 and f"the record's move {played} is not in the reply" in result.output, result.output


def test_a_played_move_that_differs_from_the_accepted_reply_is_flagged(run_dir):
    _, _, played, other = _first_game_call(_calls(run_dir))
    _record_reply(run_dir, other)  # the reply and its record agree on `other`; the game played `played`
    assert _kinds(run_dir) == ["unrecorded_substitution"]
    result = _audit(run_dir)
    assert f"{played} was played, the accepted reply named {other}" in result.output


def test_a_recorded_span_outside_the_final_answer_is_flagged(run_dir):
    calls = _calls(run_dir)
    position, call, played, _ = _first_game_call(calls)
    call.update(reply=f"{played} looks fine.\nMOVE: {played}", parse_span=[0, len(played)])
    calls[position] = call
    _write_calls(run_dir, calls)
    assert _kinds(run_dir) == ["not_final_answer"]


def test_several_runs_and_the_exit_codes(base_run, run_dir, tmp_path):
    _, _, played, other = _first_game_call(_calls(run_dir))
    _record_reply(run_dir, f"MOVE: {other}", recorded=played)
    result = _audit(base_run, run_dir)
    assert result.exit_code == 1
    assert "1 finding(s)" in result.output and "0 finding(s)" in result.output
    missing = _audit(tmp_path / "no-such-run")
    assert missing.exit_code == 2 and "Traceback" not in missing.output


# ------------------------------------------------------------------------------ tournament directories


def test_a_tournament_with_a_model_agent_is_audited(tmp_path):
    out = tmp_path / "t"
    args = options(agents="llm-policy:model=mock/random-legal", vs="random", envs="0", games="2", seed="1", jobs="1", out=out)
    result = CliRunner().invoke(app, ["tournament", *args])
    assert result.exit_code == 0, result.output
    assert _audit(out).exit_code == 0
    calls = _calls(out)
    position, call, played, other = _first_game_call(calls)
    call.update(reply=other, parsed_move=other, parse_span=[0, len(other)])
    calls[position] = call
    _write_calls(out, calls)
    flagged = _audit(out)
    assert flagged.exit_code == 1 and f"{played} was played, the accepted reply named {other}" in flagged.output


# ------------------------------------------------------------------------------ the strict reader itself


@pytest.mark.parametrize(
    ("reply", "final"),
    [
        ("d3", "d3"),
        ("Corners matter.\nMOVE: D3", "d3"),
        ("**Final answer:** `c4`\n", "c4"),
        ('{"move": "f5"}', "f5"),
        ('Thinking: d3 or c4?\n```json\n{"move": "c4"}\n```', "c4"),
        ("d3 or c4", None),
        ("I cannot decide.", None),
        ('{"move": "d3"} {"move": "d3"}', None),
        ("", None),
    ],
)
def test_the_strict_final_answer(reply, final):
    assert strict_read(reply).final == final


def test_answer_lines_naming_different_moves_are_several_answers_even_when_the_parser_took_the_last():
    layout = make_env(0).rules.layout
    reply = "d3\nOn reflection, not that.\nf5"
    parsed = parse_reply(reply, layout)
    assert parsed.notation == "f5" and [c[0] for c in parsed.candidates] == []  # bare stage: the last line only
    call = {"call_index": 7, "ply": 0, "reply": reply, "parsed_move": "f5", "verdict": "legal", "messages": []}
    assert [f.kind for f in audit_call(call, "adapt game 0")] == ["several_answers"]


def test_calls_without_a_move_read_are_not_findings():
    call = {
        "call_index": 1,
        "ply": 3,
        "reply": "d3 c4 f5",
        "parsed_move": None,
        "verdict": "unparsed",
        "failure_kind": "parse_error",
        "messages": [],
    }
    assert audit_call(call, "adapt game 0") == []
    assert audit_call({**call, "ply": None, "parsed_move": None}, "beliefs") == []


def test_the_harness_version_follows_the_prompts(tmp_path):
    (tmp_path / "move.j2").write_text("one", encoding="utf-8")
    first = harness_version(tmp_path)
    assert first == harness_version(tmp_path) and len(first) == 12
    (tmp_path / "move.j2").write_text("two", encoding="utf-8")
    assert harness_version(tmp_path) != first


def test_formatted_moves_match_the_readers_notation():
    layout = make_env(ENV).rules.layout
    assert strict_read(format_move(0, layout)).final == format_move(0, layout).lower()
