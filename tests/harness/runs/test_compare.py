"""``arena compare`` compares like with like: environment, budget, evaluation opponents and games must agree."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from harness.cli.main import app
from harness.runs.compare import IncomparableRuns, compare_table, differing_fields, read_runs
from harness.runs.llm_run import LlmRunConfig, run_llm
from harness.tournaments.plan import make_plan, versus
from harness.tournaments.tournament import run_tournament

BASE = dict(model="mock/first-legal", env=21, budget=2, eval_games=2, opponents=("random",), seed=0, checkpoints=(2,),
            referee=False)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Small mock runs that differ from ``base`` in one setting each (``seed1`` differs only in its seed)."""
    out = tmp_path_factory.mktemp("compare")
    changes = {"base": {}, "seed1": {"seed": 1}, "budget3": {"budget": 3}, "env0": {"env": 0},
               "greedy": {"opponents": ("greedy",)}, "games4": {"eval_games": 4}}
    made = {name: run_llm(LlmRunConfig(**{**BASE, **change}), out=out, run_id=name) for name, change in changes.items()}
    run_tournament(make_plan(versus(["greedy"], ["random"]), [21], 2, 0), out / "baseline", jobs=1)
    run_tournament(make_plan(versus(["greedy"], ["random"]), [21], 6, 0), out / "baseline6", jobs=1)
    made["baseline"], made["baseline6"] = out / "baseline", out / "baseline6"
    return made


def invoke(*args):
    return CliRunner().invoke(app, ["compare", *map(str, args)], env={"COLUMNS": "250", "NO_COLOR": "1"})


def one_error_line(result) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, result.output
    return errors[0]


def test_runs_of_one_setting_share_a_table(runs):
    table = compare_table([runs["base"], runs["seed1"], runs["baseline"]])
    assert "differs" not in table
    assert "| base | llm-policy (W=1) |" in table and "| seed1 | llm-policy (W=1) |" in table
    assert "| baseline | greedy | (baseline) | 21 |" in table  # a baseline has no budget: it never differs on it
    result = invoke(runs["base"], runs["seed1"], runs["baseline"])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("other, field, values", [
    ("budget3", "budget", ("base: 2", "budget3: 3")),
    ("env0", "env", ("base: 21", "env0: 0")),
    ("greedy", "opponents", ("base: random", "greedy: greedy")),
    ("games4", "games", ("base: 2", "games4: 4")),
    ("baseline6", "games", ("base: 2", "baseline6: 6")),
])
def test_mixing_is_refused_naming_the_field(runs, other, field, values):
    with pytest.raises(IncomparableRuns, match=f"{field} differs"):
        compare_table([runs["base"], runs[other]])
    line = one_error_line(invoke(runs["base"], runs[other]))
    assert f"{field} differs" in line and "--force" in line
    for value in values:
        assert value in line
    assert [f for f in ("env", "budget", "opponents", "games") if f"{f} differs" in line] == [field]


def test_several_differing_fields_are_all_named(runs):
    assert differing_fields(read_runs([runs["base"], runs["budget3"], runs["env0"]])) == ["env", "budget"]
    line = one_error_line(invoke(runs["base"], runs["budget3"], runs["env0"]))
    assert "env differs" in line and "budget differs" in line


def test_force_groups_the_runs_and_shows_the_differing_fields_beside_each_row(runs):
    result = invoke(runs["base"], runs["budget3"], runs["seed1"], "--force")
    assert result.exit_code == 0, result.output
    rows = [line for line in result.output.splitlines() if line.startswith("| ") and "llm-policy" in line]
    assert [row.split(" | ")[0].strip("| ") for row in rows] == ["base", "seed1", "budget3"]  # like settings side by side
    assert rows[0].rstrip(" |").endswith("budget=2") and rows[1].rstrip(" |").endswith("budget=2")
    assert rows[2].rstrip(" |").endswith("budget=3")
    assert "| differs |" in result.output and "differ in budget" in result.output


def test_force_marks_a_baseline_without_a_budget(runs):
    table = compare_table([runs["base"], runs["budget3"], runs["baseline"]], force=True)
    baseline_row = next(line for line in table.splitlines() if line.startswith("| baseline |"))
    assert baseline_row.endswith("| budget=- |")
