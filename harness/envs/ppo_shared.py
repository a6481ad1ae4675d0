"""One PPO-2K per environment and benchmark run, shared by its Table-1 row and its opponent column.

A shared training is a file stem in the run directory (``<run>/ppo-2k/env-<id>-seed-<seed>-games-<n>``,
named by :func:`shared_stem`): ``.pt`` holds the trained policy's weights, the training
settings and every training game (moves, black's reward, in scoring order); ``.lock`` is
taken (``flock``, released if its holder dies) while one process trains, so workers and
``--resume`` train each environment once and everyone else loads the file.

Training is deterministic for its settings and the sequence of rewards its games get, and
both users get the same rewards from the same rule: the opponent column (privileged) from
the simulator's reward table, the ``ppo`` row from its budgeted arena. So whoever trains
first, the weights are the same, for any number of workers. The row never trusts a file
it did not write: it replays every recorded game through its own arena (each one counted
in its ledger, exactly the budget's games) and adopts the weights only if the arena gives
every game the recorded reward; else it refuses, naming the first game that differs.
"""

from __future__ import annotations

import fcntl
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

from engine.protocol.arena import AdaptationArena
from engine.rules import Rules
from harness.envs.ppo import PpoConfig, TrainStats
from harness.envs.scoring import submit_moves
from harness.envs.single import planes_space

Trained = tuple[MaskableActorCriticPolicy, list[tuple[list[int], int]]]


def shared_stem(directory: str | Path, env_id: object, seed: int, games: int) -> Path:
    """The file stem of an environment's shared PPO-2K in a run's shared directory."""
    return Path(directory) / f"env-{env_id}-seed-{seed}-games-{games}"


class _NoOptimizer:
    """Stands in for Adam in a policy that is only played, never trained: torch's first optimizer imports
    ``torch._dynamo`` (~1.1 s of CPU in every agent and worker process that loads a PPO-2K)."""

    def __init__(self, params: Any, lr: float, **options: Any) -> None:
        del params, lr, options


def blank_policy(rules: Rules, config: PpoConfig, *, trainable: bool = True) -> MaskableActorCriticPolicy:
    """A default MlpPolicy for ``rules``' board, as MaskablePPO builds it (weights from torch's current seed).

    ``trainable=False``: no optimizer (a policy loaded to be played); its weights are the same."""
    layout = rules.layout
    rate = config.learning_rate
    extra: dict[str, Any] = {} if trainable else {"optimizer_class": _NoOptimizer}
    return MaskableActorCriticPolicy(planes_space(layout.rows, layout.cols), spaces.Discrete(layout.cells), lambda _: rate, **extra)


@contextmanager
def _locked(stem: Path) -> Iterator[None]:
    stem.parent.mkdir(parents=True, exist_ok=True)
    with open(stem.with_suffix(".lock"), "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def trained_once(
    stem: Path, rules: Rules, config: PpoConfig, train: Callable[[], tuple[MaskableActorCriticPolicy, TrainStats]]
) -> tuple[Trained, TrainStats | None]:
    """The shared training at ``stem``: loaded if there, else ``train()`` now (under the lock) and stored.

    Returns the policy with its recorded games, and the stats when this call trained.
    """
    with _locked(stem):
        path = stem.with_suffix(".pt")
        if path.exists():
            return load(path, rules, config), None
        policy, stats = train()
        store(path, policy, config, stats.record)
        return (policy, stats.record), stats


def store(path: Path, policy: MaskableActorCriticPolicy, config: PpoConfig, record: list[tuple[list[int], int]]) -> None:
    """Write the file whole (a temporary name, then renamed): a reader never sees half of it."""
    partial = path.with_suffix(".partial")
    torch.save({"weights": policy.state_dict(), "config": asdict(config), "games": record}, partial)
    partial.replace(path)


def load(path: Path, rules: Rules, config: PpoConfig) -> Trained:
    """The stored policy and games; refused if they were trained with other settings."""
    saved: dict[str, Any] = torch.load(path, weights_only=True)
    if saved["config"] != asdict(config):
        raise ValueError(f"{path}: trained with {saved['config']}, not {asdict(config)}: remove the file or use its settings")
    policy = blank_policy(rules, config, trainable=False)
    policy.load_state_dict(saved["weights"])
    return policy.eval(), [(list(moves), int(reward)) for moves, reward in saved["games"]]


def replay(arena: AdaptationArena, record: list[tuple[list[int], int]]) -> None:
    """Every recorded training game through ``arena`` (counted in its ledger); a reward that differs is refused."""
    for number, (moves, reward) in enumerate(record, 1):
        scored = submit_moves(arena, moves).rewards[0]
        if scored != reward:
            raise ValueError(
                f"the shared PPO-2K's training game {number} scores {scored} in this arena, {reward} when it "
                "was trained: not this environment's training; refusing its weights"
            )
