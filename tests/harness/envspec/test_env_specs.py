"""Environment specs (engine.env_spec): one grammar for every --env/--envs, canonical keys, one-line errors."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engine import EnvSpecError, make_env
from engine.condition import ConditionError
from engine.condition_grammar import FAMILIES, condition_spec, family_of, parse_condition
from engine.env_spec import env_key, seed_word
from harness.cli.main import app

BOARD = """; name: Tiny ring
. . . . . .
. # . . # .
. . B W . .
. . W B . .
. # . . # .
. . . . . .
"""
UNPLAYABLE = """W B . .
. . . .
. . . .
. . . .
"""


@pytest.fixture
def board(tmp_path: Path) -> Path:
    path = tmp_path / "ring.txt"
    path.write_text(BOARD, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "text, k, label",
    [
        ("majority", Fraction(101, 100), "majority"),
        ("minority", Fraction(-1, 100), "minority"),
        ("inverse", Fraction(-1, 100), "minority"),
        ("Majority < 70%", Fraction(7, 10), "majority<0.7"),
        ("minority>1/3", Fraction(1, 3), "minority>1/3"),
        ("k=-0.25", Fraction(-1, 4), "k=-0.25"),
        ("majority<1", Fraction(1), "majority<1"),
        ("k=1.3", Fraction(13, 10), "k=1.3"),
    ],
)
def test_the_condition_grammar_reads_each_form_to_an_exact_k_and_a_canonical_text(text, k, label):
    condition = parse_condition(text)
    assert (condition.k, condition.label) == (k, label)
    assert parse_condition(condition_spec(condition)).k == k  # the canonical text reads back


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("majority<0.3", "outside majority<K's range 0.5 < K <= 1"),
        ("minority>0.8", "write majority<0.8"),
        ("k=0.5", "K=0.5"),
        ("majority<x", "is not a condition"),
        ("most", "is not a condition"),
    ],
)
def test_a_bad_condition_names_what_would_be_right(text, fragment):
    with pytest.raises(ConditionError, match="condition") as error:
        parse_condition(text)
    assert fragment in str(error.value)


def test_every_family_draws_inside_its_own_range():
    for family in FAMILIES.values():
        for k in (family.draw_low, family.draw_high):
            condition = parse_condition(f"k={k}", 10 if family.blitz else None)
            assert family.contains(k) and family_of(condition) == family.name


def test_inline_and_toml_specs_give_one_canonical_key_that_rebuilds_the_environment(board, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    key = env_key("layout=ring.txt, condition=majority<70%, turns=15")
    assert key == f"layout={board},condition=majority<0.7,turns=15"
    toml = tmp_path / "sub" / "env.toml"
    toml.parent.mkdir()
    toml.write_text('layout = "../ring.txt"\ncondition = "majority<0.7"\nturns = 15\n', encoding="utf-8")
    assert env_key(str(toml)) == key
    env = make_env(key)
    assert env.id == key and env.condition.k == Fraction(7, 10) and env.rules.turn_limit == 15
    assert env.layout.obstacles == frozenset({(1, 1), (1, 4), (4, 1), (4, 4)})
    assert env_key(" 12 ") == 12 and make_env(12).id == 12
    assert seed_word(12) == 12 and seed_word(key) != seed_word(key.replace("15", "14"))


@pytest.mark.parametrize(
    "spec, fragment",
    [
        ("layout=ring.txt,condition=majority,colour=red", "unknown field 'colour'; the fields are layout, condition"),
        ("layout=ring.txt,condition=majority<0.3", "K=0.3 is outside majority<K's range"),
        ("layout=ring.txt,condition=minority,turns=0", "turns='0': give a turn limit of 1 or more"),
        ("layout=bad.txt,condition=majority", "layout=bad.txt"),
        ("layout=ring.txt", "field 'condition' is missing"),
        ("56", "0-55"),
        ("nothing", "'nothing'"),
    ],
)
def test_a_bad_spec_is_one_clear_line_from_every_command(board, tmp_path, monkeypatch, spec, fragment):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.txt").write_text(UNPLAYABLE, encoding="utf-8")
    with pytest.raises(EnvSpecError):
        env_key(spec)
    runner = CliRunner()
    for args in (
        ["run", "--model", "mock/first-legal", "--env", spec],
        ["match", "random", "greedy", "--env", spec],
        ["tournament", "--agents", "random", "--agents", "greedy", "--envs", spec],
        ["bench", "paper", "--quick", "--envs", spec, "--dry-run"],
    ):
        result = runner.invoke(app, args, env={"COLUMNS": "250", "NO_COLOR": "1"})
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert result.exit_code == 2, (args, result.output)
        assert len(lines) == 1 and lines[0].startswith("error: ") and fragment in lines[0], (args, result.output)
        assert "Traceback" not in result.output


def test_an_unplayable_layout_names_the_problem(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.txt").write_text(UNPLAYABLE, encoding="utf-8")
    with pytest.raises(EnvSpecError, match="layout=bad.txt: .*(no legal|cannot move|first move)"):
        env_key("layout=bad.txt,condition=majority")
