"""Clean errors: unwritable or missing paths, a full disk, a run of a newer schema: one line, exit 2, no traceback.

``arena --debug ...`` shows the traceback instead.
"""

from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest

from harness.records.transcript import TranscriptWriter
from harness.runs.llm_run import LlmRunConfig, run_llm
from harness.tournaments.plan import make_plan, versus
from harness.tournaments.tournament import run_tournament

RUN = ["run", "--model", "mock/first-legal", "--env", "21", "--budget", "4", "--eval-games", "2", "--checkpoints", "4", "--in-process"]
COMMANDS = {
    "run": RUN,
    "match": ["match", "random", "greedy", "--env", "21", "--games", "1", "--jobs", "1"],
    "tournament": ["tournament", "--agents", "random", "--vs", "greedy", "--envs", "21", "--games", "1", "--jobs", "1"],
    "bench paper": ["bench", "paper", "--envs", "0", "--agents", "minimax:depth=1", "--budget", "2", "--jobs", "1"],
}


@pytest.fixture
def a_file(tmp_path) -> Path:
    path = tmp_path / "a-file"
    path.write_text("not a directory")
    return path


@pytest.mark.parametrize("command", COMMANDS)
def test_an_out_path_that_cannot_be_created_is_one_line(invoke, user_error, a_file, command):
    user_error(invoke(*COMMANDS[command], "--out", a_file / "sub"), str(a_file), "Not a directory")


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux /proc")
def test_out_under_proc_is_one_line(invoke, user_error):
    user_error(invoke(*RUN, "--out", "/proc/forbidden"), "/proc/forbidden")


def test_debug_shows_the_traceback_instead(invoke, a_file):
    result = invoke("--debug", *RUN, "--out", a_file / "sub")
    assert result.exit_code != 2
    assert isinstance(result.exception, OSError)


def test_a_full_disk_stops_the_run_keeps_what_was_written_and_says_how_to_go_on(invoke, user_error, tmp_path, monkeypatch):
    write_game = TranscriptWriter.append_game
    written = []

    def full_after_two(self, entry):
        if len(written) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        written.append(entry)
        return write_game(self, entry)

    monkeypatch.setattr(TranscriptWriter, "append_game", full_after_two)
    result = invoke(*RUN, "--out", tmp_path)
    (run_dir,) = tmp_path.iterdir()
    user_error(result, "the disk is full", "No space left on device", f"kept in {run_dir}", f"arena run --resume {run_dir}")
    assert len((run_dir / "games.jsonl").read_text().splitlines()) == 2
    monkeypatch.setattr(TranscriptWriter, "append_game", write_game)
    resumed = invoke("run", "--resume", run_dir)
    assert resumed.exit_code == 0, resumed.output
    assert len((run_dir / "games.jsonl").read_text().splitlines()) == 4 + 2
    assert invoke("replay", run_dir).exit_code == 0


def test_a_full_disk_elsewhere_is_one_line(invoke, user_error, tmp_path, monkeypatch):
    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "t" / "games.jsonl"))

    monkeypatch.setattr("harness.cli.tournament.run_tournament", full)
    user_error(
        invoke(*COMMANDS["tournament"], "--out", tmp_path / "t"),
        "the disk is full",
        "games.jsonl",
        "every record written before it is kept",
    )


@pytest.fixture(scope="module")
def newer_runs(tmp_path_factory):
    """An arena run, a tournament and their copies whose schema version is one this code does not know."""
    out = tmp_path_factory.mktemp("newer")
    run_dir = run_llm(
        LlmRunConfig(model="mock/first-legal", env=21, budget=1, eval_games=1, checkpoints=(1,), referee=False), out=out, run_id="llm"
    )
    manifest = json.loads((run_dir / "manifest.json").read_text())
    (run_dir / "manifest.json").write_text(json.dumps({**manifest, "schema_version": 99}))
    tournament = out / "tournament"
    run_tournament(make_plan(versus(["random"], ["greedy"]), [21], 1, 0), tournament, jobs=1)
    results = json.loads((tournament / "results.json").read_text())
    (tournament / "results.json").write_text(json.dumps({**results, "schema_version": 99}))
    bench = out / "bench"
    bench.mkdir()
    (bench / "manifest.json").write_text(json.dumps({"schema_version": 99, "kind": "bench-paper"}))
    return {"llm": run_dir, "tournament": tournament, "bench": bench}


@pytest.mark.parametrize(
    ("args", "kind"),
    [
        (["run", "--resume"], "llm"),
        (["replay"], "llm"),
        (["compare"], "llm"),
        (["compare"], "tournament"),
        (["bench", "paper", "--resume"], "bench"),
    ],
)
def test_a_run_of_a_newer_schema_is_one_line(invoke, user_error, newer_runs, args, kind):
    user_error(invoke(*args, newer_runs[kind]), "schema_version 99")
