"""``arena run --agent cwm`` with mock/coder: adapts under the referee with its code in the sandbox, replays, reruns, resumes."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
from run_checks import assert_replays_and_reruns, interrupted_then_resumed

from engine import make_env
from harness.records.transcript import TranscriptReader
from harness.runs.llm_run import LlmRunConfig, run_llm
from harness.sandbox.command import bubblewrap_problem

pytestmark = [
    pytest.mark.skipif(bubblewrap_problem() is not None, reason=f"bubblewrap cannot run: {bubblewrap_problem()}"),
    pytest.mark.long,  # end-to-end: collected first (tests/conftest.py)
]
ENV = 40  # K = 1/5 on a 6x8 board


def config(**changes) -> LlmRunConfig:
    settings = dict(
        agent="cwm",
        model="mock/coder",
        env=ENV,
        budget=14,
        eval_games=2,
        opponents=("random",),
        seed=1,
        checkpoints=(),
        cwm_explore=8,
        cwm_random=4,
        cwm_simulations=8,
        cwm_adapt_simulations=8,
        cwm_heldout=200,
    )
    return LlmRunConfig(**{**settings, **changes})


def _interval_holds_true_k(text: str) -> bool:
    low, high = text.strip("[]()").split(", ")
    k = make_env(ENV).condition.k
    above = k > Fraction(low) if text.startswith("(") else k >= Fraction(low)
    below = k < Fraction(high) if text.endswith(")") else k <= Fraction(high)
    return above and below


def test_a_cwm_run_adapts_reports_its_program_and_replays_and_reruns(cwm_run, tmp_path, monkeypatch):
    run_dir = cwm_run  # run_llm(config()), played once for the tests that read it (tests/conftest.py)
    metrics = json.loads((run_dir / "metrics.json").read_text())
    cwm = metrics["cwm"]
    assert cwm["sandbox"] == "bubblewrap" and cwm["counts"]["model_calls"] >= 1
    assert _interval_holds_true_k(cwm["counts"]["k_interval"]), cwm["counts"]["k_interval"]
    assert metrics["referee"].startswith("referee process (enforced")
    report = (run_dir / "report.md").read_text()
    cgroup = " (memory and pids cgroup applied)" if cwm["counts"]["cgroup"] else " (no cgroup on this machine)"
    assert f"Code world model: sandbox bubblewrap{cgroup}; K interval of the final reward code:" in report
    steered = cwm["counts"]["steered_games"]
    assert 1 <= steered <= 4 and f"Exploration: {steered} games steered towards informative shares" in report
    assert cwm["plot"] == "cwm-accuracy.png" and (run_dir / "cwm-accuracy.png").read_bytes()[:4] == b"\x89PNG"
    assert "Accuracy against model calls: cwm-accuracy.png" in report
    calls = TranscriptReader(run_dir).calls()
    assert len(calls) == cwm["counts"]["model_calls"] and all(c.reply for c in calls)  # every program asked for, on record
    assert_replays_and_reruns(run_dir, tmp_path, monkeypatch, games=14 + 2)


@pytest.mark.parametrize("cut_at", [5, 10])  # during the steered exploration; after the program is written
def test_an_interrupted_cwm_run_resumes_to_the_uninterrupted_games(cwm_run, tmp_path, cut_at):
    whole, cut, kept = interrupted_then_resumed(config(), tmp_path, stop_at=lambda entry: entry.game_index == cut_at, whole=cwm_run)
    assert len(kept) == cut_at + 1

    def moves(run):
        return [(g.phase, g.game_index, g.moves, g.rewards) for g in TranscriptReader(run).games()]

    assert moves(cut) == moves(whole)


def _moves(run):
    return [(g.phase, g.game_index, g.moves, g.rewards) for g in TranscriptReader(run).games()]


def _counts(run):
    return json.loads((run / "metrics.json").read_text())["cwm"]["counts"]


def test_the_engine_path_plays_the_same_games_in_its_own_process_and_in_this_one(cwm_run, tmp_path):
    refereed = cwm_run  # run_llm(config()): refereed, the default
    in_process = run_llm(config(referee=False), out=tmp_path, run_id="in-process")
    assert _counts(refereed)["path"] == _counts(in_process)["path"] == "engine"
    assert _moves(refereed) == _moves(in_process)
    assert (
        json.loads((in_process / "metrics.json").read_text())["referee"] != json.loads((refereed / "metrics.json").read_text())["referee"]
    )


def test_the_program_path_is_recorded_replays_reruns_and_is_never_pooled_with_the_engine_path(cwm_run, tmp_path, monkeypatch):
    from harness.runs.compare import IncomparableRuns, compare_rows

    program = run_llm(config(cwm_transitions="program"), out=tmp_path, run_id="program")
    engine = cwm_run  # run_llm(config()): the engine path is the default
    assert TranscriptReader(program).manifest().config["cwm_transitions"] == "program"
    assert TranscriptReader(engine).manifest().config["cwm_transitions"] == "engine"
    counts = _counts(program)
    assert counts["path"] == "program" and counts["paths"][-1]["why"] == "--cwm-transitions program"
    assert "Planning (--cwm-transitions program): call" in (program / "report.md").read_text()
    assert "Utility table: " in (engine / "report.md").read_text()
    with pytest.raises(IncomparableRuns, match="cwm transitions differs"):
        compare_rows([program, engine])
    assert {row[-1] for row in compare_rows([program, engine], force=True)} == {"cwm transitions=program", "cwm transitions=engine"}
    assert_replays_and_reruns(program, tmp_path, monkeypatch, games=14 + 2)
