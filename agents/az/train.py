"""Self-play training of the AlphaZero-style network on randomized boards, with checkpoints and resume.

One *round*: ``games`` self-play games at once, each on its own board drawn by
:func:`training_layout` (6x6 and 8x8 with 0-6 random blocked cells from
:func:`engine.layout_gen.random_layout`, plain 6x6/8x8, and the benchmark's
obstacle layouts), every move chosen by ``simulations`` PUCT simulations
(:mod:`agents.az.search`, all games' leaves valued in one batched network call)
with Dirichlet noise at the root; the first ``temperature_moves`` placements of
a game are sampled by visit count, later ones are the most visited. Each
searched position is kept with its visit distribution and, once the game ends,
the outcome for its mover (standard rule: more discs). Then ``steps`` Adam steps
on batches of ``batch`` positions drawn from the last ``buffer`` positions, each
under a random shape-keeping rotation/reflection; loss = cross-entropy of the
policy (over the legal cells) + squared error of the value.

After every round the network, the optimizer and the round count go to
``checkpoint.pt`` in the run directory; :func:`train_az` with ``resume=True``
continues from it (the replay buffer starts empty again). Randomness: round
``r`` draws from ``np.random.default_rng([seed, r])`` and torch is seeded from
``seed``, so a run is reproducible up to torch's thread scheduling.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch

from agents.az.net import AzNet, AzNetConfig, encode, evaluator, save_net, stack_planes
from agents.az.search import Tree, add_root_noise, expand_roots, play_unchecked, simulate
from agents.spec import check_whole_numbers
from engine.environments import layouts as benchmark_layouts
from engine.layout import Layout, standard_layout
from engine.layout_gen import random_layout
from engine.rules import Rules
from engine.state import PASS

CHECKPOINT = "checkpoint.pt"


class AzTrainError(ValueError):
    """A training setting that cannot be used."""


@dataclass(frozen=True)
class AzTrainConfig:
    """What a training run is a function of (checked on construction)."""

    rounds: int = 1000
    games: int = 32
    simulations: int = 40
    temperature_moves: int = 10
    steps: int = 40
    batch: int = 128
    buffer: int = 40_000
    learning_rate: float = 2e-3
    channels: int = 32
    blocks: int = 4
    seconds: float = 2100.0
    seed: int = 0

    def __post_init__(self) -> None:
        positive = ("rounds", "games", "simulations", "steps", "batch", "buffer", "channels", "blocks")
        check_whole_numbers(self, {**dict.fromkeys(positive, 1), "temperature_moves": 0, "seed": 0}, AzTrainError)
        if not (0 < self.learning_rate < 1) or self.seconds < 0:
            raise AzTrainError(f"learning_rate={self.learning_rate!r} must lie in (0, 1) and seconds={self.seconds!r} be >= 0")


@dataclass(frozen=True)
class Sample:
    """A searched position: its mover's-view grid, the legal cells, the visit distribution, the outcome."""

    grid: np.ndarray
    legal: np.ndarray
    policy: np.ndarray
    outcome: float


@dataclass(frozen=True)
class RoundReport:
    """One round: its number, games and positions played, the mean losses of its steps, seconds so far."""

    round: int
    games: int
    positions: int
    policy_loss: float
    value_loss: float
    seconds: float


def training_layout(rng: np.random.Generator) -> Layout:
    """A board for one self-play game (module docstring), each kind equally likely."""
    kind = int(rng.integers(4))
    if kind == 3:
        boards = [b for b in benchmark_layouts() if b.obstacles]
        return boards[int(rng.integers(len(boards)))]
    side = 6 if kind == 0 else 8
    if rng.random() < 0.25:
        return standard_layout(side, side)
    blocked = int(rng.integers(1, 7))
    return random_layout(rng, rows=side, cols=side, obstacle_density=blocked / side**2)


def self_play(net: AzNet, config: AzTrainConfig, rng: np.random.Generator) -> tuple[list[Sample], int]:
    """Play ``config.games`` games at once; returns their searched positions and the number of games."""
    net.eval()
    evaluate = evaluator(net)
    games = [Rules(training_layout(rng)) for _ in range(config.games)]
    states = [rules.initial_state() for rules in games]
    trees = [Tree(rules, state) for rules, state in zip(games, states)]
    records: list[list[tuple[np.ndarray, np.ndarray, np.ndarray, int]]] = [[] for _ in games]
    placed = [0] * len(games)
    active = [i for i, tree in enumerate(trees) if tree.root.outcome is None]
    while active:
        searching = [i for i in active if len(trees[i].root.moves) > 1]
        expand_roots([trees[i] for i in searching], evaluate)
        for i in searching:
            add_root_noise(trees[i], rng)
        simulate([trees[i] for i in searching], evaluate, config.simulations)
        for i in active:
            tree, rules = trees[i], games[i]
            root = tree.root
            if i in searching:
                policy = tree.policy()
                legal = np.zeros(rules.layout.cells, dtype=bool)
                legal[root.moves] = True
                records[i].append((rules.grid(root.state), legal, policy, root.state.to_move))
                if placed[i] < config.temperature_moves:
                    index = int(rng.choice(len(root.moves), p=root.visits / root.visits.sum()))
                else:
                    index = int(np.argmax(root.visits))
            else:
                index = 0
            move = root.moves[index]
            placed[i] += move != PASS
            child = root.children.get(move)
            tree.root = child if child is not None else Tree(rules, play_unchecked(rules, root.state, move)).root
        active = [i for i in active if trees[i].root.outcome is None]
    samples = []
    for i, tree in enumerate(trees):
        final = tree.root.state
        margin = final.black.bit_count() - final.white.bit_count()
        for grid, legal, policy, mover in records[i]:
            mine = margin if mover == 0 else -margin
            samples.append(Sample(grid, legal, policy, float(np.sign(mine))))
    return samples, len(games)


