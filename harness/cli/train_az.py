"""``arena train az``: self-play training of the AlphaZero-style network on randomized boards.

Checkpoints after every round to ``DIR/checkpoint.pt`` (``--resume DIR`` goes
on from it) and writes the final network to ``DIR/az.pt``, the file the ``az``
agent takes as ``weights=`` (the shipped one is ``agents/az/data/az.pt``). torch
is imported only when the command runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from harness.cli.console import print_lines, stderr_progress, stdout_console
from harness.cli.perft import duration
from harness.tournaments.tournament import default_run_dir


def az(
    seconds: Annotated[float, typer.Option("--seconds", help="Stop after this much training time (0: --rounds only).")] = 2100.0,
    rounds: Annotated[int, typer.Option("--rounds", help="Rounds (self-play, then training steps).")] = 1000,
    games: Annotated[int, typer.Option("--games", help="Self-play games per round, searched in one batch.")] = 32,
    simulations: Annotated[int, typer.Option("--simulations", help="PUCT simulations per move in self-play.")] = 40,
    steps: Annotated[int, typer.Option("--steps", help="Adam steps per round.")] = 40,
    batch: Annotated[int, typer.Option("--batch", help="Positions per Adam step.")] = 128,
    channels: Annotated[int, typer.Option("--channels", help="Channels of every block.")] = 32,
    blocks: Annotated[int, typer.Option("--blocks", help="Depthwise-separable residual blocks.")] = 4,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the boards, the search noise and the weights.")] = 0,
    out: Annotated[
        Path | None, typer.Option("--out", metavar="DIR", show_default=False, help="Run directory (default: runs/<timestamp>-train-az).")
    ] = None,
    resume: Annotated[bool, typer.Option("--resume", help="Go on from DIR/checkpoint.pt (needs --out DIR).")] = False,
) -> None:
    """Train the AlphaZero-style network by batched PUCT self-play on 6x6/8x8 boards with random blocked cells.

    Each round plays --games games at once (each on its own random board, the
    benchmark's obstacle layouts among them), then takes --steps Adam steps on
    positions from recent rounds. Prints each round's losses; writes DIR/az.pt.
    """
    from agents.az.net import save_net
    from agents.az.train import AzTrainConfig, AzTrainError, train_az

    if resume and out is None:
        raise typer.BadParameter("--resume needs --out DIR: the run directory that holds checkpoint.pt")
    try:
        config = AzTrainConfig(
            rounds=rounds,
            games=games,
            simulations=simulations,
            steps=steps,
            batch=batch,
            channels=channels,
            blocks=blocks,
            seconds=seconds,
            seed=seed,
        )
    except AzTrainError as error:
        raise typer.BadParameter(str(error)) from None
    run_dir = out if out is not None else default_run_dir("train-az")
    if run_dir.exists() and not run_dir.is_dir():
        raise typer.BadParameter(f"--out {str(run_dir)!r} is a file: give a directory")
    console = stdout_console()
    with stderr_progress() as progress:
        task = progress.add_task("rounds", total=rounds)

        def report(r):
            progress.update(task, completed=r.round)
            print_lines(
                console,
                f"round {r.round}: {r.games} games, {r.positions} positions, policy loss "
                f"{r.policy_loss:.3f}, value loss {r.value_loss:.3f}, {duration(r.seconds)}",
            )

        try:
            net, reports = train_az(config, run_dir, resume=resume, on_round=report)
        except AzTrainError as error:
            raise typer.BadParameter(str(error)) from None
    total = reports[-1].seconds if reports else 0.0
    path = save_net(net, run_dir / "az.pt", rounds=reports[-1].round if reports else 0, seconds=total, seed=seed)
    print_lines(
        console,
        f"{sum(r.games for r in reports):,} self-play games in {len(reports)} rounds, {duration(total)} of training in all",
        f"network: {path} (the az agent's weights={path}; shipped: agents/az/data/az.pt)",
    )
