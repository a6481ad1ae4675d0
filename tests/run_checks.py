"""Checks shared by the end-to-end run tests (not a test module)."""


def forbid_model_calls(monkeypatch) -> None:
    """From now on any import of litellm and any model call (mock or not) fails the test."""
    import sys

    from harness.models.client import ModelClient

    monkeypatch.setitem(sys.modules, "litellm", None)

    async def no_call(self, request):
        raise AssertionError("a model call was attempted")

    monkeypatch.setattr(ModelClient, "_attempt", no_call)


def assert_replays_and_reruns(run_dir, tmp_path, monkeypatch, games):
    """The run replays with zero mismatches, and a rerun from its cache alone, with no model call, reproduces it."""
    from harness.runs.replay import replay_run
    from harness.runs.rerun import rerun

    report = replay_run(run_dir)
    assert report.ok and report.games_checked == games
    forbid_model_calls(monkeypatch)
    again = rerun(run_dir, tmp_path / "rerun")
    assert again.reproduced, again.summary()
    assert again.games_compared == games


class Killed(Exception):
    """Raised from an ``on_game`` hook to interrupt a run in the middle."""


def interrupted_then_resumed(config, tmp_path, stop_at, whole=None):
    """(uninterrupted run dir, run dir interrupted after the game ``stop_at(entry)`` picks, then resumed).

    Returns also the games on record at the interruption, for checks of what the cut run kept. ``whole``: the
    uninterrupted run of ``config`` when a fixture has played it already (played here otherwise).
    """
    import pytest

    from harness.records.transcript import TranscriptReader
    from harness.runs.llm_run import run_llm

    if whole is None:
        whole = run_llm(config, out=tmp_path / "whole", run_id="r")

    def hook(entry):
        if stop_at(entry):
            raise Killed

    with pytest.raises(Killed):
        run_llm(config, out=tmp_path / "cut", run_id="r", on_game=hook)
    cut = tmp_path / "cut" / "r"
    kept = TranscriptReader(cut).games()
    run_llm(resume=cut)
    return whole, cut, kept
