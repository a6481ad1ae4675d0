"""Run ``arena run`` from a test and get the run directory back parsed: :func:`run_arena`, :func:`read_run`.

``run_arena(model, out=tmp_path, ...)`` plays the same run ``arena run`` plays (it calls
:func:`harness.runs.llm_run.run_llm`, which the command calls) and returns a :class:`RunResult`:
the manifest, the config, every game and every model call as the project's pydantic records
(:mod:`harness.records.entries`), ``metrics.json`` and ``report.md``.

``model`` is a model string (``mock/...``, ``mock/script:FILE``, or ``openai/<name>`` with
``api_base`` the stub server's URL: the real litellm path; the agent then plays in a process of
its own, as ``arena run`` does) or a :class:`~harness.models.script.ScriptedModel` object, which
the agent calls in this process, so its request log is the test's to read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine import EnvKey
from harness.models.client import ModelClient
from harness.models.options import ModelOptions
from harness.models.script import ScriptedModel
from harness.records.entries import CallEntry, GameEntry, RunManifest
from harness.records.transcript import TranscriptReader
from harness.runs.llm_config import METRICS_FILE, REPORT_FILE, LlmRunConfig
from harness.runs.llm_results import read_jsonl
from harness.runs.llm_run import run_llm

TEST_BACKOFF_S = 0.01  # the model client's first retry wait in a test run (arena run's default is 1 s)


@dataclass(frozen=True)
class RunResult:
    """A run directory, parsed: what a test asserts on."""

    run_dir: Path
    manifest: RunManifest
    config: LlmRunConfig
    games: list[GameEntry]
    calls: list[CallEntry]
    metrics: dict[str, Any]
    report: str

    @property
    def adapt_games(self) -> list[GameEntry]:
        """The adaptation games, in order."""
        return [game for game in self.games if game.phase == "adapt"]

    @property
    def eval_games(self) -> list[GameEntry]:
        """The frozen evaluation games, in order."""
        return [game for game in self.games if game.phase == "eval"]

    @property
    def moves(self) -> list[tuple[str, int, tuple[int, ...]]]:
        """(phase, game index, moves) of every game: two runs that played alike have equal ``moves``."""
        return [(game.phase, game.game_index, game.moves) for game in self.games]

    def beliefs(self) -> list[dict[str, Any]]:
        """The lines of ``beliefs.jsonl`` (beliefs stated at checkpoints)."""
        return read_jsonl(self.run_dir / "beliefs.jsonl")


def read_run(run_dir: str | Path) -> RunResult:
    """Parse an ``arena run`` directory (hash chains checked); a damaged one raises ``TranscriptError``."""
    path = Path(run_dir)
    reader = TranscriptReader(path)
    manifest = reader.manifest()
    metrics_path = path / METRICS_FILE
    report_path = path / REPORT_FILE
    return RunResult(
        run_dir=path,
        manifest=manifest,
        config=LlmRunConfig.model_validate(manifest.config),
        games=reader.games(),
        calls=reader.calls(),
        metrics=json.loads(metrics_path.read_text(encoding="utf-8")) if metrics_path.exists() else {},
        report=report_path.read_text(encoding="utf-8") if report_path.exists() else "",
    )


def run_arena(
    model: str | ScriptedModel,
    *,
    out: str | Path,
    env: EnvKey = 0,
    budget: int = 2,
    eval_games: int = 2,
    agent: str = "llm-policy",
    opponents: tuple[str, ...] = ("random",),
    seed: int = 0,
    api_base: str | None = None,
    timeout_s: float | None = None,
    referee: bool | None = None,
    **config: Any,
) -> RunResult:
    """Play an ``arena run`` into ``out`` and return it parsed.

    ``env``: an id 0-55 or an environment spec's canonical key (``engine.env_spec.env_key``: a
    ``layout=...,condition=...`` spec or a ``SUITE:ENTRY``).
    ``config``: any other :class:`~harness.runs.llm_config.LlmRunConfig` field (``concurrency``,
    ``max_retries``, ``on_failure``, ...). The client's retry backoff starts at
    :data:`TEST_BACKOFF_S` unless ``backoff_base_s`` is given. ``referee`` defaults to True for a
    model string and must be left out (in-process) for a :class:`ScriptedModel` object.
    """
    options = ModelOptions(api_base=api_base) if timeout_s is None else ModelOptions(api_base=api_base, timeout=timeout_s)
    config.setdefault("backoff_base_s", TEST_BACKOFF_S)
    scripted = isinstance(model, ScriptedModel)
    if scripted and referee:
        raise ValueError(
            "a ScriptedModel object answers in this process: leave out referee (or give its file as "
            "model='mock/script:FILE' to play in a process of its own)"
        )
    name = model.name if isinstance(model, ScriptedModel) else model
    run_config = LlmRunConfig.model_validate(
        dict(
            agent=agent,
            model=name,
            env=env,
            budget=budget,
            eval_games=eval_games,
            opponents=opponents,
            seed=seed,
            model_options=options,
            referee=not scripted if referee is None else referee,
            **config,
        )
    )
    client = None
    if isinstance(model, ScriptedModel):
        client = ModelClient(
            name,
            mock=model,
            options=options,
            seed=seed,
            backoff_base_s=run_config.backoff_base_s,
            concurrency=run_config.concurrency,
            max_cost_usd=run_config.max_cost_usd,
            max_tokens_total=run_config.max_tokens,
        )
    return read_run(run_llm(run_config, out=out, client=client))
