"""What the records' entries left free (survivors of `make mutation MODULES=records`).

Pinned here: where a :class:`TranscriptError` says it is (file and line, file only, or nowhere)
and the place :func:`secret_paths` names for a secret found in a bare value.
"""

from __future__ import annotations

from pathlib import Path

from harness.records.entries import TranscriptError, secret_paths

FAKE_KEY = "sk-" + "A1b2C3d4E5f6G7h8I9j0"


def test_a_transcript_error_names_the_file_and_line_it_has():
    at_line = TranscriptError("bad", Path("run/games.jsonl"), 3)
    assert str(at_line) == "run/games.jsonl:3: bad" and (at_line.path, at_line.line) == (Path("run/games.jsonl"), 3)
    assert str(TranscriptError("bad", Path("run/games.jsonl"))) == "run/games.jsonl: bad"
    assert str(TranscriptError("bad")) == "bad"
    assert str(TranscriptError("bad", None, 3)) == "bad"


def test_a_secret_in_a_bare_value_is_named_as_the_value():
    assert secret_paths(FAKE_KEY) == ["<value>"]
    assert secret_paths([FAKE_KEY]) == ["[0]"]
    assert secret_paths({"note": FAKE_KEY}) == ["note"]
    assert secret_paths("sk-short") == []
