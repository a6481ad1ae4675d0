"""arena run through real processes: Ctrl-C mid-run then --resume equals an uninterrupted run; a token cap is honest.

The interrupt is sent once the run has written a given number of games (the test
waits on the file); every wait has a hang guard. The evaluation opponent is
``gated-random`` (``tests/gate_agents.py``, a plugin): from that many games on it
holds its moves until the test, having seen the run take the signal, opens the gate,
so the signal lands mid-run however slowly the test is scheduled (the last games of
a quick run could otherwise finish first). Uninterrupted runs are played in-process
(:func:`run_llm`, the same code and the same referee process).
"""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli.main import app
from harness.cli.run import CAP_EXIT_CODE
from harness.records.interrupts import INTERRUPTED_EXIT_CODE as INTERRUPT_EXIT_CODE
from harness.records.transcript import TranscriptReader
from harness.registry.importing import PLUGINS_ENV
from harness.registry.plugins import load_plugins
from harness.runs.llm_run import LlmRunConfig, run_llm
from harness.runs.run_stop import UNFINISHED_GAME
from tests import gate_agents
from tests.process_watch import StderrWatch, wait_for_lines

REPO = Path(__file__).resolve().parents[3]
HANG_GUARD_S = 120  # a broken interrupt hangs: fail then, not never
GATE_PLUGIN = Path(gate_agents.__file__)
POLICY = dict(agent="llm-policy", model="mock/random-legal", env=21, budget=6, eval_games=4, seed=3, checkpoints=(3,),
              concurrency=1, opponents=("gated-random",))
STRATEGIST = dict(agent="llm-strategist", model="mock/reasoner", env=21, budget=8, eval_games=4, seed=5, batch=3,
                  checkpoints=(3, 8), search_depth=1, endgame=4, concurrency=1, opponents=("gated-random",))


def flags(config: dict) -> list[str]:
    args = []
    for name, value in config.items():
        value = ",".join(map(str, value)) if isinstance(value, tuple) else str(value)
        args += ["--" + name.replace("_", "-"), value]
    return args


