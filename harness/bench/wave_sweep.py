"""The wave sweep: what playing W adaptation games on one memory costs in win rate and belief accuracy.

For each environment and each W, an llm-strategist run with ``mock/reasoner`` (it deduces K
from the outcomes in its memory table; :mod:`harness.models.reasoner`) adapts for ``budget``
games in batches of W (its waves: one strategy and one memory per wave), then plays
``eval_games`` frozen games against random. Recorded per run: the evaluation win rate, the
final belief's distance |midpoint - K| and whether its interval holds K, and the model calls.
A larger W means fewer memory updates (budget / W strategies), so the question is how much
accuracy and win rate the speed costs. ``python -m harness.bench.wave_sweep OUT.png`` runs the
default sweep and plots it.
"""

from __future__ import annotations

import json
import sys
import tempfile
from dataclasses import asdict, dataclass
from fractions import Fraction
from pathlib import Path

from engine import EnvKey
from harness.runs.llm_config import LlmRunConfig
from harness.runs.llm_run import run_llm
from harness.tournaments.stats import wilson

WAVES = (1, 8, 32, 64)
SWEEP_ENVS: tuple[EnvKey, ...] = (12, 21)


@dataclass(frozen=True)
class SweepPoint:
    """One run of the sweep."""

    env: EnvKey
    wave: int
    win_rate: float
    belief_error: float | None  # |midpoint - K| of the last belief (None: no belief)
    belief_holds_k: bool | None
    calls: int
    eval_games: int = 0  # the games behind ``win_rate`` (its Wilson interval in the plot)


def sweep_point(env: EnvKey, wave: int, budget: int, eval_games: int, seed: int, out: Path) -> SweepPoint:
    config = LlmRunConfig(
        agent="llm-strategist",
        model="mock/reasoner",
        env=env,
        budget=budget,
        eval_games=eval_games,
        opponents=("random",),
        seed=seed,
        batch=wave,
        checkpoints=(budget,),
        search_depth=2,
        endgame=6,
    )
    run_dir = run_llm(config, out=out, run_id=f"env{env}-w{wave}")
    metrics = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))
    win = metrics["evaluation"]["random"]["win"]["rate"]
    scored = [b["score"] for b in metrics["beliefs"] if b["score"]]
    last = scored[-1] if scored else None
    error = None if last is None else float(last["midpoint_error"])
    return SweepPoint(env, wave, win, error, None if last is None else bool(last["contains_k"]), metrics["calls"], eval_games)


def sweep(
    envs: tuple[EnvKey, ...] = SWEEP_ENVS, waves: tuple[int, ...] = WAVES, budget: int = 128, eval_games: int = 20, seed: int = 0
) -> list[SweepPoint]:
    with tempfile.TemporaryDirectory(prefix="arena-wave-sweep-") as scratch:
        return [sweep_point(env, wave, budget, eval_games, seed, Path(scratch)) for env in envs for wave in waves]


def plot(points: list[SweepPoint], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (wins, errors) = plt.subplots(1, 2, figsize=(9, 3.6))
    for env in dict.fromkeys(p.env for p in points):
        mine = [p for p in points if p.env == env]
        waves, rates = [p.wave for p in mine], [p.win_rate for p in mine]
        bounds = [wilson(round(p.win_rate * p.eval_games), p.eval_games) if p.eval_games else (p.win_rate, p.win_rate) for p in mine]
        below, above = [r - low for r, (low, _) in zip(rates, bounds)], [high - r for r, (_, high) in zip(rates, bounds)]
        wins.errorbar(waves, rates, yerr=[below, above], marker="o", capsize=3, label=f"env {env}")
        errors.plot(waves, [p.belief_error if p.belief_error is not None else float("nan") for p in mine], marker="o", label=f"env {env}")
    for axis, title, unit in (
        (wins, "evaluation win rate vs random (bars: Wilson 95%)", "win rate (fraction of games)"),
        (errors, "final belief |midpoint - K|", "|midpoint - K| (disc share)"),
    ):
        axis.set_xscale("log", base=2)
        axis.set_xlabel("W (games per wave)")
        axis.set_ylabel(unit)
        axis.set_title(title, fontsize=10)
        axis.legend()
    figure.suptitle("llm-strategist with mock/reasoner: adaptation in waves of W games")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    return path


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "wave_sweep.png")
    result = sweep()
    for point in result:
        print(json.dumps({k: (str(v) if isinstance(v, Fraction) else v) for k, v in asdict(point).items()}))
    print(plot(result, target))
