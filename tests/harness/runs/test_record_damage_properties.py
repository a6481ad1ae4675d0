"""Random damage to a run's records: replay fails and names the damaged file and line.

Hypothesis picks the damage (a field of any line changed, a line dropped or repeated,
a file cut short at any byte) and where; the run is the module's small mock-model run
(tests/harness/runs/conftest.py), copied afresh for every example.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from record_tamper import CHAINED, lines, write_lines

from harness.records.transcript import TranscriptError
from harness.runs.replay import replay_run

# Each example copies the run and replays it (a fraction of a second): a few per kind keep the module fast.
EXAMPLES = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
LINE_COUNTS = {"games.jsonl": 12, "calls.jsonl": 660}  # SMALL_RUN's; cache.jsonl is read from the run


def _copy(base_run: Path, into: str) -> Path:
    run = Path(into) / "r"
    shutil.copytree(base_run, run)
    return run


def _named(report, name: str, allowed: set[int]) -> bool:
    """A finding of ``report`` names ``name`` at one of the ``allowed`` (1-based) lines."""
    return any(f.file == name and f.line in allowed for f in report.findings)


def _fails_naming(run: Path, name: str, allowed: set[int]) -> None:
    """Replay refuses the run (a line it cannot read) or reports findings; either names the damaged line."""
    try:
        report = replay_run(run)
    except TranscriptError as error:  # `arena replay` prints it and exits 2
        assert error.path is not None and error.path.name == name and error.line in allowed, (str(error), sorted(allowed))
        return
    assert not report.ok
    assert _named(report, name, allowed), (name, sorted(allowed), report.summary())


def _different(value: object) -> object:
    """A JSON value unlike ``value`` (so the line's bytes change)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str):
        return value + "~"
    if isinstance(value, list):
        return [*value, 0]
    if isinstance(value, dict):
        return {**value, "~": 0}
    return 0  # None


def _line_count(base_run: Path, name: str) -> int:
    return LINE_COUNTS.get(name) or len(lines(base_run / name))


files = st.sampled_from(CHAINED)


def test_the_base_run_replays_clean(base_run):
    assert replay_run(base_run).ok
    for name, count in LINE_COUNTS.items():
        assert len(lines(base_run / name)) == count


@EXAMPLES
@given(name=files, where=st.floats(0, 1, exclude_max=True), which=st.integers(0, 10_000))
def test_a_changed_field_is_named(base_run, name, where, which):
    with tempfile.TemporaryDirectory() as into:
        run = _copy(base_run, into)
        rows = lines(run / name)
        index = int(where * len(rows))
        record = json.loads(rows[index])
        key = sorted(record)[which % len(record)]
        record[key] = _different(record[key])
        rows[index] = json.dumps(record, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        write_lines(run / name, rows)
        # the line itself (the last line's hash against the seal), or the next line's link to it
        _fails_naming(run, name, {index + 1, index + 2})


def _dropped(rows: list[bytes], index: int) -> list[bytes]:
    return rows[:index] + rows[index + 1 :]


def _repeated(rows: list[bytes], index: int) -> list[bytes]:
    return rows[: index + 1] + [rows[index]] + rows[index + 1 :]


@pytest.mark.parametrize(
    ("damage", "named"),
    [
        pytest.param(_dropped, 1, id="dropped"),  # the line that took its place (its link, or the seal's count when it was the last)
        pytest.param(_repeated, 2, id="repeated"),  # the copy
    ],
)
@EXAMPLES
@given(name=files, where=st.floats(0, 1, exclude_max=True))
def test_a_dropped_or_repeated_line_is_named(base_run, damage, named, name, where):
    with tempfile.TemporaryDirectory() as into:
        run = _copy(base_run, into)
        rows = lines(run / name)
        index = int(where * len(rows))
        write_lines(run / name, damage(rows, index))
        _fails_naming(run, name, {index + named})


@EXAMPLES
@given(name=files, where=st.floats(0, 1, exclude_max=True))
def test_a_file_cut_short_is_named(base_run, name, where):
    with tempfile.TemporaryDirectory() as into:
        run = _copy(base_run, into)
        data = (run / name).read_bytes()
        cut = int(where * len(data))
        (run / name).write_bytes(data[:cut])
        # the line the cut falls in: an incomplete last line, or the first line missing at a line boundary
        _fails_naming(run, name, {data[:cut].count(b"\n") + 1})
