"""Agents written to cheat, through ``arena bench paper``: under the referee none learns K or plays past its budget.

The cheaters (``cheaters.py``, loaded as a plugin so the agent processes know them)
try the simulator grant, private attributes, the call stack, every live object, the
command line, the environment table, a ledger reset, a second arena handle and raw
messages. Run on two environments that differ only in K, what they find must be
the same, and no attempt may play a game past the budget. The in-process arena,
kept for quick experiments, is shown to be bendable and is marked unenforced.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine import make_env
from harness.bench.paper_plan import Opponent, make_paper_plan
from harness.bench.paper_run import run_bench_paper
from harness.referee import session
from harness.registry.plugins import load_plugins

CHEATERS = Path(__file__).with_name("cheaters.py")
MAJORITY, MINORITY = 0, 7  # the same layout (8x8), K = 1.01 and K = -0.01, no turn limit
BUDGET = 6


@pytest.fixture
def reports(reports) -> Path:  # conftest's, with the cheaters loaded here too
    load_plugins([CHEATERS])
    return reports


def _plan(agent: str, referee: bool = True):
    plan = make_paper_plan([MAJORITY, MINORITY], [agent], budget=BUDGET, games=2, checkpoint_games=2, seed=5)
    return plan.model_copy(update={"opponents": (Opponent(label="Random", spec="random", privileged=False),), "referee": referee})


def _findings(directory: Path, name: str) -> list[dict]:
    return [json.loads(path.read_text()) for path in sorted(directory.glob(f"{name}-*.json"))]


def test_the_same_layout_differs_only_in_k():
    majority, minority = make_env(MAJORITY), make_env(MINORITY)
    assert majority.rules == minority.rules and majority.condition.k != minority.condition.k


def test_under_the_referee_no_cheater_learns_k_or_plays_past_the_budget(reports, tmp_path):
    results = run_bench_paper(_plan("cheat-all"), tmp_path / "run", jobs=1)
    found = _findings(reports, "cheat-all")
    assert len(found) == 2
    for findings in found:
        assert findings["grant"].startswith("refused")
        assert findings["private_attributes"] == [] and findings["stack_in_adapt"] == []
        assert findings["gc_objects"] == [] and findings["argv"] == []
        assert set(findings["stack_in_act"]) == {"nothing"}
        assert findings["games_in_budget"] == BUDGET
        assert findings["after_reset"] == 0 and findings["second_handle"] == 0
        assert len(findings["table_candidates"]) > 1  # the table narrows K to the layout's conditions, no further
    assert found[0] == found[1]  # K = 1.01 or K = -0.01: the cheater cannot tell which
    for result in results:
        assert result.enforced and result.games_used == BUDGET
        assert result.refused_games == 2  # the reset ledger's game and the second handle's, both refused
        assert result.adaptation_privileged.refused == ("peek at K",) and not result.adaptation_privileged.privileged
        assert any("REFUSED SIMULATOR REQUESTS" in note for note in result.notes)
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["referee"].startswith("process")


def test_a_message_outside_the_protocol_stops_the_agent_and_is_reported(reports, tmp_path, monkeypatch):
    # The stopped cheater sits in its own recv() and never ends by itself: the referee ends it after
    # JOIN_SECONDS (10 s each environment); how long it waits is not what this test is about.
    monkeypatch.setattr(session, "JOIN_SECONDS", 0.5)
    results = run_bench_paper(_plan("cheat-wire"), tmp_path / "run", jobs=1)
    assert [f["illegal_game"] for f in _findings(reports, "cheat-wire")] == ["rejected", "rejected"]
    for result in results:
        assert result.status == "failed" and "ProtocolViolation" in result.error and "reset_ledger" in result.error
        assert result.games_used == 0  # the illegal game was never charged


def test_the_in_process_arena_is_bendable_and_marked_unenforced(reports, tmp_path):
    """Why the referee exists: in-process, the same cheater reaches K and plays past the budget."""
    results = run_bench_paper(_plan("cheat-all", referee=False), tmp_path / "run", jobs=1)
    found = _findings(reports, "cheat-all")
    assert all(f["private_attributes"] and f["after_reset"] > 0 for f in found)
    assert all(not result.enforced for result in results)
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert "UNENFORCED" in manifest["referee"]
