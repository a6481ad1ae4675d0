"""PPO-2K: sb3-contrib MaskablePPO (default ``MlpPolicy``) by self-play against snapshots of itself, in exactly the budget's games.

Training runs through the budgeted Gymnasium environment (:class:`harness.envs.gym_env.OthelloGym`
made from the adaptation arena), so every finished game is scored by the arena and counted
in its ledger; training stops when the last game of the budget has finished (the
environment would raise ``BudgetExhausted`` on the next reset). The opponent of each game
is a frozen snapshot of the learner drawn from a small pool (the newest half the time),
refreshed every ``snapshot_games`` games. Masks are used when acting, in training and at
prediction.

Guards against MaskablePPO's known failure modes:

- an all-false mask (no legal placement: the episode is over) makes the masked
  distribution all ``-inf`` and its probabilities NaN: :func:`usable_mask` never hands one
  to the policy, and the agent passes without asking the policy;
- NaN logits after long training: :class:`NanGuard` checks the weights after every update
  and puts back the last finite snapshot (counted), and :func:`guarded_action` falls back
  to a uniformly random legal placement (counted) if the policy still yields no valid
  distribution.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.callbacks import BaseCallback

from engine.protocol.arena import AdaptationArena
from harness.envs.gym_env import OthelloGym
from harness.envs.scoring import Source

SNAPSHOT_POOL = 5


@dataclass(frozen=True)
class PpoConfig:
    """Training settings; the MaskablePPO ones are sb3-contrib's defaults except ``n_steps`` (shorter rollouts: 2,000 games are few)."""

    n_steps: int = 512
    batch_size: int = 64
    n_epochs: int = 10
    learning_rate: float = 3e-4
    snapshot_games: int = 200
    seed: int = 0
    threads: int = 1

    def __post_init__(self) -> None:
        for name in ("n_steps", "batch_size", "n_epochs", "snapshot_games", "threads"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name}={value!r}: give a whole number of 1 or more")
        if not self.learning_rate > 0:
            raise ValueError(f"learning_rate={self.learning_rate!r}: give a number above 0")


@dataclass
class TrainStats:
    """What a training run did: games, learner steps, seconds, guard interventions."""

    games: int = 0
    steps: int = 0
    seconds: float = 0.0
    nan_restores: int = 0
    snapshots: int = 0
    history: list[float] = field(default_factory=list)  # the learner's reward per game


def usable_mask(mask: np.ndarray) -> np.ndarray:
    """The mask as bools, never all false (an all-false mask would make MaskablePPO's probabilities NaN): then all true."""
    mask = np.asarray(mask, dtype=bool)
    return mask if mask.any() else np.ones_like(mask)


def weights_finite(policy: torch.nn.Module) -> bool:
    return all(bool(torch.isfinite(parameter).all()) for parameter in policy.parameters())


def masked_logits(policy: MaskableActorCriticPolicy, planes: np.ndarray) -> np.ndarray:
    """The policy's action logits for one observation (its own forward pass, without building a distribution)."""
    with torch.no_grad():
        observation = torch.as_tensor(planes, dtype=torch.float32).reshape(1, *planes.shape)
        features = policy.extract_features(observation, policy.pi_features_extractor)
        assert isinstance(features, torch.Tensor)  # one extractor for the actor: a tensor, not a pair
        logits = policy.action_net(policy.mlp_extractor.forward_actor(features))
    return np.asarray(logits.numpy()[0], dtype=np.float64)


def guarded_action(policy: MaskableActorCriticPolicy, planes: np.ndarray, mask: np.ndarray, rng: np.random.Generator,
                   deterministic: bool, on_fallback: Callable[[], None] | None = None) -> int:
    """The policy's choice among the legal placements (argmax, or a sample of the masked softmax).

    Logits that are not finite on the legal placements (NaN weights) give a uniformly random
    legal placement instead, reported through ``on_fallback``.
    """
    legal = np.flatnonzero(mask)
    if legal.size == 0:
        raise ValueError("no legal placement to choose from: the game is over or the mover must pass")
    logits = masked_logits(policy, planes)[legal]
    if not np.isfinite(logits).all():
        if on_fallback is not None:
            on_fallback()
        return int(legal[int(rng.integers(legal.size))])
    if deterministic:
        return int(legal[int(np.argmax(logits))])
    weights = np.exp(logits - logits.max())
    return int(legal[int(rng.choice(legal.size, p=weights / weights.sum()))])


