"""Parsing of env ids and env ranges."""

from __future__ import annotations

import pytest
import typer

from engine import UnknownEnvironmentError
from harness.cli.options import parse_env_id, parse_env_range


@pytest.mark.parametrize(
    "text, ids",
    [
        ("0-6", list(range(7))),
        ("0,3,5", [0, 3, 5]),
        ("0-55", list(range(56))),
        ("all", list(range(56))),
        ("5", [5]),
        (" 2-3 , 9 ", [2, 3, 9]),
        ("0-2,1,7", [0, 1, 2, 7]),
    ],
)
def test_env_ranges(text, ids):
    assert parse_env_range(text) == ids


@pytest.mark.parametrize("text", ["3-1", "56", "0-56", "", "0,,1", "a", "-1", "1-", "1-2-3"])
def test_bad_env_ranges(text):
    with pytest.raises(typer.BadParameter):
        parse_env_range(text)


def test_env_ids():
    assert parse_env_id(" 55 ") == 55
    with pytest.raises(UnknownEnvironmentError):
        parse_env_id("56")
    with pytest.raises(typer.BadParameter):
        parse_env_id("x")
