"""Held-out suites: reproducible, the public file and the prompts hold no condition, commitments are checked;
a custom layout + condition runs through run (mock model), match, tournament and bench paper --quick."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
from typer.testing import CliRunner

from engine import make_env
from engine.condition_grammar import PAPER_KS
from engine.suite import SEALED_FILE, SuiteError, SuiteSettings, new_suite, read_public, suite_env
from harness.cli.main import app

WIDE = {"COLUMNS": "250", "NO_COLOR": "1"}
BOARD = """; name: Tiny ring
. . . . . .
. # . . # .
. . B W . .
. . W B . .
. # . . # .
. . . . . .
"""


def arena(*args: object) -> object:
    result = CliRunner().invoke(app, [str(a) for a in args], env=WIDE)
    assert result.exit_code == 0, result.output
    return result


def secrets_of(sealed_text: str) -> list[str]:
    """Every string that would give a sealed condition away: its text, family, K as decimal and fraction."""
    words = []
    for item in json.loads(sealed_text)["environments"]:
        k = make_env_k(item["condition"])
        words += [item["condition"], item["family"], f"{k.numerator}/{k.denominator}", str(float(k))]
    return words


def make_env_k(text: str) -> Fraction:
    from engine.condition_grammar import parse_condition

    return parse_condition(text).k


def test_envs_new_is_reproducible_byte_for_byte_and_its_public_file_holds_no_condition(tmp_path):
    arena("envs", "new", "--count", 20, "--seed", 1, "--out", tmp_path / "a")
    arena("envs", "new", "--count", 20, "--seed", 1, "--out", tmp_path / "b")
    for name in ("public.json", "sealed.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    public = (tmp_path / "a" / "public.json").read_text(encoding="utf-8")
    sealed = (tmp_path / "a" / SEALED_FILE).read_text(encoding="utf-8")
    assert sealed != new_suite(SuiteSettings(count=20, seed=2))[1]
    for word in [*secrets_of(sealed), "majority", "minority", '"seed"', 'salt"']:
        assert word not in public, word
    listed = arena("envs", "list", tmp_path / "a").output
    for word in secrets_of(sealed):
        assert word not in listed, word
    ks = [make_env(f"{tmp_path / 'a'}:{entry}").condition.k for entry in range(20)]
    assert len(set(ks)) > 15 and not set(ks) & PAPER_KS  # continuous draws, none of the paper's K


def test_a_changed_sealed_or_public_file_breaks_the_commitment(tmp_path):
    arena("envs", "new", "--count", 3, "--seed", 5, "--out", tmp_path)
    env = suite_env(tmp_path, 1)
    assert env.name == read_public(tmp_path)[1][1].layout.name and env.condition.label not in env.name
    sealed_path = tmp_path / SEALED_FILE
    sealed = json.loads(sealed_path.read_text(encoding="utf-8"))
    sealed["environments"][1]["condition"] = "k=0.123" if env.condition.label != "k=0.123" else "k=0.124"
    sealed_path.write_text(json.dumps(sealed, indent=1) + "\n", encoding="utf-8")
    with pytest.raises(SuiteError, match="entry 1's sealed condition does not match its commitment"):
        suite_env(tmp_path, 1)
    suite_env(tmp_path, 0)  # the other entries still read
    public_path = tmp_path / "public.json"
    public_path.write_text(public_path.read_text(encoding="utf-8").replace('"suite"', '"suite2"', 1), encoding="utf-8")
    with pytest.raises(SuiteError, match="not the file sealed.json was made with"):
        suite_env(tmp_path, 0)


def test_a_mock_run_on_a_suite_entry_never_shows_its_condition_and_replay_checks_the_commitment(tmp_path):
    suite = tmp_path / "suite"
    arena("envs", "new", "--count", 4, "--seed", 3, "--out", suite)
    out = tmp_path / "runs"
    arena("run", "--model", "mock/first-legal", "--env", f"{suite}:2", "--budget", 2, "--eval-games", 2, "--checkpoints", 2, "--out", out)
    (run_dir,) = out.iterdir()
    entry = json.loads((suite / SEALED_FILE).read_text(encoding="utf-8"))["environments"][2]
    k = make_env_k(entry["condition"])
    calls = (run_dir / "calls.jsonl").read_text(encoding="utf-8")
    assert calls.count("\n") > 4
    for word in (entry["condition"], entry["family"], f"{k.numerator}/{k.denominator}", str(float(k)), str(suite)):
        assert word not in calls, word
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    assert entry["condition"] not in json.dumps(manifest)
    replayed = arena("replay", run_dir).output
    assert "no mismatches" in replayed and "commitments OK" in replayed and entry["condition"] not in replayed
    arena(
        "tournament",
        "--agents",
        "greedy",
        "--agents",
        "random",
        "--envs",
        f"{suite}:1-2",
        "--games",
        1,
        "--jobs",
        1,
        "--in-process",
        "--out",
        tmp_path / "t",
    )
    assert "commitments OK: the salted sha256 of the sealed condition of each of the 2" in arena("replay", tmp_path / "t").output
    sealed = json.loads((suite / SEALED_FILE).read_text(encoding="utf-8"))
    sealed["environments"][2]["condition"] = "k=0.321"  # tampered after the runs: entry 2 no longer matches public.json
    (suite / SEALED_FILE).write_text(json.dumps(sealed), encoding="utf-8")
    for directory in (run_dir, tmp_path / "t"):
        result = CliRunner().invoke(app, ["replay", str(directory)], env=WIDE)
        assert result.exit_code == 1 and "commitments OK" not in result.output, result.output
        assert f"commitment FAILED for environment {suite.resolve()}:2" in result.output
        assert "entry 2's sealed condition does not match its commitment" in result.output
        assert f"environment {suite.resolve()}:1" not in result.output  # entry 1 still checks out
    assert f"env {suite.resolve()}:2" not in result.output and f"env {suite.resolve()}:1" in result.output  # its games replayed


def test_a_custom_layout_and_condition_runs_through_run_match_tournament_and_bench_paper(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ring.txt").write_text(BOARD, encoding="utf-8")
    spec = "layout=ring.txt,condition=minority>0.3,turns=12"
    key = f"layout={tmp_path / 'ring.txt'},condition=minority>0.3,turns=12"
    arena("run", "--model", "mock/echo", "--env", spec, "--budget", 2, "--eval-games", 1, "--checkpoints", 2, "--out", tmp_path / "r")
    (run_dir,) = (tmp_path / "r").iterdir()
    assert json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))["config"]["env"] == key
    assert "no mismatches" in arena("replay", run_dir).output
    match = arena("match", "greedy", "random", "--env", spec, "--games", 2, "--jobs", 1, "--in-process", "--out", tmp_path / "m")
    assert "Tiny ring / minority>0.3, 12 turns" in match.output
    lines = [json.loads(line) for line in (tmp_path / "m" / "games.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {line["env_id"] for line in lines} == {key} and len(lines) == 2
    arena("tournament", "--agents", "greedy", "--agents", "random", "--envs", spec, "--games", 2, "--jobs", 1, "--out", tmp_path / "t")
    assert json.loads((tmp_path / "t" / "manifest.json").read_text(encoding="utf-8"))["envs"] == [key]
    arena("envs", "new", "--count", 2, "--seed", 4, "--sizes", "6-7", "--out", tmp_path / "s")
    arena(
        "bench",
        "paper",
        "--quick",
        "--envs",
        spec,
        "--suite",
        tmp_path / "s",
        "--agents",
        "interval",
        "--budget",
        3,
        "--games",
        1,
        "--checkpoint-games",
        1,
        "--jobs",
        1,
        "--in-process",
        "--out",
        tmp_path / "p",
    )
    report = (tmp_path / "p" / "report.md").read_text(encoding="utf-8")
    assert "## Generalisation: the published 56 vs held-out environments" in report
    assert "held-out minority>0.3 (12 turns)" in report  # conditions are revealed in the finished report
