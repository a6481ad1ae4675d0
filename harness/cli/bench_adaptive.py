"""``arena bench adaptive``: the adaptive tournament against the full round robin on a pool of known strengths."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from harness.cli.bench_verdict import exit_if_any_failed
from harness.cli.console import stdout_console
from harness.cli.options import at_least
from harness.sweep.adaptive import ALPHA, Outcome
from harness.sweep.adaptive_bench import DEFAULT_ELOS, DEFAULT_NU, Pool, SeedResult, bench_adaptive

DEFAULT_ELOS_TEXT = ",".join(f"{value:g}" for value in DEFAULT_ELOS)
TARGET_SEEDS = 9  # of 10: adaptive reaches the true order with at most half the round robin's games (issue 17)


def adaptive(
    seeds: Annotated[int, typer.Option("--seeds", help="Seeds 0..N-1, each a fresh draw of every game.")] = 10,
    elos: Annotated[str, typer.Option("--elos", help="The pool's true Elo ratings, comma-separated (2 or more).")] = DEFAULT_ELOS_TEXT,
    draw_nu: Annotated[
        float, typer.Option("--draw-nu", help="Davidson's draw parameter (0.5: 20% draws between equals; 0: no draws).")
    ] = DEFAULT_NU,
    alpha: Annotated[float, typer.Option("--alpha", help="Family-wise error of the order (both schedules).")] = ALPHA,
    max_games: Annotated[int, typer.Option("--max-games", help="Game cap per schedule and seed.")] = 100_000,
) -> None:
    """Games to the decided order: the adaptive schedule vs the full round robin, same anytime-valid test, same alpha.

    Games are drawn from Davidson's model with the given strengths; both schedules see the
    same outcome for the same game of a pair. The round robin plays rounds of 2 games a pair
    and checks the test after each round; the adaptive one plays 1 warm-up round, then the
    widest undecided neighbour pair, 2 games at a time (harness/sweep/adaptive.py).
    """
    pool = Pool(_elos(elos), _nu(draw_nu))
    at_least(1, ("--seeds", seeds))
    if not 0 < alpha < 1:
        raise typer.BadParameter(f"--alpha must be between 0 and 1, got {alpha}")
    at_least(1, ("--max-games", max_games))
    results = bench_adaptive(pool, range(seeds), alpha=alpha, max_games=max_games)
    console = stdout_console()
    console.print(result_table(pool, results, alpha))
    wins = sum(result.success(pool) for result in results)
    mean_ratio = sum(r.adaptive.games / r.round_robin.games for r in results) / len(results)
    target = f" (target: at least {TARGET_SEEDS} of 10)" if seeds == 10 else ""
    console.print(
        Text(
            f"adaptive found the true order with at most half the round robin's games in {wins} of {seeds} "
            f"seeds{target}; mean games ratio {mean_ratio:.2f}"
        ),
        soft_wrap=True,
    )
    exit_if_any_failed((wins >= TARGET_SEEDS if seeds == 10 else None,))


def result_table(pool: Pool, results: list[SeedResult], alpha: float) -> Table:
    true = " > ".join(pool.true_order)
    table = Table(
        title=f"Adaptive vs round robin, alpha {alpha:g}",
        caption=f"true order {true}; Elo {', '.join(f'{e:g}' for e in pool.elos)}, draw nu {pool.nu:g}",
    )
    for header in ("seed", "adaptive games", "order", "round-robin games", "order", "ratio", "<= half"):
        table.add_column(header, justify="right")
    for result in results:
        table.add_row(
            str(result.seed),
            f"{result.adaptive.games:,}",
            _verdict(pool, result, result.adaptive),
            f"{result.round_robin.games:,}",
            _verdict(pool, result, result.round_robin),
            f"{result.adaptive.games / result.round_robin.games:.2f}",
            "yes" if result.success(pool) else "no",
        )
    return table


def _verdict(pool: Pool, result: SeedResult, outcome: Outcome) -> str:
    if not outcome.decided:
        return f"undecided ({outcome.stopped_by})"
    return "true" if result.correct(pool, outcome) else "WRONG"


def _elos(text: str) -> tuple[float, ...]:
    try:
        values = tuple(float(word) for word in text.split(","))
    except ValueError:
        raise typer.BadParameter(f"--elos takes numbers separated by commas, e.g. 0,100,200; got {text!r}") from None
    if len(values) < 2 or len(set(values)) < len(values):
        raise typer.BadParameter(f"--elos needs 2 or more different ratings, got {text!r}")
    return values


def _nu(value: float) -> float:
    at_least(0, ("--draw-nu", value))
    return value
