"""``arena bench paper``: the plan, a tiny end-to-end run with fake adaptive agents, the budget check, resume,
the aggregation math, the paper's tables and the target checks (timings are never asserted)."""

from __future__ import annotations

import json
import os
import statistics
from pathlib import Path

import numpy as np
import pytest

from agents.spec import AgentSpecError
from engine import make_env
from harness.bench.paper_plan import (
    QUICK_ENVS,
    EnvAgentResult,
    Opponent,
    Outcome,
    checkpoints_for,
    condition_label,
    make_paper_plan,
    with_quick_params,
)
from harness.bench.paper_report import write_outputs
from harness.bench.paper_run import read_results, run_bench_paper
from harness.bench.paper_summary import (
    DEFAULT_PAPER_TABLE2,
    Stat,
    condition_stats,
    load_paper_table2,
    paper_consistency,
    paper_table1,
    table2_condition_stats,
    target_checks,
)
from harness.registry.importing import PLUGINS_ENV
from harness.registry.plugins import load_plugins

SMALL_ENVS = (5, 26)  # Random Board 2 (6x8): K>1.0 and K=0.6
RANDOM = Opponent(label="Random", spec="random", privileged=False)
MCTS_100 = Opponent(label="MCTS-100", spec="mcts:n=100", privileged=True)


FAKES = Path(__file__).with_name("paper_fakes.py")


@pytest.fixture
def fakes(monkeypatch, tmp_path):
    """The fake agents of paper_fakes.py loaded as a plugin (agent processes load it too); adapt() calls logged."""
    monkeypatch.setenv(PLUGINS_ENV, os.environ.get(PLUGINS_ENV, ""))  # restored after the test
    shared = tmp_path / "agents"  # written by agent processes behind the walls, as uids of their own
    shared.mkdir()
    shared.chmod(0o1777)
    log = shared / "adapt-calls.log"
    monkeypatch.setenv("PAPER_FAKES_LOG", str(log))
    monkeypatch.setenv("ARENA_AGENT_WRITABLE", str(shared))  # bound writable into their sandboxes
    monkeypatch.setenv("OTHELLO_ARENA_AGENT_ENV", "PAPER_FAKES_LOG")  # and the variable passed to them
    load_plugins([FAKES])
    return log


