"""``arena match``/``arena tournament``: --resume's refusals and the marking of adaptive agents played unadapted."""

from __future__ import annotations

import json


def test_resume_refuses_flags_that_differ_from_the_manifest_naming_them(invoke, user_error, tmp_path):
    out = tmp_path / "m"
    assert (
        invoke(
            "match", "random", "greedy", "--env", "5", "--games", "2", "--seed", "3", "--jobs", "1", "--in-process", "--out", out
        ).exit_code
        == 0
    )
    result = invoke("match", "random", "corner", "--env", "5", "--games", "4", "--resume", out)
    user_error(result, "--resume takes its settings from", "B (corner given, greedy recorded)", "--games (4 given, 2 recorded)")
    assert "--env" not in result.output.split("differ")[1]  # the same env is no difference


def test_resume_accepts_flags_equal_to_the_manifest_and_finishes_a_cut_run(invoke, tmp_path):
    out = tmp_path / "t"
    first = invoke(
        "tournament", "--agents", "random", "--agents", "greedy", "--envs", "5", "--games", "4", "--jobs", "1", "--in-process", "--out", out
    )
    assert first.exit_code == 0, first.output
    whole = json.loads((out / "results.json").read_text())
    games = (out / "games.jsonl").read_text().splitlines(keepends=True)
    (out / "games.jsonl").write_text("".join(games[:1]) + games[1][:40])  # one game kept, the next torn mid-line
    (out / "results.json").unlink()
    result = invoke("tournament", "--games", "4", "--seed", "0", "--jobs", "1", "--resume", out)
    assert result.exit_code == 0, result.output
    assert json.loads((out / "results.json").read_text()) == whole
    lines = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    assert sorted(line["game"] for line in lines) == [0, 1, 2, 3]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["resumes"][0]["games_on_record"] == 1


def test_resume_refuses_a_run_of_another_kind(invoke, user_error, tmp_path):
    out = tmp_path / "m"
    assert invoke("match", "random", "greedy", "--env", "5", "--games", "1", "--jobs", "1", "--in-process", "--out", out).exit_code == 0
    user_error(invoke("tournament", "--resume", out), "its manifest is a 'match' run")
    user_error(invoke("match", "--resume", tmp_path / "nothing"), "no manifest.json")


def test_an_adaptive_agent_is_warned_about_once_and_marked_unadapted(invoke, tmp_path):
    out = tmp_path / "a"
    result = invoke("match", "interval", "greedy", "--env", "5", "--games", "2", "--jobs", "1", "--in-process", "--out", out)
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.output.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "interval" in warnings[0] and "unadapted" in warnings[0]
    assert "interval (unadapted)" in result.output and "greedy (unadapted)" not in result.output
    results = json.loads((out / "results.json").read_text())
    assert results["unadapted_agents"] == ["interval"]
    assert results["over_envs"][0]["a_unadapted"] and not results["over_envs"][0]["b_unadapted"]
    assert "interval (unadapted)" in (out / "results.md").read_text()


def test_frozen_agents_get_no_warning(invoke, tmp_path):
    result = invoke(
        "match", "random", "minimax:depth=1", "--env", "5", "--games", "1", "--jobs", "1", "--in-process", "--out", tmp_path / "f"
    )
    assert result.exit_code == 0, result.output
    assert "warning:" not in result.output and "unadapted" not in result.output
