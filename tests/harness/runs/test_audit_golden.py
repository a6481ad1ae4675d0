"""The parse audit over the golden transcripts: each golden run, re-run as tests/test_golden_runs.py runs it, must
write the golden games and pass ``arena audit`` clean (run by ``make test`` with the rest of the suite).

The golden files hold the games only; the model replies the audit reads are in the
``calls.jsonl`` of the re-run, which plays exactly the golden games (checked here).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_golden_runs import CASES, GOLDEN_DIR, _normalised_lines, _run
from typer.testing import CliRunner

from harness.cli.main import app
from harness.runs.audit import audit_run

MODEL_CASES = ("llm-policy", "llm-strategist")  # the golden runs with model calls (tournament and bench: none)


@pytest.mark.parametrize("name", MODEL_CASES)
def test_the_golden_run_passes_the_audit(name: str, tmp_path: Path) -> None:
    games = _run(name, tmp_path)
    assert _normalised_lines(games) == (GOLDEN_DIR / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    run = games.parent
    report = audit_run(run)
    assert report.ok, report.summary()
    result = CliRunner().invoke(app, ["audit", str(run)], env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    if name == "llm-policy":
        assert report.calls > 0  # every move reply read and checked, not a vacuous pass


def test_every_golden_case_is_covered() -> None:
    assert set(MODEL_CASES) <= set(CASES)