class SnapshotOpponent:
    """The opponent of a self-play game: a frozen copy of the learner, drawn from a pool per game."""

    def __init__(self, policy: MaskableActorCriticPolicy, rng: np.random.Generator) -> None:
        self.rng = rng
        self.pool: list[MaskableActorCriticPolicy] = []
        self.current = self.add(policy)

    def add(self, policy: MaskableActorCriticPolicy) -> MaskableActorCriticPolicy:
        snapshot = copy.deepcopy(policy).eval()
        self.pool = [*self.pool, snapshot][-SNAPSHOT_POOL:]
        return snapshot

    def next_game(self) -> None:
        newest = self.rng.random() < 0.5
        self.current = self.pool[-1] if newest else self.pool[int(self.rng.integers(len(self.pool)))]

    def __call__(self, planes: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
        return guarded_action(self.current, planes, mask, rng, deterministic=False)


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


class _SelfPlay(BaseCallback):
    """Counts finished games, refreshes the snapshot pool, and stops training after the budget's last game."""

    def __init__(self, env: _TrainingEnv, opponent: SnapshotOpponent, config: PpoConfig, stats: TrainStats,
                 on_game: Callable[[int], None] | None) -> None:
        super().__init__()
        self.env, self.opponent, self.config, self.stats, self.on_game = env, opponent, config, stats, on_game

    def _on_step(self) -> bool:
        self.stats.steps += 1
        for done, reward in zip(self.locals["dones"], self.locals["rewards"]):
            if done:
                self.stats.games += 1
                self.stats.history.append(float(reward))
                policy = self.model.policy
                if self.stats.games % self.config.snapshot_games == 0 and weights_finite(policy):
                    assert isinstance(policy, MaskableActorCriticPolicy)
                    self.opponent.add(policy)
                    self.stats.snapshots += 1
                self.opponent.next_game()
                if self.on_game is not None:
                    self.on_game(self.stats.games)
        return self.env.remaining_games() > 0


def train_ppo(arena: AdaptationArena | Source, config: PpoConfig = PpoConfig(),
              on_game: Callable[[int], None] | None = None) -> tuple[MaskableActorCriticPolicy, TrainStats]:
    """Train MaskablePPO through ``arena`` until its budget is spent; returns the trained policy (no environment attached).

    ``arena`` may also be a :class:`harness.envs.scoring.Source` with a budgeted scorer.
    """
    stats = TrainStats()
    previous_threads = torch.get_num_threads()
    torch.set_num_threads(config.threads)
    start = time.perf_counter()
    try:
        env = _TrainingEnv(arena) if isinstance(arena, Source) else _TrainingEnv(arena=arena)
        model = MaskablePPO("MlpPolicy", env, n_steps=config.n_steps, batch_size=config.batch_size, n_epochs=config.n_epochs,
                            learning_rate=config.learning_rate, seed=config.seed, device="cpu", verbose=0)
        opponent = SnapshotOpponent(model.policy, np.random.default_rng(config.seed))
        env.set_opponent(opponent)
        if env.remaining_games() > 0:
            model.learn(total_timesteps=10**9, callback=[NanGuard(stats), _SelfPlay(env, opponent, config, stats, on_game)])
        policy = model.policy.eval()
        if not weights_finite(policy) and opponent.pool:
            policy = opponent.pool[-1]
            stats.nan_restores += 1
    finally:
        torch.set_num_threads(previous_threads)
    stats.seconds = time.perf_counter() - start
    return policy, stats


class _TrainingEnv(OthelloGym):
    """The budgeted env as MaskablePPO trains on it: masks never all false, and no new game once the budget is spent.

    After the budget's last game SB3 resets the environment at once (inside ``step``); this
    reset returns a blank position instead of raising ``BudgetExhausted``, and the training
    callback stops before the policy acts on it.
    """

    def remaining_games(self) -> int:
        budget = self.budget
        return 1 if budget is None else budget - self.games_played

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        if self.remaining_games() <= 0:
            return np.zeros((3, self.layout.rows, self.layout.cols), dtype=np.float32), {}
        return super().reset(seed=seed, options=options)

    def action_masks(self) -> np.ndarray:
        return usable_mask(super().action_masks())
