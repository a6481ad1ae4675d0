"""The Inspect task: its score from a run's metrics; with Inspect installed (the ``inspect`` extra), the task played
by Inspect's mock model plays the games ``arena run`` plays with the same scripted replies and seed, and through
Inspect's OpenAI provider against the stub server with faults it completes with every failure classified."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena_inspect.scores import SCORE_KEYS, protocol_values
from harness.runs.llm_run import LlmRunConfig, run_llm

REPLIES = ["MOVE: d3", "I think c4 looks good", "e6", "~~##", "MOVE: f5", '{"move": "c3"}', "MOVE: z9"]
SETTINGS = {"env": "14", "budget": 2, "eval_games": 1, "opponents": "random", "seed": 4, "on_failure": "random"}


def test_the_score_is_the_runs_rates_belief_accuracy_games_and_failures_with_wilson_intervals():
    row = {"games": 4, "win": {"count": 3}, "draw": {"count": 0}, "lose": {"count": 1}}
    metrics = {
        "adapt_games": 20, "evaluation": {"random": row, "greedy": {**row, "win": {"count": 1}, "lose": {"count": 3}}},
        "beliefs": [{"score": {"contains_k": True}}, {"score": {"contains_k": False}}, {"score": None}],
        "failures": {"parse_error": 5, "illegal_move": 2},
    }  # fmt: skip
    value, details = protocol_values(metrics)
    assert set(value) == set(SCORE_KEYS)
    assert (value["win"], value["loss"], value["draw"], value["belief_accuracy"], value["games_used"]) == (0.5, 0.5, 0.0, 0.5, 20.0)
    assert value["failures.parse_error"] == 5.0 and value["failures.timeout"] == 0.0
    low, high = details["wilson95"]["win"]
    assert 0.0 < low < 0.5 < high < 1.0 and details["beliefs_scored"] == 2


def _games(run_dir: Path) -> list[tuple]:
    rows = [json.loads(line) for line in (run_dir / "games.jsonl").read_text(encoding="utf-8").splitlines()]
    return [(r["phase"], r["game_index"], r["opponent"], tuple(r["moves"]), tuple(r["rewards"])) for r in rows]


def _inspect_run(log_dir: Path, model: object, **task_args: object) -> tuple[object, Path]:
    inspect_ai = pytest.importorskip("inspect_ai")  # the optional extra: pip install '.[inspect]'
    from arena_inspect.task import budgeted

    task = budgeted(**{**SETTINGS, **task_args, "out": str(log_dir / "arena")})
    (log,) = inspect_ai.eval(task, model=model, log_dir=str(log_dir), display="none")
    assert log.status == "success", log.error
    return log, Path(log.samples[0].scores["protocol_score"].metadata["run_dir"])


@pytest.mark.long
def test_the_mock_model_plays_the_games_arena_run_plays_with_the_same_replies_and_seed(tmp_path):
    pytest.importorskip("inspect_ai")
    from inspect_ai.log import read_eval_log
    from inspect_ai.model import ModelOutput, get_model

    from harness.runs.replay import replay_run

    replies = REPLIES * 400
    outputs = [ModelOutput.from_content(model="mockllm/model", content=text) for text in replies]
    log, run_dir = _inspect_run(tmp_path / "logs", get_model("mockllm/model", custom_outputs=outputs))
    script = tmp_path / "script.jsonl"
    script.write_text("".join(json.dumps(text) + "\n" for text in replies), encoding="utf-8")
    config = LlmRunConfig(
        model=f"mock/script:{script}", env=14, budget=2, eval_games=1, opponents=("random",), seed=4, on_failure="random",
        referee=False, concurrency=1,
    )  # fmt: skip
    arena = run_llm(config, out=tmp_path / "arena", run_id="same")
    assert _games(run_dir) == _games(arena) and len(_games(arena)) == 3
    assert replay_run(run_dir).ok
    reread = read_eval_log(log.location)
    assert reread.samples[0].scores["protocol_score"].value["games_used"] == 2.0
    assert sum(event.event == "model" for event in reread.samples[0].events) == len((run_dir / "calls.jsonl").read_text().splitlines())


@pytest.mark.long
def test_through_inspects_openai_provider_against_the_stub_with_faults_every_failure_is_classified(tmp_path, monkeypatch):
    pytest.importorskip("inspect_ai")
    from inspect_ai.model import get_model

    from harness.testing.faults import FaultSpec
    from harness.testing.stub_server import LegalMoves, StubServer

    faults = FaultSpec.parse("0.2:illegal+no_call+other_function+bad_arguments+truncated", seed=2)
    with StubServer(responder=LegalMoves(), faults=faults) as stub:
        monkeypatch.setenv("OPENAI_API_KEY", "stub")
        model = get_model("openai/stub-model", base_url=stub.url, responses_api=False)
        log, run_dir = _inspect_run(tmp_path / "logs", model, move_format="tool")
        met = dict(stub.faults_met)
    calls = [json.loads(line) for line in (run_dir / "calls.jsonl").read_text(encoding="utf-8").splitlines()]
    failures = log.samples[0].scores["protocol_score"].metadata["failures"]
    assert met and sum(met.values()) == sum(failures[kind] for kind in ("parse_error", "illegal_move", "truncated"))
    assert met.get("illegal", 0) == failures["illegal_move"] == sum(c["failure_kind"] == "illegal_move" for c in calls)
    assert all(c["failure_kind"] for c in calls if c["verdict"] != "legal")
