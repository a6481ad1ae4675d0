"""Checks on the tests themselves: specific exception types, and no sleeping against the clock."""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
# Files whose sleeps are not waits for an event (the stub server, with its injected latency, lives in harness/testing):
SLEEP_ALLOWED: dict[str, str] = {
    "test_between_calls.py": "watches a stopped worker's CPU over an idle window: nothing may run in it",
    "test_memory_walls.py": "samples host memory while a worker sits idle; the sandboxed programs' own sleeps",
    "test_reader_total.py": "gives a program's thread a window to write between calls (which must never be read)",
    "test_uids.py": "polls /proc until a stranger process of a uid exists",
}
BROAD_RAISES = re.compile(r"pytest\.raises\(\s*\(?\s*(?:Base)?Exception\b")
BARE_SLEEP = re.compile(r"\btime\.sleep\(|^\s*from time import .*\bsleep\b", re.MULTILINE)


def _test_files() -> list[Path]:
    return sorted(TESTS.rglob("*.py"))


def test_no_test_expects_just_any_exception():
    offenders = [
        f"{p.relative_to(TESTS)}:{n}"
        for p in _test_files()
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if BROAD_RAISES.search(line) and p.name != Path(__file__).name
    ]
    assert not offenders, f"name the exception a test expects: {offenders}"


def test_no_test_sleeps_against_the_clock():
    offenders = [
        str(p.relative_to(TESTS))
        for p in _test_files()
        if p.name not in {*SLEEP_ALLOWED, Path(__file__).name} and BARE_SLEEP.search(p.read_text(encoding="utf-8"))
    ]
    assert not offenders, f"wait for an event (a file, a process, a future), not a sleep: {offenders}"