def augment(sample: Sample, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A random rotation/reflection that keeps the board's shape: (grid, legal grid, policy grid)."""
    rows, cols = sample.grid.shape
    grids = [sample.grid, sample.legal.reshape(rows, cols), sample.policy.reshape(rows, cols)]
    if rows == cols and rng.random() < 0.5:
        grids = [g.T for g in grids]
    for axis in (0, 1):
        if rng.random() < 0.5:
            grids = [np.flip(g, axis) for g in grids]
    return grids[0], grids[1], grids[2]


def train_batch(net: AzNet, optimizer: torch.optim.Optimizer, batch: list[Sample], rng: np.random.Generator) -> tuple[float, float]:
    """One Adam step on ``batch`` (augmented); returns (policy loss, value loss)."""
    net.train()
    views = [augment(sample, rng) for sample in batch]
    planes = stack_planes([encode(grid) for grid, _, _ in views])
    rows, cols = planes.shape[2], planes.shape[3]
    legal = np.zeros((len(batch), rows, cols), dtype=bool)
    target = np.zeros((len(batch), rows, cols), dtype=np.float32)
    for i, (grid, mask, policy) in enumerate(views):
        legal[i, : grid.shape[0], : grid.shape[1]] = mask
        target[i, : grid.shape[0], : grid.shape[1]] = policy
    logits, values = net(torch.from_numpy(planes))
    logits = logits.masked_fill(~torch.from_numpy(legal.reshape(len(batch), -1)), -1e9)
    policy_loss = -(torch.from_numpy(target.reshape(len(batch), -1)) * torch.log_softmax(logits, dim=1)).sum(1).mean()
    outcomes = torch.tensor([sample.outcome for sample in batch], dtype=torch.float32)
    value_loss = ((values - outcomes) ** 2).mean()
    optimizer.zero_grad()
    (policy_loss + value_loss).backward()
    optimizer.step()
    return float(policy_loss.item()), float(value_loss.item())


def train_az(
    config: AzTrainConfig, run_dir: Path, resume: bool = False, on_round: Callable[[RoundReport], None] | None = None
) -> tuple[AzNet, list[RoundReport]]:
    """Train for ``config.rounds`` rounds (or ``config.seconds``), checkpointing to ``run_dir`` after each.

    torch runs on one thread (its thread pool spins badly on a shared, loaded CPU).
    """
    torch.set_num_threads(1)
    torch.manual_seed(config.seed)
    net = AzNet(AzNetConfig(config.channels, config.blocks))
    optimizer = torch.optim.Adam(net.parameters(), lr=config.learning_rate, weight_decay=1e-4)
    first, spent = 0, 0.0
    checkpoint = Path(run_dir) / CHECKPOINT
    if resume:
        if not checkpoint.is_file():
            raise AzTrainError(f"--resume: no {CHECKPOINT} in {run_dir} (start a run without --resume first)")
        saved = torch.load(checkpoint, map_location="cpu", weights_only=True)
        net = AzNet(AzNetConfig(**saved["config"]))
        net.load_state_dict(saved["state"])
        optimizer = torch.optim.Adam(net.parameters(), lr=config.learning_rate, weight_decay=1e-4)
        optimizer.load_state_dict(saved["metadata"]["optimizer"])
        first, spent = int(saved["metadata"]["round"]), float(saved["metadata"]["seconds"])
    buffer: deque[Sample] = deque(maxlen=config.buffer)
    reports: list[RoundReport] = []
    start = time.perf_counter() - spent
    for round_number in range(first + 1, config.rounds + 1):
        if config.seconds and time.perf_counter() - start >= config.seconds:
            break
        rng = np.random.default_rng([config.seed, round_number])
        samples, games = self_play(net, config, rng)
        buffer.extend(samples)
        losses = [
            train_batch(net, optimizer, [buffer[int(k)] for k in rng.integers(len(buffer), size=config.batch)], rng)
            for _ in range(config.steps)
        ]
        net.eval()
        report = RoundReport(
            round_number,
            games,
            len(samples),
            float(np.mean([p for p, _ in losses])),
            float(np.mean([v for _, v in losses])),
            time.perf_counter() - start,
        )
        reports.append(report)
        save_net(net, checkpoint, round=round_number, seconds=report.seconds, optimizer=optimizer.state_dict(), train_config=asdict(config))
        if on_round is not None:
            on_round(report)
    net.eval()
    return net, reports
