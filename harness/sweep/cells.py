"""One cell of a sweep: an ordinary run directory, written by ``arena bench paper``'s or ``arena run``'s own code.

A bench cell is :func:`harness.bench.paper_run.run_bench_paper` on a one-pair plan
(``arena bench paper --resume`` reads it); a model cell is
:func:`harness.runs.llm_run.run_llm` (``arena replay``, ``rerun``, ``compare`` and
``run --resume`` read it). A cell is *finished* when its own record says so (the bench
manifest's status ``complete``; a model run's ``metrics.json`` with nothing stopped),
and then skipped. A cell left half-way (its process killed, a node lost) is resumed by
the same code: a model run from its ledger (``games.jsonl``: no game lost or counted
twice), a tournament cell (:mod:`harness.sweep.tournament_cells`) from its ``games.jsonl``;
a bench pair is played again from its seeds (its one result line is written only
when the pair has finished, so it is never counted twice).
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from harness.bench.paper_run import read_results, run_bench_paper
from harness.records.commitment import SALT_FILE
from harness.records.lock import LOCK_FILE
from harness.runs.llm_config import METRICS_FILE, LlmRunConfig
from harness.runs.llm_run import run_llm
from harness.runs.run_stop import CapReached
from harness.sweep.spec import Cell
from harness.sweep.tournament_cells import run_tournament_cell

CELLS_DIR = "cells"
SHARED_DIR = "ppo-2k"  # one PPO-2K training per environment and seed for the whole sweep (harness.envs.ppo_shared)


class CellOutcome(BaseModel):
    """What running a cell came to (the run directory holds the rest)."""

    model_config = ConfigDict(frozen=True)

    id: str
    status: Literal["ok", "failed", "skipped", "capped"]  # skipped: finished before; capped: a cost cap stopped it
    error: str | None = None
    seconds: float = 0.0


def cell_dir(out: Path, cell: Cell) -> Path:
    """Where ``cell``'s run directory lies under the sweep's ``--out``."""
    return out / CELLS_DIR / cell.id


def cell_state(run_dir: Path, cell: Cell) -> Literal["new", "partial", "finished"]:
    """Whether ``cell``'s run has not started, stopped half-way, or finished (by its own records)."""
    manifest = run_dir / "manifest.json"
    if not manifest.is_file():
        return "new"
    if cell.kind in ("bench", "tournament"):
        status = json.loads(manifest.read_text(encoding="utf-8")).get("status")
        return "finished" if status == "complete" else "partial"
    metrics = run_dir / METRICS_FILE
    if metrics.is_file() and json.loads(metrics.read_text(encoding="utf-8")).get("stopped") is None:
        return "finished"
    return "partial"


def run_cell(cell: Cell, out: str | Path, endpoints: dict[str, str] | None = None) -> CellOutcome:
    """Run ``cell`` under ``out`` (skip it when finished, resume it when half-way); a failure is returned, not raised.

    ``endpoints``: provider -> the ``api_base`` of the sweep's limiting proxy for it (:mod:`harness.sweep.limiter`).
    """
    run_dir = cell_dir(Path(out), cell)
    state = cell_state(run_dir, cell)
    if state == "finished":
        return CellOutcome(id=cell.id, status="skipped")
    if state == "new" and run_dir.exists():
        _clear_unstarted(run_dir)
    started = time.perf_counter()
    try:
        if cell.kind == "tournament":  # a round robin or adaptive tournament (harness.sweep.tournament_cells)
            assert cell.tournament is not None
            run_tournament_cell(cell.tournament, run_dir, resume=state == "partial", command=f"arena sweep run (cell {cell.id})")
        elif cell.kind == "bench":
            assert cell.plan is not None
            results = run_bench_paper(
                cell.plan,
                run_dir,
                1,
                command=f"arena sweep run (cell {cell.id})",
                resume=state == "partial",
                shared_dir=Path(out) / SHARED_DIR,
            )
            failed = [r.error or "failed" for r in results if r.status != "ok"]
            if failed:
                return CellOutcome(id=cell.id, status="failed", error=failed[0], seconds=time.perf_counter() - started)
        else:
            assert cell.config is not None
            if state == "partial":
                run_llm(resume=run_dir)
            else:
                run_llm(limited(cell.config, endpoints or {}), out=run_dir.parent, run_id=run_dir.name)
    except (KeyboardInterrupt, SystemExit):
        raise
    except CapReached as capped:  # its own cap or the sweep's shared one: what it played stays; a later sweep resumes it
        return CellOutcome(id=cell.id, status="capped", error=str(capped), seconds=time.perf_counter() - started)
    except Exception as error:  # noqa: BLE001 - one cell's failure is recorded; the other cells go on
        return CellOutcome(id=cell.id, status="failed", error=f"{type(error).__name__}: {error}", seconds=time.perf_counter() - started)
    return CellOutcome(id=cell.id, status="ok", seconds=time.perf_counter() - started)


def provider(model: str) -> str:
    """A model's provider: the part of its name before ``/`` (``openai/gpt-4o`` -> ``openai``)."""
    return model.split("/", 1)[0]


def limited(config: LlmRunConfig, endpoints: dict[str, str]) -> LlmRunConfig:
    """``config`` with its ``api_base`` pointed at its provider's limiting proxy, when the sweep limits that provider."""
    endpoint = endpoints.get(provider(config.model))
    if endpoint is None:
        return config
    options = config.model_options.model_copy(update={"api_base": endpoint})
    return config.model_copy(update={"model_options": options})


def bench_ok(run_dir: Path) -> bool:
    """Whether a bench cell's pair finished ``ok`` (a failed pair is a finished cell too, reported as failed)."""
    return all(r.status == "ok" for r in read_results(run_dir).values())


def _clear_unstarted(run_dir: Path) -> None:
    """A directory with no manifest holds no game (only a lock file, or a salt written before the manifest): start clean."""
    leftovers = [p.name for p in run_dir.iterdir() if p.name not in (LOCK_FILE, SALT_FILE)]
    if leftovers:
        return  # not ours to delete: the run's own check names the directory
    shutil.rmtree(run_dir)
