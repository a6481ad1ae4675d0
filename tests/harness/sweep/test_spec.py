"""The sweep file: validation errors that name the key, and the cells a grid expands to."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.sweep.spec import SweepError, load_sweep, parse_sweep

GRID = {
    "envs": ["5", "12-13"],
    "seeds": [0, 1],
    "budget": 4,
    "games": 2,
    "opponents": ["random"],
    "models": [{"model": "mock/first-legal", "options": {"concurrency": 1}}, {"model": "mock/random-legal", "hints": ["none", "ratio"]}],
}


def test_a_model_grid_expands_to_one_run_config_per_cell() -> None:
    sweep = parse_sweep(GRID)
    assert len(sweep.cells) == 3 * 2 * (1 + 2)  # envs x seeds x (model entries x their hints)
    assert len({c.id for c in sweep.cells}) == len(sweep.cells)
    configs = [c.config for c in sweep.cells]
    assert all(c is not None and c.budget == 4 and c.eval_games == 2 and c.opponents == ("random",) for c in configs)
    assert {(c.env, c.seed) for c in configs if c is not None} == {(e, s) for e in (5, 12, 13) for s in (0, 1)}
    assert {c.agent for c in sweep.cells} == {
        "llm-policy:model=mock/first-legal,hint=ratio",
        "llm-policy:model=mock/random-legal,hint=none",
        "llm-policy:model=mock/random-legal,hint=ratio",
    }
    assert [c.id for c in parse_sweep(GRID).cells] == [c.id for c in sweep.cells]  # stable: a second command resumes


def test_bench_cells_are_one_pair_plans_seeded_by_the_cell() -> None:
    sweep = parse_sweep(
        {
            "envs": [5, 12],
            "agents": ["random", "interval"],
            "seeds": [3],
            "budget": 10,
            "games": 2,
            "checkpoint_games": 2,
            "opponents": ["random"],
        }
    )
    assert len(sweep.cells) == 4
    for cell in sweep.cells:
        assert cell.plan is not None and cell.plan.env_ids == (cell.env,) and cell.plan.agents == (cell.agent,)
        assert cell.plan.seed == 3 and [o.label for o in cell.plan.opponents] == ["Random"]


@pytest.mark.parametrize(
    ("data", "named"),
    [
        ({**GRID, "seed": [0]}, "seed: unknown key"),
        ({**GRID, "seeds": [1, 1]}, "seeds:"),
        ({**GRID, "budget": 0}, "budget:"),
        ({**GRID, "envs": ["13-12"]}, "envs.0: range '13-12'"),
        ({**GRID, "envs": ["layout=nowhere.txt,condition=majority<0.7"]}, "envs.0:"),
        ({**GRID, "models": [{"agent": "llm-policy"}]}, "models.0.model: Field required"),
        ({**GRID, "models": [{"model": "mock/first-legal", "options": {"concurency": 1}}]}, "models.0.options.concurency"),
        ({"envs": [5]}, "agents / models"),
    ],
)
def test_errors_name_the_key(data: dict, named: str) -> None:
    with pytest.raises(SweepError, match=named.replace("(", r"\(")):
        parse_sweep(data)


def test_a_file_that_is_not_toml_says_so(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text("envs = [5\n", encoding="utf-8")
    with pytest.raises(SweepError, match="not valid TOML"):
        load_sweep(path)