def arena(*args: str, gate: str | None = None) -> subprocess.Popen:
    """``arena ARGS --plugin tests/gate_agents.py``; with ``gate``, its agents wait at that gate."""
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "COLUMNS": "400"}
    env.pop(gate_agents.GATE_ENV, None)
    if gate is not None:
        env[gate_agents.GATE_ENV] = gate
    return subprocess.Popen([sys.executable, "-m", "harness.cli.main", *args, "--plugin", str(GATE_PLUGIN)], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def played(run_dir: Path) -> list[tuple]:
    return [(g.phase, g.game_index, g.moves, g.rewards) for g in TranscriptReader(run_dir).games()]


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    """The uninterrupted run of each configuration (by agent), played once per module."""
    runs: dict[str, Path] = {}

    def run(base: dict) -> Path:
        if base["agent"] not in runs:
            runs[base["agent"]] = run_llm(LlmRunConfig(**base), out=tmp_path_factory.mktemp("whole"), run_id="r")
        return runs[base["agent"]]

    inherited = os.environ.get(PLUGINS_ENV)
    load_plugins([GATE_PLUGIN])  # the gated opponent, here and in the referee's processes (no gate set: plain random)
    yield run
    if inherited is None:  # the plugin variable as it was, for the tests after these
        os.environ.pop(PLUGINS_ENV, None)
    else:
        os.environ[PLUGINS_ENV] = inherited


@pytest.mark.parametrize("base, cut", [(POLICY, 2), (POLICY, 7), (STRATEGIST, 4), (STRATEGIST, 9)],
                         ids=["policy-adapt", "policy-eval", "strategist-adapt", "strategist-eval"])
def test_ctrl_c_stops_cleanly_and_resume_equals_an_uninterrupted_run(tmp_path, uninterrupted, base, cut):
    whole = uninterrupted(base)
    out, release = tmp_path / "cut", tmp_path / "release"
    process = arena("run", *flags(base), "--out", str(out), gate=gate_agents.gate_value(out / "*" / "games.jsonl", cut, release))
    watch = StderrWatch(process)
    run_dir = wait_for_lines(out, "*/games.jsonl", cut, process).parent  # from here the evaluation games hold still
    process.send_signal(signal.SIGINT)
    watch.wait_for("stopping (SIGINT)")
    release.touch()
    process.wait(timeout=HANG_GUARD_S)
    stderr = "\n".join(watch.finish())
    assert process.returncode == INTERRUPT_EXIT_CODE, stderr[-2000:]
    last = stderr.strip().splitlines()[-1]
    assert last == f"continue with: arena run --resume {run_dir}"
    assert "interrupted by SIGINT: kept" in stderr and "every record is written" in stderr
    kept = played(run_dir)
    assert cut <= len(kept) < len(played(whole)), "the interrupt must land mid-run and keep what was written"
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["stopped"] == "interrupted by SIGINT"
    resumed = arena("run", "--resume", str(run_dir))
    _, stderr = resumed.communicate(timeout=HANG_GUARD_S)
    assert resumed.returncode == 0, stderr[-2000:]
    assert played(run_dir) == played(whole)  # moves and rewards of every game, both phases
    assert [g.phase for g in TranscriptReader(run_dir).games()].count("eval") == base["eval_games"]


def test_a_token_cap_logs_every_paid_call_exits_4_and_resumes_with_a_raised_cap(tmp_path, uninterrupted):
    base = POLICY
    whole = uninterrupted(base)
    process = arena("run", *flags(base), "--max-tokens", "20000", "--out", str(tmp_path / "cut"))
    stdout, stderr = process.communicate(timeout=HANG_GUARD_S)
    assert process.returncode == CAP_EXIT_CODE, stderr[-2000:]
    (run_dir,) = (tmp_path / "cut").iterdir()
    calls = TranscriptReader(run_dir).calls()
    paid = [c for c in calls if not c.cache_hit]
    used = sum(c.tokens_in + c.tokens_out for c in paid)
    last = stderr.strip().splitlines()[-1]
    assert f"token cap reached: {used} tokens used of --max-tokens 20000" in last and used >= 20000
    assert last.endswith(f"continue with a higher cap: arena run --resume {run_dir} --max-tokens 40000")
    replies = [json.loads(line) for line in (run_dir / "cache.jsonl").read_text().splitlines()]
    paid_keys = sorted(line["key"] for line in replies if "response" in line)
    assert sorted(c.cache_key for c in paid) == paid_keys  # every reply paid for has its call record, once
    assert any(c.reason == UNFINISHED_GAME for c in paid)  # the game under way when the cap struck
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["tokens_in"] + metrics["tokens_out"] == used and metrics["calls"] == len(calls) > 0
    refused = CliRunner().invoke(app, ["run", "--resume", str(run_dir), "--seed", "4"], env={"COLUMNS": "400"})  # refused before any game
    assert refused.exit_code == 2 and "--seed 4 differs from the run's 3" in refused.output, refused.output
    assert isinstance(refused.exception, SystemExit)  # a one-line user error, no traceback
    resumed = arena("run", "--resume", str(run_dir), "--max-tokens", "10000000", "--seed", "3")
    _, stderr = resumed.communicate(timeout=HANG_GUARD_S)
    assert resumed.returncode == 0, stderr[-2000:]
    assert played(run_dir) == played(whole)
    config = json.loads((run_dir / "manifest.json").read_text())["config"]
    assert config["max_tokens"] == 10_000_000
    assert config["cap_changes"] == [{"adapt_games": metrics["adapt_games"], "eval_games": metrics["eval_games"],
                                      "max_tokens": 10_000_000, "max_cost_usd": None}]


def test_failed_attempts_count_strategy_failures(tmp_path):
    config = LlmRunConfig(agent="llm-strategist", model="mock/flaky-strategist", env=21, budget=8, eval_games=0, seed=2,
                          batch=1, search_depth=1, endgame=4, checkpoints=(), backoff_base_s=0.01)
    run_dir = run_llm(config, out=tmp_path, run_id="r")
    calls = TranscriptReader(run_dir).calls()
    failed = [c for c in calls if c.failure_kind]
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert failed and all(c.failure_kind == "strategy_error" for c in failed)
    assert metrics["failed_attempts"] == len(failed) == metrics["call_failures"]["strategy_error"]
    assert f"Failed attempts: {len(failed)} (strategy_error {len(failed)})" in (run_dir / "report.md").read_text()


def test_resume_refuses_out_and_names_it(tmp_path):
    run_dir = run_llm(LlmRunConfig(**dict(POLICY, budget=1, eval_games=0, checkpoints=())), out=tmp_path, run_id="r")
    result = CliRunner().invoke(app, ["run", "--resume", str(run_dir), "--out", str(tmp_path / "elsewhere")])
    assert result.exit_code == 2 and "--out" in result.output and "leave out --out" in result.output
