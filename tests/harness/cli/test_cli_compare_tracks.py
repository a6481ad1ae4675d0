"""``arena compare`` never pools the legal-move tracks, and shows tournament agents that played unadapted."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from harness.cli.main import app
from harness.runs.compare import IncomparableRuns, RunRows, Setting, check_comparable, differing_fields, legal_moves_track, read_runs
from harness.runs.llm_run import LlmRunConfig, run_llm
from harness.tournaments.plan import make_plan, versus
from harness.tournaments.tournament import run_tournament


def run(name: str, legal_moves: str | None) -> RunRows:
    return RunRows(name, Setting(env="21", budget="2", opponents="random", games="2", legal_moves=legal_moves), [])


@pytest.mark.parametrize("recorded, track", [(None, "shown"), ("shown", "shown"), ("hidden", "hidden"), (True, "shown"), (False, "hidden")])
def test_the_track_of_a_run_config(recorded, track):
    assert legal_moves_track(SimpleNamespace(legal_moves=recorded)) == track
    assert legal_moves_track(SimpleNamespace()) == "shown"  # a run from before the track was recorded


def test_shown_and_hidden_runs_are_refused_together_naming_the_field():
    runs = [run("a", "shown"), run("b", "hidden")]
    assert differing_fields(runs) == ["legal moves"]
    with pytest.raises(IncomparableRuns, match=r"legal moves differs \(a: shown; b: hidden\)"):
        check_comparable(runs)
    check_comparable([run("a", "hidden"), run("c", "hidden"), run("baseline", None)])  # a baseline has no prompts


def test_a_model_run_that_records_no_track_is_on_the_shown_track(tmp_path):
    made = run_llm(
        LlmRunConfig(
            model="mock/first-legal", env=21, budget=2, eval_games=2, opponents=("random",), seed=0, checkpoints=(2,), referee=False
        ),
        out=tmp_path,
        run_id="r",
    )
    (setting,) = [rows.setting for rows in read_runs([made])]
    assert setting.legal_moves == "shown"
    assert differing_fields([RunRows("r", setting, []), run("h", "hidden")]) == ["legal moves"]


def test_compare_marks_an_unadapted_tournament_agent_and_names_the_resume_of_a_cut_run(tmp_path):
    run_tournament(make_plan(versus(["interval"], ["random"]), [5], 2, 0, referee=False), tmp_path / "t", jobs=1)
    result = CliRunner().invoke(app, ["compare", str(tmp_path / "t")], env={"COLUMNS": "250", "NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    assert "interval (unadapted)" in result.output
    (tmp_path / "t" / "results.json").unlink()
    result = CliRunner().invoke(app, ["compare", str(tmp_path / "t")], env={"COLUMNS": "250", "NO_COLOR": "1"})
    assert result.exit_code == 2 and f"arena tournament --resume {tmp_path / 't'}" in result.output, result.output
