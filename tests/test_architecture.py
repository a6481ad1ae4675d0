"""The tree's shape: one-way layers (import-linter), short modules, the harness as named parts, no old paths."""

from __future__ import annotations

import importlib
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 400
SOURCE_DIRS = ("engine", "agents", "harness", "tests")
HARNESS_PARTS = (
    "installation",
    "sandbox",
    "play",
    "envs",
    "models",
    "prompting",
    "cwm",
    "registry",
    "records",
    "referee",
    "tournaments",
    "runs",
    "view",
    "bench",
    "sweep",
    "testing",
    "cli",
)
# Flat modules of the harness before it was split into parts, and the agents' old homes: all gone, no shims.
OLD_MODULES = (
    "harness.arena",
    "harness.beliefs",
    "harness.bench_agents",
    "harness.bench_engine",
    "harness.bench_harness",
    "harness.bench_paper",
    "harness.bench_paper_report",
    "harness.bench_paper_run",
    "harness.episode_memory",
    "harness.game",
    "harness.llm_run",
    "harness.match",
    "harness.mock_model",
    "harness.mock_reasoner",
    "harness.model_cache",
    "harness.model_client",
    "harness.model_errors",
    "harness.moves",
    "harness.observation",
    "harness.paper_plots",
    "harness.policy",
    "harness.posnet_plot",
    "harness.provenance",
    "harness.render",
    "harness.replay",
    "harness.stats",
    "harness.tournament",
    "harness.tournament_results",
    "harness.transcript",
    "harness.verified_game",
    "agents.llm",
    "agents.registry",
    "agents.search.bench",
    "agents.simple",
    "agents.positional",
    "agents.minimax",
    "agents.mcts",
    "agents.posnet_kernel",
    "agents.posnet_train",
    "agents.ntuple_agent",
    "agents.ntuple_kernel",
    "agents.ntuple_nes",
    "agents.ntuple_train",
    "agents.search.ntuple_negamax",
    "agents.az_agent",
    "agents.az_net",
    "agents.az_search",
    "agents.az_train",
    "agents.interval_belief",
    "agents.reference_adapter",
    "agents.data",
)
# Flat agent modules that became family packages: the package holds no code, so the old names do not import from it.
OLD_FLAT_NAMES = (
    ("agents.posnet", "posnet_table"),
    ("agents.posnet", "PosNetAgent"),
    ("agents.ntuple", "NTupleNetwork"),
    ("agents.interval", "IntervalAgent"),
    ("agents.adaptive_minimax", "AdaptiveMinimaxAgent"),
)
# agents/: one folder per family (each with its data), beside the modules every family shares.
AGENT_FAMILIES = ("adaptive_minimax", "az", "heuristic", "interval", "ntuple", "posnet", "reference", "search")
AGENTS_SHARED = ("base.py", "evolution.py", "spec.py")


def test_import_contracts_hold():
    """engine <- agents <- harness parts <- cli, no cycles (the contracts in pyproject.toml)."""
    lint_imports = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(lint_imports)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_no_module_is_longer_than_the_limit():
    too_long = {
        str(path.relative_to(ROOT)): lines
        for folder in SOURCE_DIRS
        for path in sorted((ROOT / folder).rglob("*.py"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not too_long, f"modules over {MAX_LINES} lines (split them by concern): {too_long}"


@pytest.mark.parametrize("part", HARNESS_PARTS)
def test_each_harness_part_says_what_it_holds_and_may_import(part):
    package = importlib.import_module(f"harness.{part}")
    assert package.__doc__ and len(package.__doc__.strip()) > 40
    assert "import" in package.__doc__, f"harness.{part}: say what the part may import"


def test_harness_holds_only_its_parts():
    flat = sorted(p.name for p in (ROOT / "harness").glob("*.py") if p.name != "__init__.py")
    folders = sorted(p.name for p in (ROOT / "harness").iterdir() if p.is_dir() and (p / "__init__.py").exists())
    assert flat == [] and folders == sorted(HARNESS_PARTS)


@pytest.mark.parametrize("name", OLD_MODULES)
def test_old_module_paths_are_gone(name):
    assert importlib.util.find_spec(name) is None, f"{name} still exists: import from its new home"


@pytest.mark.parametrize(("package", "name"), OLD_FLAT_NAMES)
def test_old_flat_agent_names_do_not_import_from_their_family_package(package, name):
    assert not hasattr(importlib.import_module(package), name), f"{package} re-exports {name}: import it from its module"


def test_agents_holds_only_its_families_and_the_shared_modules():
    flat = sorted(p.name for p in (ROOT / "agents").glob("*.py") if p.name != "__init__.py")
    folders = sorted(p.name for p in (ROOT / "agents").iterdir() if p.is_dir() and p.name != "__pycache__")
    assert flat == sorted(AGENTS_SHARED) and folders == sorted(AGENT_FAMILIES)


@pytest.mark.parametrize("family", AGENT_FAMILIES)
def test_each_agent_family_says_what_it_is_and_holds_no_code_in_its_package(family):
    path = ROOT / "agents" / family / "__init__.py"
    package = importlib.import_module(f"agents.{family}")
    assert package.__doc__ and len(package.__doc__.strip()) > 40
    code = [line for line in path.read_text(encoding="utf-8").splitlines() if line.startswith(("import ", "from ", "def ", "class "))]
    assert code == [], f"agents/{family}/__init__.py holds code (no shims, no re-exports): {code}"
