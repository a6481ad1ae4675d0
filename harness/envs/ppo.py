"""PPO-2K: sb3-contrib MaskablePPO (default ``MlpPolicy``) by self-play against snapshots of itself, in exactly the budget's games.

Training runs on :class:`harness.envs.selfplay.SelfPlayVecEnv`: ``n_envs`` games at once on
the batch kernels, budgeted through the adaptation arena (every finished game is replayed
and entered in its ledger) or a privileged reward table; no game starts once the budget's
games have all started, and training stops when the last one has finished. The opponent
of each game is a frozen snapshot of the learner drawn from a small pool (the newest half
the time), refreshed every ``snapshot_games`` games; the snapshots of all waiting games
answer in one batched forward pass. Masks are used when acting, in training and at
prediction. Training is deterministic for a seed (one torch thread by default).

Guards against MaskablePPO's known failure modes:

- an all-false mask (no legal placement) makes the masked distribution all ``-inf`` and
  its probabilities NaN: :func:`usable_mask` and the vector env's masks are never all
  false, and the agent passes without asking the policy;
- NaN logits after long training: :class:`NanGuard` checks the weights after every update
  and puts back the last finite snapshot (counted), and :func:`guarded_action` (and the
  snapshots' batched choice) falls back to a uniformly random legal placement (counted)
  if the policy still yields no valid distribution.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import Logger

from engine.protocol.arena import AdaptationArena
from harness.envs.scoring import ArenaScorer, Source
from harness.envs.selfplay import SelfPlayVecEnv, choose, policy_logits, weights_finite


@dataclass(frozen=True)
class PpoConfig:
    """Training settings: ``n_envs`` games at once, ``n_steps`` learner steps per game between updates (a rollout of
    ``n_envs * n_steps`` = 2,048 samples, sb3's default), sb3-contrib's defaults otherwise except ``batch_size``."""

    n_envs: int = 16
    n_steps: int = 128
    batch_size: int = 256
    n_epochs: int = 10
    learning_rate: float = 3e-4
    snapshot_games: int = 200
    seed: int = 0
    threads: int = 1

    def __post_init__(self) -> None:
        for name in ("n_envs", "n_steps", "batch_size", "n_epochs", "snapshot_games", "threads"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name}={value!r}: give a whole number of 1 or more")
        if not self.learning_rate > 0:
            raise ValueError(f"learning_rate={self.learning_rate!r}: give a number above 0")


@dataclass
class TrainStats:
    """What a training run did: games, learner steps, seconds, guard interventions, and the games themselves."""

    games: int = 0
    steps: int = 0
    seconds: float = 0.0
    nan_restores: int = 0
    nan_fallbacks: int = 0
    snapshots: int = 0
    history: list[float] = field(default_factory=list)  # the learner's reward per game
    record: list[tuple[list[int], int]] = field(default_factory=list)  # every game: moves, black's reward (scoring order)


def usable_mask(mask: np.ndarray) -> np.ndarray:
    """The mask as bools, never all false (an all-false mask would make MaskablePPO's probabilities NaN): then all true."""
    mask = np.asarray(mask, dtype=bool)
    return mask if mask.any() else np.ones_like(mask)


def guarded_action(
    policy: MaskableActorCriticPolicy,
    planes: np.ndarray,
    mask: np.ndarray,
    rng: np.random.Generator,
    deterministic: bool,
    on_fallback: Callable[[], None] | None = None,
) -> int:
    """The policy's choice among the legal placements (argmax, or a sample of the masked softmax).

    Logits that are not finite on the legal placements (NaN weights) give a uniformly random
    legal placement instead, reported through ``on_fallback``.
    """
    mask = np.asarray(mask).reshape(1, -1)
    logits = policy_logits(policy, planes.reshape(1, *planes.shape))
    chosen, fallbacks = choose(logits, mask, rng, deterministic)
    if fallbacks and on_fallback is not None:
        on_fallback()
    return int(chosen[0])


class NanGuard(BaseCallback):
    """After every update: weights not finite -> the last finite snapshot is put back (counted)."""

    def __init__(self, stats: TrainStats) -> None:
        super().__init__()
        self.stats = stats
        self.good: dict[str, torch.Tensor] | None = None

    def _on_rollout_start(self) -> None:
        policy = self.model.policy
        if weights_finite(policy):
            self.good = copy.deepcopy(policy.state_dict())
        elif self.good is not None:
            policy.load_state_dict(self.good)
            self.stats.nan_restores += 1

    def _on_step(self) -> bool:
        return True


class _Budget(BaseCallback):
    """Reports finished games and stops training once the budget's last game has finished."""

    def __init__(self, env: SelfPlayVecEnv, on_game: Callable[[int], None] | None) -> None:
        super().__init__()
        self.env, self.on_game, self.reported = env, on_game, 0

    def _on_step(self) -> bool:
        games = len(self.env.games)
        if self.on_game is not None and games != self.reported:
            self.on_game(games)
        self.reported = games
        return not self.env.finished


def train_ppo(
    arena: AdaptationArena | Source, config: PpoConfig = PpoConfig(), on_game: Callable[[int], None] | None = None
) -> tuple[MaskableActorCriticPolicy, TrainStats]:
    """Train MaskablePPO through ``arena`` until its budget is spent; returns the trained policy (no environment attached).

    ``arena`` may also be a :class:`harness.envs.scoring.Source` with a budgeted scorer.
    """
    source = arena if isinstance(arena, Source) else Source(arena.rules, ArenaScorer(arena))
    if source.scorer.budget is None:
        raise ValueError("PPO-2K trains for a budget of games: give a budgeted arena or source, not free experimentation")
    stats = TrainStats()
    previous_threads, previous_checks = torch.get_num_threads(), torch.distributions.Distribution._validate_args
    torch.set_num_threads(config.threads)
    torch.distributions.Distribution.set_default_validate_args(False)  # argument checks only: the same numbers, 7% less time
    start = time.perf_counter()
    try:
        env = SelfPlayVecEnv(source, config.n_envs, config.seed, config.snapshot_games)
        model = MaskablePPO(
            "MlpPolicy",
            env,
            n_steps=config.n_steps,
            batch_size=config.batch_size,
            n_epochs=config.n_epochs,
            learning_rate=config.learning_rate,
            seed=config.seed,
            device="cpu",
            verbose=0,
        )
        model.set_logger(Logger(folder=None, output_formats=[]))  # sb3's own would make a directory in /tmp per run
        env.attach(model.policy)
        if not env.finished:
            model.learn(total_timesteps=10**12, callback=[NanGuard(stats), _Budget(env, on_game)])
        policy = model.policy.eval()
        assert env.snapshots is not None
        if not weights_finite(policy):
            policy = env.snapshots.pool[-1]
            stats.nan_restores += 1
    finally:
        torch.set_num_threads(previous_threads)
        torch.distributions.Distribution.set_default_validate_args(previous_checks)
    stats.seconds = time.perf_counter() - start
    stats.games, stats.steps, stats.snapshots = len(env.games), env.learner_steps, env.snapshots_taken
    stats.history, stats.record, stats.nan_fallbacks = env.learner_rewards, env.games, env.snapshots.fallbacks
    return policy, stats