def adapt_calls(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def _tiny_plan(agents=("fake-adaptive",), envs=SMALL_ENVS, budget=20):
    plan = make_paper_plan(envs, list(agents), budget=budget, games=2, checkpoint_games=2, seed=3)
    return plan.model_copy(update={"opponents": (RANDOM, MCTS_100)})


def test_plan_full_and_quick(fakes):
    full = make_paper_plan(None, ["fake-adaptive"])
    assert full.env_ids == tuple(range(56)) and full.budget == 2000 and full.games == full.checkpoint_games == 20
    assert full.checkpoints == (100, 500, 1000, 2000)
    assert len(full.tasks()) == 56 and {t.key for t in full.tasks()} == {(e, "fake-adaptive") for e in range(56)}
    quick = make_paper_plan(None, ["fake-adaptive", "adaptive-minimax:population=20"], quick=True)
    assert quick.env_ids == QUICK_ENVS and quick.budget == 200 and quick.checkpoints == (10, 50, 100, 200)
    assert quick.games == 10 and quick.checkpoint_games == 4
    assert quick.agents == ("fake-adaptive", "adaptive-minimax:population=20")  # the spec's own value is kept
    assert {make_env(e).layout_index for e in quick.env_ids} == {5}
    assert len({make_env(e).condition_index for e in quick.env_ids}) == len(QUICK_ENVS)
    assert [o.label for o in quick.checkpoint_opponents] == ["Random", "MCTS-100"]
    assert all(o.privileged == o.label.startswith("MCTS") for o in quick.opponents)


def test_checkpoints_scale_with_the_budget_and_quick_params():
    assert checkpoints_for(20) == (1, 5, 10, 20)
    assert checkpoints_for(10) == (1, 2, 5, 10)
    assert checkpoints_for(1) == (1,)
    assert with_quick_params("random") == "random"


def test_quick_params_fill_only_what_the_spec_leaves_out(fakes):
    assert with_quick_params("adaptive-minimax") == "adaptive-minimax:population=10"
    assert with_quick_params("adaptive-minimax:train_depth=2") == "adaptive-minimax:train_depth=2,population=10"
    assert with_quick_params("adaptive-minimax:population=4") == "adaptive-minimax:population=4"


def test_bad_plans_are_refused(fakes):
    with pytest.raises(AgentSpecError, match="unknown agent"):
        make_paper_plan([5], ["no-such-agent"])
    with pytest.raises(ValueError, match="budget"):
        make_paper_plan([5], ["fake-adaptive"], budget=0)
    with pytest.raises(ValueError, match="listed twice"):
        make_paper_plan([5], ["fake-adaptive", "fake-adaptive"])


def test_condition_labels_follow_the_paper():
    labels = [condition_label(make_env(7 * c).condition) for c in range(8)]
    assert labels == ["K>1.0", "K<0.0", "K=0.8", "K=0.6", "K=0.4", "K=0.2", "K>1.0 (10 turns)", "K<0.0 (10 turns)"]


@pytest.fixture
def tiny_run(fakes, tmp_path) -> tuple[Path, list[EnvAgentResult]]:
    run_dir = tmp_path / "run"
    plan = _tiny_plan()
    results = run_bench_paper(plan, run_dir, jobs=1, command="test")
    return run_dir, results


def test_end_to_end_records_add_up(tiny_run):
    run_dir, results = tiny_run
    lines = (run_dir / "results.jsonl").read_text().splitlines()
    assert len(lines) == len(results) == 2
    for result in results:
        assert result.status == "ok" and result.games_used == 20 and result.refused_games == 0
        assert [o.opponent for o in result.final] == ["Random", "MCTS-100"]
        assert all(o.win + o.draw + o.lose == len(o.rewards) == 2 for o in result.final)
        assert [o.privileged for o in result.final] == [False, True]
        assert result.final[1].simulator_uses >= 2 and result.final[0].simulator_uses == 0
        assert [c.planned_games for c in result.checkpoints] == [1, 5, 10, 20]
        assert [c.games_played for c in result.checkpoints] == [5, 5, 10, 20]
        assert [c.source for c in result.checkpoints] == ["adapting", "adapting", "adapting", "final"]
        assert all(sum(o.tally.games for o in c.outcomes) == 4 for c in result.checkpoints[:3])
        assert result.belief is not None and result.belief_score is not None
        assert result.belief_score.contains_k == (result.condition != "K>1.0")  # K = 1.01 is outside [0.55, 1]
        assert sorted(result.weight_curves) == ["0.2", "0.4", "0.6", "0.8"]
        assert np.asarray(result.weight_curves["0.6"]).shape == (21, 4)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["kind"] == "bench-paper" and manifest["status"] == "complete" and manifest["pairs"] == 2


def test_outputs_written(tiny_run):
    run_dir, results = tiny_run
    summary, plots = write_outputs(_tiny_plan(), results, run_dir, paper_table2=None)
    saved = json.loads((run_dir / "results.json").read_text())
    assert len(saved["pairs"]) == 2 and set(saved["per_condition"]["fake-adaptive"]) == {"K>1.0", "K=0.6"}
    report = (run_dir / "report.md").read_text()
    assert "## Targets" in report and "MCTS-100\\*" in report and "not found" in report
    assert {Path(p).name for p in plots} >= {"convergence.png", "weights-fake-adaptive-mean.png"}
    assert all(Path(p).stat().st_size > 1000 for p in plots)
    stat = summary.per_condition["fake-adaptive"]["K=0.6"]["Random"]["win"]
    assert stat.n == 1 and stat.mean == results[1].final[0].percent("win")


def test_budget_overrun_fails_that_pair_only(fakes, tmp_path):
    plan = _tiny_plan(agents=("fake-adaptive", "over-budget", "swallower"), envs=(5, 26), budget=4)
    results = run_bench_paper(plan, tmp_path / "run", jobs=1)
    assert len(results) == len(read_results(tmp_path / "run")) == 6
    for result in results:
        assert result.games_used == 4
        if result.agent == "over-budget":  # BudgetExhausted escaped adapt(): a failure, the other pairs go on
            assert result.status == "failed" and "BUDGET EXCEEDED" in result.error and result.final == ()
            assert result.refused_games == 1
        elif result.agent == "swallower":  # asked for more, handled the refusal: recorded, not failed
            assert result.status == "ok" and result.refused_games == 1 and "beyond its budget" in result.notes[0]
        else:
            assert result.status == "ok" and result.refused_games == 0 and result.notes == ()


def test_resume_skips_finished_pairs(fakes, tmp_path):
    run_dir = tmp_path / "run"
    plan = _tiny_plan(budget=5)
    first = run_bench_paper(plan, run_dir, jobs=1)
    assert adapt_calls(fakes) == 2
    kept, second = (run_dir / "results.jsonl").read_text().splitlines()
    (run_dir / "results.jsonl").write_text(kept + "\n" + second[:40])  # killed while writing the second pair
    fakes.unlink()
    again = run_bench_paper(plan, run_dir, jobs=1, resume=True)
    assert adapt_calls(fakes) == 1
    assert [r.model_dump(exclude={"adapt_seconds", "eval_seconds", "checkpoint_seconds"}) for r in again] == [
        r.model_dump(exclude={"adapt_seconds", "eval_seconds", "checkpoint_seconds"}) for r in first
    ]
    run_bench_paper(plan, run_dir, jobs=1, resume=True)
    assert adapt_calls(fakes) == 1 and len((run_dir / "results.jsonl").read_text().splitlines()) == 2


def _result(env_id: int, agent: str, wins: dict[str, tuple[int, int, int]]) -> EnvAgentResult:
    env = make_env(env_id)
    final = tuple(
        Outcome(
            opponent=label,
            spec=label.lower(),
            privileged=label.startswith("MCTS"),
            win=w,
            draw=d,
            lose=lo,
            rewards=(1,) * w + (0,) * d + (-1,) * lo,
        )
        for label, (w, d, lo) in wins.items()
    )
    return EnvAgentResult(
        env_id=env_id,
        env_name=env.name,
        layout=env.layout_index,
        condition=condition_label(env.condition),
        agent=agent,
        status="ok",
        budget=20,
        final=final,
    )


def test_condition_means_and_sample_stds():
    results = [_result(21 + layout, "x", {"Random": (w, 20 - w - 2, 2)}) for layout, w in enumerate((4, 8, 18))]
    results.append(_result(0, "x", {"Random": (20, 0, 0)}))
    results.append(_result(22, "y", {"Random": (0, 0, 20)}))  # another agent: not mixed in
    table = condition_stats(results, "x")
    win = table["K=0.6"]["Random"]["win"]
    assert win.n == 3 and win.mean == pytest.approx(50.0)
    assert win.std == pytest.approx(statistics.stdev([20.0, 40.0, 90.0]))
    assert table["K=0.6"]["Random"]["lose"] == Stat(mean=10.0, std=0.0, n=3)
    assert table["K>1.0"]["Random"]["win"] == Stat(mean=100.0, std=0.0, n=1)


def test_paper_table1_matches_table2_and_a_change_is_caught(tmp_path):
    table1 = paper_table1()
    assert table1["K=0.6"]["Random"]["win"] == Stat(mean=19.3, std=11.0, n=7)
    assert table1["K<0.0 (10 turns)"]["MCTS-100"]["lose"].mean == 33.6
    rows = [
        {"condition": "K>1.0", "layout": i + 1, "Random": [w, d, lo]}
        for i, (w, d, lo) in enumerate([(100, 0, 0), (100, 0, 0), (95, 0, 5), (100, 0, 0), (100, 0, 0), (95, 0, 5), (80, 10, 10)])
    ]
    path = tmp_path / "table2.json"
    path.write_text(json.dumps({"rows": rows}))
    table2 = load_paper_table2(path)
    assert table2[("K>1.0", 7)]["Random"] == (80.0, 10.0, 10.0)
    assert table2_condition_stats(table2)["K>1.0"]["Random"]["win"].mean == pytest.approx(95.714, abs=1e-3)
    assert not [p for p in paper_consistency(table1, table2) if "K>1.0 vs Random" in p]
    rows[6]["Random"] = [60, 10, 30]
    path.write_text(json.dumps({"rows": rows}))
    problems = paper_consistency(table1, load_paper_table2(path))
    assert any(p.startswith("K>1.0 vs Random (win)") for p in problems)


def test_the_real_paper_tables_agree():
    table2 = load_paper_table2(DEFAULT_PAPER_TABLE2)
    assert len(table2) == 56
    assert paper_consistency(paper_table1(), table2) == []


def _stats(win_by_condition: dict[str, dict[str, float]]) -> dict:
    return {c: {o: {"win": Stat(mean=m, std=0.0, n=7)} for o, m in ops.items()} for c, ops in win_by_condition.items()}


def test_target_checks_pass_and_fail(fakes):
    am = _stats(
        {
            "K>1.0": {"Random": 50.0, "MCTS-100": 40.0},
            "K=0.6": {"Random": 19.3, "MCTS-100": 10.0},
            "K=0.4": {"Random": 18.6, "MCTS-100": 10.0},
        }
    )
    interval = _stats(
        {
            "K>1.0": {"Random": 90.0, "MCTS-100": 30.0},
            "K=0.6": {"Random": 40.0, "MCTS-100": 50.0},
            "K=0.4": {"Random": 30.0, "MCTS-100": 10.0},
        }
    )
    checks = target_checks({"adaptive-minimax": am, "interval": interval}, paper_table1(), ["adaptive-minimax", "interval"])
    verdict = {c.text.split(":")[0]: c.passed for c in checks}
    assert verdict["(a) K>1.0"] is False and verdict["(a) K=0.6"] is True and verdict["(a) K=0.4"] is True
    assert verdict["(b) K>1.0 vs Random"] is True and verdict["(b) K>1.0 vs MCTS-100"] is False
    assert verdict["(b) K=0.4 vs MCTS-100"] is True  # equal counts as matching
    assert verdict["(c) K=0.6 vs Random"] is True and verdict["(c) K=0.4 vs Random"] is False
    summary = next(c for c in checks if c.text.startswith("(a) 2 of 3 conditions"))
    assert summary.mark == "FAIL" and summary.text.endswith("misses: K>1.0")
    assert [c.mark for c in checks if c.passed is False] == ["FAIL"] * 4
    missing = target_checks({"adaptive-minimax": am}, paper_table1(), ["adaptive-minimax"])
    assert {c.target for c in missing if c.passed is None} == {"b", "c"}


@pytest.mark.long
def test_results_do_not_depend_on_the_number_of_workers(tmp_path):
    """Spawned workers (registered agents only: fakes live in this process) give the same records as one process."""
    plan = make_paper_plan([5, 12], ["minimax:depth=1"], budget=4, games=2, checkpoint_games=2, seed=1)
    plan = plan.model_copy(update={"opponents": (RANDOM, MCTS_100)})
    timings = {"adapt_seconds", "eval_seconds", "checkpoint_seconds"}
    parallel = run_bench_paper(plan, tmp_path / "two", jobs=2)
    serial = run_bench_paper(plan, tmp_path / "one", jobs=1)
    assert [r.model_dump(exclude=timings) for r in parallel] == [r.model_dump(exclude=timings) for r in serial]
