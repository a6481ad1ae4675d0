"""The parser records where it read the move (``span``) and every other candidate it saw; the choice is unchanged."""

from __future__ import annotations

import pytest

from engine.environments import make_env
from harness.prompting.moves import parse_reply

LAYOUT = make_env(0).rules.layout


@pytest.mark.parametrize(
    ("reply", "finish", "notation", "source"),
    [
        ("d3", None, "d3", "bare"),
        ("I play D3.\n", None, "d3", "bare"),
        ("Thinking...\r\nMOVE: **C4**", None, "c4", "final_line"),
        ('Some prose {"move": "F5"} more prose', None, "f5", "json"),
        ("  **e6**  ", "length", "e6", "bare"),
        ('{"move": "d3", "why": "d3 is good"}', None, "d3", "json"),
    ],
)
def test_the_span_names_the_move(reply, finish, notation, source):
    parsed = parse_reply(reply, LAYOUT, finish)
    assert (parsed.notation, parsed.source) == (notation, source)
    start, end = parsed.span
    assert reply[start:end].lower() == notation


def test_other_candidates_are_listed_once_each_with_their_place():
    reply = 'MOVE: d3\n{"move": "c4"}\nactually f5'
    parsed = parse_reply(reply, LAYOUT)
    assert (parsed.notation, parsed.source) == ("c4", "json")
    others = {(move, source): reply[start:end].lower() for move, source, (start, end) in parsed.candidates}
    assert others == {("d3", "final_line"): "d3", ("f5", "bare"): "f5"}


def test_a_move_seen_by_two_stages_is_one_place():
    parsed = parse_reply("MOVE: d3", LAYOUT)  # the final-line and the bare stages both see this token
    assert parsed.source == "final_line" and parsed.candidates == ()


def test_spans_do_not_change_equality():
    first, second = parse_reply("d3", LAYOUT), parse_reply("   d3", LAYOUT)
    assert first.span != second.span and first == second
