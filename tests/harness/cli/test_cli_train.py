"""``arena train posnet``: writes the population and the Figure-1 PNG; bad settings are one-line errors."""

from __future__ import annotations

import pytest

from agents.posnet.network import N_PARAMS, load_population
from agents.posnet.train import load_metadata


def test_train_posnet_writes_population_metadata_and_png(invoke, tmp_path):
    out = tmp_path / "nested" / "posnet.npz"
    result = invoke("train", "posnet", "--population", "4", "--generations", "1", "--layouts", "3", "--out", out)
    assert result.exit_code == 0, result.output
    assert out.is_file() and out.with_suffix(".png").is_file()
    assert out.with_suffix(".png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert load_population(out).shape == (4, N_PARAMS)
    metadata = load_metadata(out)
    assert (metadata["population_size"], metadata["generations"], metadata["layouts"], metadata["games"]) == (4, 1, 3, 4)
    assert "4 games in 1 generations" in result.output
    assert str(out) in result.output


def test_zero_generations_saves_the_initial_population(invoke, tmp_path):
    out = tmp_path / "zero.npz"
    result = invoke("train", "posnet", "--population", "2", "--generations", "0", "--layouts", "1", "--out", out)
    assert result.exit_code == 0, result.output
    assert load_population(out).shape == (2, N_PARAMS) and load_metadata(out)["games"] == 0


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["--population", "3"], "even"),
        (["--population", "0"], "population=0"),
        (["--generations", "-1"], "generations=-1"),
        (["--layouts", "0"], "layouts=0"),
        (["--sigma", "-0.5"], "sigma"),
        (["--seed", "-2"], "seed=-2"),
        (["--out", "weights.txt"], ".npz"),
    ],
)
def test_bad_settings_exit_2_with_one_line(invoke, user_error, tmp_path, args, fragment):
    out = tmp_path / "never.npz"
    result = invoke("train", "posnet", "--generations", "0", "--layouts", "1", "--out", out, *args)  # last --out wins
    user_error(result, fragment)
    assert not list(tmp_path.iterdir())


def test_out_that_is_a_directory_is_refused(invoke, user_error, tmp_path):
    folder = tmp_path / "dir.npz"
    folder.mkdir()
    user_error(invoke("train", "posnet", "--generations", "0", "--layouts", "1", "--out", folder), "directory")


def test_train_help_lists_posnet(invoke):
    result = invoke("train", "--help")
    assert result.exit_code == 0 and "posnet" in result.output
