"""``arena envs``: the 56 environments, K hidden unless --reveal."""

from __future__ import annotations

import re


def _id_cells(output: str) -> list[int]:
    return [int(m) for m in re.findall(r"^│\s*(\d+)\s*│", output, flags=re.MULTILINE)]


LABELS = ("Majority", "Minority", "Blitz", "<80%", "<60%", ">20%", ">40%")


def test_envs_lists_all_56_with_the_condition_and_k_hidden(invoke):
    result = invoke("envs")
    assert result.exit_code == 0, result.output
    assert _id_cells(result.output) == list(range(56))
    assert result.output.count("hidden") == 2 * 56  # the condition and K of each
    for k in ("1.01", "-0.01", "0.8", "0.6", "0.4", "0.2", *LABELS):
        assert k not in result.output
    assert "Random Board 1 (12x10)" in result.output
    assert "12x10" in result.output
    assert "10 per player" in result.output


def test_envs_reveal_shows_k(invoke):
    result = invoke("envs", "--reveal")
    assert result.exit_code == 0, result.output
    assert _id_cells(result.output) == list(range(56))
    assert "hidden" not in result.output
    for k in ("1.01", "-0.01", "0.8", "0.6", "0.4", "0.2", "Majority<80%", "Minority>20%", "Majority/Blitz"):
        assert k in result.output
