"""The Inspect task: one sample per environment, its solver plays the budgeted protocol with the arena's agent.

``inspect eval othello_arena/budgeted -T env=14 -T budget=200 --model <any Inspect model>``. Each
sample is one environment (``env``: an id 0-55, an environment spec, or several joined by ``;``).
The solver builds the arena's run (:func:`harness.runs.llm_run.run_llm`: the engine, the arena
that keeps K and verifies every move, the ledger, the same prompts as ``arena run``) for
``llm-policy`` (or ``agent=llm-strategist``) and gives it a model client whose every call is a
``generate`` of the sample's Inspect model (:mod:`arena_inspect.model`). The run directory is
written under ``out`` (default: ``$INSPECT_LOG_DIR/arena``, else ``logs/arena``), beside Inspect's
log, so ``arena replay``, ``arena audit`` and ``arena view`` read it as any ``arena run``.

The agent and its client play in this process (Inspect's model lives here): the run is recorded
as in-process, not refereed by a separate process.

Score (a dict, one mean each over the samples): ``win``, ``draw``, ``loss`` (evaluation rates over
all opponents), ``belief_accuracy`` (the share of scored belief checkpoints whose interval holds
K), ``games_used`` (adaptation games played), and ``failures.<kind>`` (failed attempts by kind);
the metadata has each opponent's counts with Wilson 95% intervals and the run directory.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import get_model
from inspect_ai.scorer import Score, Target, mean, scorer
from inspect_ai.solver import Generate, TaskState, solver

from arena_inspect.model import InspectModel
from arena_inspect.scores import SCORE_KEYS, protocol_values
from harness.models.cache import ResponseCache
from harness.models.client import ModelClient
from harness.runs.llm_config import CACHE_FILE, METRICS_FILE, LlmRunConfig
from harness.runs.llm_run import run_llm


def offline_tokenizers() -> None:
    """Point tiktoken at the encodings litellm ships (Inspect counts tokens with o200k_base; no download, offline)."""
    spec = importlib.util.find_spec("litellm")
    if spec is not None and spec.origin is not None:
        os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(Path(spec.origin).parent / "litellm_core_utils" / "tokenizers"))


def default_out() -> str:
    """Where run directories go: beside Inspect's logs."""
    return str(Path(os.environ.get("INSPECT_LOG_DIR") or "logs") / "arena")


@task
def budgeted(
    env: str = "14",
    budget: int = 200,
    eval_games: int = 10,
    opponents: str = "random,greedy",
    agent: str = "llm-policy",
    seed: int = 0,
    move_format: str = "text",
    on_failure: str = "forfeit",
    max_retries: int = 2,
    hint: str = "ratio",
    checkpoints: str = "",
    out: str = "",
) -> Task:
    """The budgeted protocol on each environment of ``env`` (``;`` between several), scored as the module says."""
    offline_tokenizers()
    envs = [part.strip() for part in str(env).split(";") if part.strip()]
    settings = {
        "agent": agent, "budget": int(budget), "eval_games": int(eval_games), "seed": int(seed), "move_format": move_format,
        "opponents": tuple(o.strip() for o in str(opponents).split(",") if o.strip()), "on_failure": on_failure,
        "max_retries": int(max_retries), "hint": hint,
        "checkpoints": tuple(int(c) for c in str(checkpoints).split(",") if c.strip()),
    }  # fmt: skip
    samples = [
        Sample(id=f"env-{index}", input=f"Adapt within {budget} games on environment {spec}", metadata={"env": spec})
        for index, spec in enumerate(envs)
    ]
    return Task(dataset=MemoryDataset(samples), solver=play_protocol(settings, out or default_out()), scorer=protocol_score())


def run_config(env: str, model: str, settings: dict[str, Any]) -> LlmRunConfig:
    """The arena run of one sample (in-process, one call at a time: the games are those of ``arena run`` with them)."""
    spec: Any = int(env) if str(env).isdigit() else env
    return LlmRunConfig(env=spec, model=model, referee=False, concurrency=1, **settings)


@solver
def play_protocol(settings: dict[str, Any], out: str) -> Any:
    """Adapt within the budget and play the frozen evaluation through the arena; the run directory goes to the state."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        model = get_model()
        config = run_config(state.metadata["env"], f"inspect/{model}", settings)
        run_dir = Path(out) / f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{state.sample_id}-epoch{state.epoch}-s{config.seed}"
        bridge = InspectModel(model, asyncio.get_running_loop())
        client = ModelClient(config.model, mock=bridge, cache=ResponseCache(run_dir / CACHE_FILE), seed=config.seed, concurrency=1)
        await asyncio.to_thread(run_llm, config, out=run_dir.parent, run_id=run_dir.name, client=client)
        state.metadata["run_dir"] = str(run_dir)
        state.output.completion = f"run directory: {run_dir}"
        return state

    return solve


@scorer(metrics={key: [mean()] for key in SCORE_KEYS})
def protocol_score() -> Any:
    """The run's evaluation rates, belief accuracy, games used and failures by kind (module docstring)."""

    async def score(state: TaskState, target: Target) -> Score:
        run_dir = Path(state.metadata["run_dir"])
        metrics = json.loads((run_dir / METRICS_FILE).read_text(encoding="utf-8"))
        value, details = protocol_values(metrics)
        return Score(value=value, answer=str(run_dir), metadata={"run_dir": str(run_dir), **details})

    return score
