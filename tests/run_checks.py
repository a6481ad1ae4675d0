"""Checks shared by the end-to-end run tests (not a test module)."""


def assert_replays_and_reruns(run_dir, tmp_path, monkeypatch, games):
    """The run replays with zero mismatches, and a rerun from its cache alone, with no model call, reproduces it."""
    import sys

    from harness.model_client import ModelClient
    from harness.replay import replay_run, rerun

    report = replay_run(run_dir)
    assert report.ok and report.games_checked == games
    monkeypatch.setitem(sys.modules, "litellm", None)  # any import of litellm fails

    async def no_call(self, request):
        raise AssertionError("a model call was attempted")

    monkeypatch.setattr(ModelClient, "_attempt", no_call)
    again = rerun(run_dir, tmp_path / "rerun")
    assert again.reproduced, again.summary()
    assert again.games_compared == games
