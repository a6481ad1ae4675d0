"""``arena train posnet``: meta-learn PosNet by survival-only evolution over random layouts.

Writes the final population with the run's metadata to an .npz (default
``runs/<timestamp>-train-posnet/posnet.npz``) and, beside it, a PNG of the
ensembled tables on the seven benchmark layouts (Figure 1 of the paper). The
shipped weights (``agents/posnet/data/posnet.npz``) are only replaced when ``--out``
names that file.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from agents.posnet.network import ensemble_table
from agents.posnet.train import (
    DEFAULT_SIGMA,
    PAPER_GENERATIONS,
    PAPER_LAYOUTS,
    PAPER_POPULATION,
    TrainConfig,
    TrainConfigError,
    TrainResult,
    save_result,
    train_posnet,
    training_layouts,
)
from engine.environments import layouts as benchmark_layouts
from harness.cli.console import print_lines, stderr_progress, stdout_console
from harness.cli.options import at_least, out_file_option
from harness.cli.perft import duration
from harness.tournaments.tournament import default_run_dir


def posnet(
    population: Annotated[int, typer.Option("--population", help="Individuals (even, 2 or more).")] = PAPER_POPULATION,
    generations: Annotated[int, typer.Option("--generations", help="Generations (0 or more).")] = PAPER_GENERATIONS,
    layouts: Annotated[int, typer.Option("--layouts", help="Random training layouts (1 or more).")] = PAPER_LAYOUTS,
    sigma: Annotated[float, typer.Option("--sigma", help="Mutation scale (standard deviation, 0 or more).")] = DEFAULT_SIGMA,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the layouts and of the evolution (0 or more).")] = 0,
    out: Annotated[Path | None, out_file_option("the population", "runs/<timestamp>-train-posnet/posnet.npz")] = None,
) -> None:
    """Train PosNet (paper Appendix C): pairs of 1-ply positional players on random layouts, more discs wins.

    Each generation every pair plays two games (colours swapped) on a layout drawn
    from the training set, each individual under a random rotation/reflection;
    winners are duplicated, everyone is mutated and shuffled. Paper scale is the
    default: 200 individuals, 1,000 generations, 1,000 layouts (200,000 games).
    """
    try:
        config = TrainConfig(population, generations, layouts, sigma, seed)
    except TrainConfigError as error:
        raise typer.BadParameter(str(error)) from None
    path = _output_path(out)
    console = stdout_console()
    with stderr_progress(remaining=True) as progress:
        task = progress.add_task(f"drawing {layouts} layouts", total=generations)
        start = time.perf_counter()
        training_layouts(seed, layouts)
        drawing_seconds = time.perf_counter() - start
        progress.update(task, description="generations")
        result = train_posnet(config, on_generation=lambda generation, _: progress.update(task, completed=generation))
    save_result(result, path)
    from harness.bench.posnet_plot import plot_value_tables  # matplotlib only when drawing

    picture = plot_value_tables(*_benchmark_tables(result), path.with_suffix(".png"))
    print_lines(
        console,
        f"{result.games:,} games in {generations} generations, population {population}, {layouts} layouts, "
        f"sigma {sigma:g}, seed {seed}: {duration(result.elapsed_seconds)} (drawing the layouts: {duration(drawing_seconds)})",
        f"population: {path}",
        f"tables:     {picture}",
    )


def _output_path(out: Path | None) -> Path:
    if out is None:
        return default_run_dir("train-posnet") / "posnet.npz"
    if out.suffix != ".npz":
        raise typer.BadParameter(f"--out {str(out)!r}: give a file name ending in .npz")
    if out.is_dir():
        raise typer.BadParameter(f"--out {str(out)!r} is a directory: give a file name ending in .npz")
    return out


def _benchmark_tables(result: TrainResult) -> tuple[dict, tuple]:
    """The ensembled tables of the trained population on the benchmark layouts, titled by layout."""
    boards = benchmark_layouts()
    tables = {f"{i + 1}. {layout.name}": ensemble_table(result.population, layout) for i, layout in enumerate(boards)}
    return tables, boards


def ntuple(
    env: Annotated[
        str | None, typer.Argument(help="Environment whose layout to train on (default: 0, standard 8x8).", show_default=False)
    ] = None,
    layout_path: Annotated[Path | None, typer.Option("--layout", metavar="FILE", help="A layout text file instead.")] = None,
    method: Annotated[str, typer.Option("--method", help="td (TD(0)), es (the paper's (10+90) ES) or nes (natural ES).")] = "es",
    n: Annotated[int, typer.Option("--n", help="Tuple length (all-n; 2 is the paper's best).")] = 2,
    seconds: Annotated[float, typer.Option("--seconds", help="Stop after this many seconds (0: no limit).")] = 0.0,
    generations: Annotated[int, typer.Option("--generations", help="ES generations (NES: steps).")] = 100,
    es_games: Annotated[int, typer.Option("--es-games", help="ES fitness: double games per individual.")] = 25,
    sigma: Annotated[float, typer.Option("--sigma", help="ES mutation scale.")] = 1.0,
    games: Annotated[int, typer.Option("--games", help="TD training games.")] = 40_000,
    alpha: Annotated[float, typer.Option("--alpha", help="TD learning rate.")] = 1e-4,
    opponent: Annotated[str, typer.Option("--opponent", help="TD opponent: wpc or self (self-play).")] = "wpc",
    nes_pairs: Annotated[int, typer.Option("--nes-pairs", help="NES: mirrored perturbations per step.")] = 32,
    nes_games: Annotated[int, typer.Option("--nes-games", help="NES: double games per perturbation.")] = 10,
    nes_sigma: Annotated[float, typer.Option("--nes-sigma", help="NES: perturbation scale (weights at RMS 1).")] = 0.1,
    nes_rate: Annotated[float, typer.Option("--nes-rate", help="NES: Adam step size.")] = 0.02,
    eval_games: Annotated[int, typer.Option("--eval-games", help="TD/NES: held-out double games of each check.")] = 250,
    init: Annotated[
        Path | None,
        typer.Option("--init", metavar="FILE.npz", show_default=False, help="Start from these weights (an .npz of this layout)."),
    ] = None,
    league_games: Annotated[int, typer.Option("--league-games", help="Double games of the final League score.")] = 1000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the run (0 or more).")] = 0,
    out: Annotated[Path | None, out_file_option("the network", "runs/<timestamp>-train-ntuple/ntuple.npz")] = None,
) -> None:
    """Train an all-n n-tuple network (Jaskowski 2014) on one layout; prints its League score and the time taken.

    The League score: the 1-ply network against the 1-ply WPC player (the SWH table on
    8x8, the layout-derived positional table elsewhere), both random with p=0.1, wins 1,
    draws 0.5. Writes the network (.npz) and the learning curve (.png).
    """
    from agents.ntuple.network import NTupleError, load_network, save_network, shipped_name
    from agents.ntuple.train import NTupleTrainConfig, NTupleTrainError, league_score, train_ntuple
    from harness.bench.ntuple_plot import plot_learning_curve
    from harness.cli.options import resolve_target

    target = resolve_target("0" if env is None and layout_path is None else env, layout_path)
    layout = target.layout
    where = f"{layout.name or 'layout'} ({layout.describe()})"
    try:
        start_luts = None if init is None else load_network(layout, init).luts
        config = NTupleTrainConfig(
            method=method,
            n=n,
            games=games,
            alpha=alpha,
            opponent=opponent,
            generations=generations,
            sigma=sigma,
            es_games=es_games,
            seconds=seconds,
            seed=seed,
            nes_pairs=nes_pairs,
            nes_games=nes_games,
            nes_sigma=nes_sigma,
            nes_rate=nes_rate,
            eval_games=eval_games,
            init=start_luts,
        )
    except (NTupleTrainError, NTupleError) as error:
        raise typer.BadParameter(str(error)) from None
    if league_games < 1:
        raise typer.BadParameter(f"--league-games {league_games}: give 1 or more double games")
    path = _output_path(out) if out is not None else default_run_dir("train-ntuple") / "ntuple.npz"
    total = games if method == "td" else generations
    with stderr_progress(remaining=True) as progress:
        task = progress.add_task(f"{method} on {where}", total=total)
        result = train_ntuple(
            layout, config, progress=lambda done, _, best: progress.update(task, completed=done, description=f"{method} (best {best:.3f})")
        )
    start = time.perf_counter()
    score = league_score(result.network, league_games, seed=seed + 1_000_003)
    scoring_seconds = time.perf_counter() - start
    save_network(
        result.network,
        path,
        method=method,
        league_score=score,
        league_double_games=league_games,
        training_games=result.games,
        training_seconds=result.elapsed_seconds,
        seed=seed,
    )
    picture = plot_learning_curve(result.curve, f"all-{n} {method} on {where}", path.with_suffix(".png"))
    console = stdout_console()
    print_lines(
        console,
        f"all-{n} {method} on {where}: {result.games:,} training games in {duration(result.elapsed_seconds)}; "
        f"League score {score:.3f} over {league_games} fresh double games ({duration(scoring_seconds)})",
        f"network: {path} (shipped name for this layout: agents/ntuple/data/{shipped_name(layout)})",
        f"curve:   {picture}",
    )


def ppo(
    env: Annotated[str, typer.Argument(help="Environment id (0-55).")],
    budget: Annotated[int, typer.Option("--budget", help="Games to train for (the arena's budget).")] = 2000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the policy and the self-play draws.")] = 0,
    n_envs: Annotated[int, typer.Option("--n-envs", help="Self-play games played at once.")] = 16,
    n_steps: Annotated[int, typer.Option("--n-steps", help="Learner steps per game between MaskablePPO updates.")] = 128,
    eval_games: Annotated[int, typer.Option("--eval-games", help="Games of the trained policy against Random (0 to skip).")] = 20,
    out: Annotated[
        Path | None, out_file_option("the trained policy", "runs/<timestamp>-train-ppo/policy.pt", metavar="FILE.pt", plot=False)
    ] = None,
) -> None:
    """Train PPO-2K (paper Appendix F): MaskablePPO by self-play against snapshots, through a budgeted arena.

    Every training game is a whole game counted in the arena's ledger; training stops after
    exactly --budget games. Prints the training time, then the frozen policy's results
    against Random (colours alternating).
    """
    import numpy as np
    import torch

    from agents.base import AgentContext
    from engine.environments import make_env
    from engine.protocol.policy import RandomPolicy
    from harness.cli.options import parse_env_id
    from harness.envs.ppo import PpoConfig, train_ppo
    from harness.envs.ppo_agent import PpoAgent
    from harness.play.arena import Arena
    from harness.play.game import play_game

    at_least(1, ("--budget", budget))
    at_least(0, ("--eval-games", eval_games))
    if out is not None and out.suffix != ".pt":
        raise typer.BadParameter(f"--out {str(out)!r}: give a file name ending in .pt")
    try:
        config = PpoConfig(n_envs=n_envs, n_steps=n_steps, seed=seed)
    except ValueError as error:
        raise typer.BadParameter(str(error)) from None
    environment = make_env(parse_env_id(env))
    arena = Arena(environment, budget)
    console = stdout_console()
    with stderr_progress("training", remaining=True) as progress:
        task = progress.add_task("games", total=budget)
        policy, stats = train_ppo(arena, config, on_game=lambda games: progress.update(task, completed=games))
    path = out or default_run_dir("train-ppo") / "policy.pt"
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(policy.state_dict(), path)
    print_lines(
        console,
        f"env {environment.id} ({environment.layout.name}): {arena.games_played:,} games, {stats.steps:,} learner steps in "
        f"{duration(stats.seconds)} (MaskablePPO, MlpPolicy, {n_envs} games at once, n_steps {n_steps}, {stats.snapshots} snapshots, "
        f"{stats.nan_restores} NaN restores)",
    )
    if eval_games:
        agent = PpoAgent(AgentContext(environment.rules), np.random.default_rng(seed), config)
        agent.policy = policy
        agent.freeze()
        opponent = RandomPolicy(np.random.default_rng(seed + 1))
        tally = [0, 0, 0]
        for game in range(eval_games):
            colour = game % 2
            black, white = (agent, opponent) if colour == 0 else (opponent, agent)
            reward = play_game(environment.rules, environment.condition, black, white).rewards[colour]
            tally[1 - reward] += 1
        print_lines(console, f"vs Random, {eval_games} games: {tally[0]} won, {tally[1]} drawn, {tally[2]} lost")
    print_lines(console, f"policy: {path}")
