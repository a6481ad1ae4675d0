"""Fixtures of the viewer's tests: one small run of each kind (module-wide), and a headless Chromium (session-wide).

The browser tests skip, saying why, where Debian's chromium cannot run (``make browser-tools`` installs it).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engine import make_env
from engine.state import BLACK
from harness.bench.paper_plan import Opponent, make_paper_plan
from harness.bench.paper_run import run_bench_paper
from harness.cli.main import app
from harness.registry.importing import PLUGINS_ENV
from harness.registry.plugins import load_plugins
from harness.runs.llm_run import LlmRunConfig, run_llm
from harness.view.browser import Browser, browser_problem
from tests.harness.cli.cli_args import options

FAKES = Path(__file__).parents[1] / "bench" / "paper_fakes.py"
LLM_ENV = 3  # X-Squares: obstacles on the board


@pytest.fixture(scope="session")
def llm_run(tmp_path_factory) -> Path:
    """An `arena run` of mock/random-legal: 2 adaptation games, 2 evaluation games against random, a belief at 2."""
    config = LlmRunConfig(model="mock/random-legal", env=LLM_ENV, budget=2, eval_games=2, opponents=("random",), seed=0, checkpoints=(2,))
    return run_llm(config, out=tmp_path_factory.mktemp("llm"), run_id="r")


@pytest.fixture(scope="session")
def tournament_run(tmp_path_factory) -> Path:
    """`arena tournament`: llm-policy (mock/random-legal) against random on env 0, 2 games, in this process."""
    out = tmp_path_factory.mktemp("tournament") / "t"
    args = options(agents="llm-policy:model=mock/random-legal", vs="random", envs="0", games="2", jobs="1", in_process=True, out=out)
    result = CliRunner().invoke(app, ["tournament", *args])
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="session")
def paper_run(tmp_path_factory) -> Path:
    """`bench paper --quick`'s plan cut to one environment and one opponent, with the fake adaptive agent of the bench tests."""
    saved = os.environ.get(PLUGINS_ENV)
    load_plugins([FAKES])
    try:
        plan = make_paper_plan((5,), ["fake-adaptive"], quick=True)
        plan = plan.model_copy(update={"opponents": (Opponent(label="Random", spec="random", privileged=False),)})
        run_dir = tmp_path_factory.mktemp("paper") / "p"
        run_bench_paper(plan, run_dir, jobs=1, command="test")
    finally:
        if saved is None:
            os.environ.pop(PLUGINS_ENV, None)
        else:
            os.environ[PLUGINS_ENV] = saved
    return run_dir


@pytest.fixture(scope="session")
def browser():
    problem = browser_problem()
    if problem is not None:
        pytest.skip(f"the viewer's browser tests need a headless browser: {problem}")
    with Browser() as running:
        yield running


CELL_CHARS = {0: ".", 1: "X", -1: "O", 2: "#"}


def _engine_cells(env_id: int, moves: list[str]) -> str:
    """The engine's position after ``moves``, one character a cell (black's view: X black, O white, # obstacle)."""
    rules = make_env(env_id).rules
    state = rules.initial_state()
    for move in moves:
        state = rules.play(state, move)
    return "".join(CELL_CHARS[int(v)] for v in rules.grid(state, BLACK).flatten())


@pytest.fixture
def engine_cells():
    """The engine's board as the viewer's cell string, for comparing with a page's boards."""
    return _engine_cells
