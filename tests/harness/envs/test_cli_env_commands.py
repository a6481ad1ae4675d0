"""``arena bench env`` and ``arena train ppo`` through the command line: tiny settings, and their user errors (exit 2)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from harness.cli.main import app

WIDE = {"COLUMNS": "250", "NO_COLOR": "1"}


def _invoke(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args], env=WIDE)


def test_bench_env_prints_every_face_beside_the_bare_engine() -> None:
    result = _invoke("bench", "env", "--envs", "5", "--seconds", "0.05", "--num-envs", "16")
    assert result.exit_code == 0, result.output
    for face in ("bare engine", "PettingZoo AEC", "Gymnasium", "vector env", "no ratio to it is measured", "wall time", "load average"):
        assert face in result.output
    by_cpu = _invoke("bench", "env", "--envs", "5", "--seconds", "0.05", "--num-envs", "16", "--clock", "cpu")
    assert by_cpu.exit_code == 0 and "per CPU second of this process" in by_cpu.output


def test_train_ppo_trains_for_the_budget_and_plays_random(tmp_path) -> None:
    out = tmp_path / "policy.pt"
    result = _invoke("train", "ppo", "5", "--budget", "3", "--n-envs", "2", "--n-steps", "32", "--eval-games", "2", "--out", out)
    assert result.exit_code == 0, result.output
    assert "3 games" in result.output and "vs Random, 2 games:" in result.output and out.is_file()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("bench", "env", "--seconds", "0"), "--seconds must be more than 0"),
        (("bench", "env", "--num-envs", "0"), "--num-envs must be 1 or more"),
        (("bench", "env", "--clock", "gpu"), "--clock 'gpu': choose wall or cpu"),
        (("train", "ppo", "77"), "unknown environment id 77"),
        (("train", "ppo", "5", "--budget", "0"), "--budget must be 1 or more"),
        (("train", "ppo", "5", "--n-steps", "0"), "n_steps=0"),
        (("train", "ppo", "5", "--out", "policy.zip"), "give a file name ending in .pt"),
    ],
)
def test_bad_options_are_one_line_errors(args: tuple[str, ...], message: str) -> None:
    result = _invoke(*args)
    assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output
