"""``arena bench paper``: a tiny run end to end, resume, and the options' user errors (exit 2, one line)."""

from __future__ import annotations

import json

import pytest

from tests.harness.cli.cli_args import options


def test_tiny_run_exits_as_its_target_rows_say_and_writes_everything(invoke, bench_paper_ok, tmp_path):
    out = tmp_path / "run"
    result = invoke(
        "bench", "paper", *options(envs="0", agents="minimax:depth=1", budget="10", games="2", checkpoint_games="2", jobs="1", out=out)
    )
    bench_paper_ok(result, out)
    for text in ("Per environment: minimax:depth=1", "Per condition: win rate", "Targets", "MCTS-100*", "n/a", f"run recorded in {out}"):
        assert text in result.output, result.output
    assert {p.name for p in out.iterdir()} >= {"manifest.json", "results.jsonl", "results.json", "report.md"}
    lines = (out / "results.jsonl").read_text().splitlines()
    assert len(lines) == 1 and json.loads(lines[0])["games_used"] == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["command"].startswith("arena bench paper --envs 0 --agents minimax:depth=1 --budget 10")
    resumed = invoke("bench", "paper", "--resume", out, "--jobs", "1")
    bench_paper_ok(resumed, out)
    assert len((out / "results.jsonl").read_text().splitlines()) == 1


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--agents", "no-such-agent"], "unknown agent 'no-such-agent'"),
        (["--jobs", "0"], "--jobs must be 1 or more"),
        (["--budget", "-1"], "--budget must be 1 or more"),
        (["--games", "0"], "--games must be 1 or more"),
        (["--envs", "99"], "goes past the last id"),
    ],
)
def test_bad_options_are_user_errors(invoke, user_error, tmp_path, args, fragment):
    result = invoke("bench", "paper", "--envs", "0", "--agents", "minimax:depth=1", "--out", tmp_path / "x", *args)
    user_error(result, fragment)
    assert not (tmp_path / "x").exists()


def test_resume_refuses_new_settings(invoke, user_error, tmp_path):
    result = invoke("bench", "paper", "--resume", tmp_path, "--budget", "5")
    user_error(result, "--resume takes its settings", "--budget")
    result = invoke("bench", "paper", "--resume", tmp_path)
    user_error(result, "no manifest.json")


@pytest.mark.parametrize(
    ("flags", "mode", "report_line"),
    [
        ([], "process", "Enforced: each agent adapted in its own process"),
        (["--in-process"], "in-process (UNENFORCED", "**UNENFORCED**: agents adapted in-process"),
    ],
)
def test_the_run_records_and_reports_how_the_budget_was_held(invoke, bench_paper_ok, tmp_path, flags, mode, report_line):
    out = tmp_path / "run"
    result = invoke(
        "bench", "paper", *options(envs="5", agents="interval", budget="6", games="2", checkpoint_games="2", jobs="1", out=out), *flags
    )
    bench_paper_ok(result, out)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["referee"].startswith(mode) and manifest["plan"]["referee"] is (not flags)
    assert report_line in (out / "report.md").read_text()
    assert json.loads((out / "results.jsonl").read_text())["enforced"] is (not flags)
    assert ("--in-process" in manifest["command"]) is bool(flags)
