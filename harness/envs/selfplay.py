"""Self-play on many games at once: the Stable-Baselines3 ``VecEnv`` PPO-2K trains on.

:class:`SelfPlayVecEnv` holds ``n`` games (:class:`harness.envs.games.GameArrays`, one
kernel call steps them all). In each game the learner plays one colour (alternating game
by game in a slot) against a frozen snapshot of itself drawn from a small pool
(:class:`SnapshotPool`: the newest half the time) when the game starts. One ``step`` plays
the learner's placement in every game, then the snapshots' replies for all games at once
(one batched forward pass per snapshot in use, masked, sampled), until the learner is to
move again in every game. Passes are played by the kernel; the observation is the
reference format's planes from the learner's side and ``action_masks()`` its legal
placements (never all false).

Budget: finished games are scored through the source's scorer (the budgeted arena: each
one replayed and entered in its ledger), and a new game starts in a slot only while the
budget has games left, so exactly the budget's games are played; a slot with no game
left idles (a blank observation, an all-true mask, its action ignored) until training
stops when the last game has finished. Every scored game is kept (``games``: moves and
black's reward, in scoring order) for the run's record.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices, VecEnvStepReturn

from engine import batch
from harness.envs.games import GameArrays
from harness.envs.scoring import Source
from harness.envs.single import planes_space

SNAPSHOT_POOL = 5
_SKIP = -1  # an action the kernel refuses without changing the game: a slot that does not move this step


def policy_logits(policy: MaskableActorCriticPolicy, planes: np.ndarray) -> np.ndarray:
    """The policy's action logits for a batch of observations ``[n, 3, H, W]`` (no distribution built)."""
    with torch.no_grad():
        observation = torch.as_tensor(planes, dtype=torch.float32)
        features = policy.extract_features(observation, policy.pi_features_extractor)
        assert isinstance(features, torch.Tensor)  # one extractor for the actor: a tensor, not a pair
        logits = policy.action_net(policy.mlp_extractor.forward_actor(features))
    return np.asarray(logits.numpy(), dtype=np.float64)


def weights_finite(policy: torch.nn.Module) -> bool:
    return all(bool(torch.isfinite(parameter).all()) for parameter in policy.parameters())


def choose(logits: np.ndarray, masks: np.ndarray, rng: np.random.Generator, deterministic: bool) -> tuple[np.ndarray, int]:
    """One legal placement per row of ``masks`` from the masked logits (argmax, or a sample of the masked softmax).

    A row whose logits are not finite on its legal placements (NaN weights) gets a uniformly
    random legal placement instead; returns the choices and how many rows fell back. Every
    row must have a legal placement.
    """
    legal = masks.astype(bool)
    if not legal.any(axis=1).all():
        raise ValueError("no legal placement to choose from: the game is over or the mover must pass")
    broken = ~np.where(legal, np.isfinite(logits), True).all(axis=1)
    scores = np.where(legal, np.where(np.isfinite(logits), logits, 0.0), -np.inf)
    scores[broken] = np.where(legal[broken], 0.0, -np.inf)
    if deterministic:
        chosen = np.argmax(scores, axis=1)
        if broken.any():
            chosen[broken] = _sample(scores[broken], rng)
        return chosen, int(broken.sum())
    return _sample(scores, rng), int(broken.sum())


def _sample(scores: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    cumulative = np.cumsum(weights, axis=1)
    draws = rng.random(len(scores)) * cumulative[:, -1]
    return np.minimum((cumulative <= draws[:, None]).sum(axis=1), scores.shape[1] - 1)


class SnapshotPool:
    """Frozen copies of the learner (at most :data:`SNAPSHOT_POOL`); each game meets one, drawn when it starts."""

    def __init__(self, policy: MaskableActorCriticPolicy, rng: np.random.Generator) -> None:
        self.rng = rng
        self.pool: list[MaskableActorCriticPolicy] = []
        self.fallbacks = 0
        self.add(policy)

    def add(self, policy: MaskableActorCriticPolicy) -> None:
        self.pool = [*self.pool, copy.deepcopy(policy).eval()][-SNAPSHOT_POOL:]

    def draw(self) -> int:
        """A pool index for a new game: the newest half the time, else any."""
        return len(self.pool) - 1 if self.rng.random() < 0.5 else int(self.rng.integers(len(self.pool)))

    def act(self, which: np.ndarray, planes: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Sampled moves for a batch of games, game ``j`` played by snapshot ``which[j]`` (one forward pass per snapshot)."""
        moves = np.empty(len(which), dtype=np.int64)
        for index in np.unique(which):
            rows = np.flatnonzero(which == index)
            logits = policy_logits(self.pool[min(int(index), len(self.pool) - 1)], planes[rows])
            moves[rows], fallbacks = choose(logits, masks[rows], self.rng, deterministic=False)
            self.fallbacks += fallbacks
        return moves


class SelfPlayVecEnv(VecEnv):
    """``n`` self-play games against snapshots, budgeted through ``source``'s scorer (see the module docstring)."""

    def __init__(self, source: Source, n: int, seed: int, snapshot_games: int) -> None:
        layout = source.rules.layout
        super().__init__(n, planes_space(layout.rows, layout.cols), spaces.Discrete(layout.cells))
        self.source = source
        self._arrays = GameArrays(source.rules, n, parallel=False, restart=True)
        scorer = source.scorer
        self._left_to_start = (scorer.budget - scorer.games_played) if scorer.budget is not None else n
        self._snapshot_games = snapshot_games
        self._rng = np.random.default_rng(seed)
        self.learner_policy: MaskableActorCriticPolicy | None = None
        self.snapshots: SnapshotPool | None = None
        self.games: list[tuple[list[int], int]] = []  # every scored game: moves, black's reward
        self.learner_rewards: list[float] = []
        self.learner_steps = 0
        self.snapshots_taken = 0
        self._learner = (np.arange(n) % 2).astype(np.int8)  # slot i's first game: black for even i
        self._opponent = np.zeros(n, dtype=np.int64)
        self._active = np.zeros(n, dtype=bool)
        self._actions = np.full(n, _SKIP, dtype=np.int64)
        self._pending: np.ndarray = self._actions

    def attach(self, policy: MaskableActorCriticPolicy) -> None:
        """The learner whose snapshots are the opponents (its initial weights are the first)."""
        self.learner_policy = policy
        self.snapshots = SnapshotPool(policy, self._rng)

    @property
    def finished(self) -> bool:
        """True once every game of the budget has been played and scored."""
        return self.source.scorer.budget is not None and not self._active.any() and self._left_to_start <= 0

    # -- the VecEnv face ------------------------------------------------------------------------
    def reset(self) -> np.ndarray:
        self._arrays.reset()
        self._active[:] = False
        for slot in range(self.num_envs):
            self._start(slot, flip=False)
        self._opponents_move()
        return self._observations()

    def step_async(self, actions: np.ndarray) -> None:
        self._pending = np.asarray(actions, dtype=np.int64)

    def step_wait(self) -> VecEnvStepReturn:
        n = self.num_envs
        rewards = np.zeros(n, dtype=np.float32)
        dones = np.zeros(n, dtype=bool)
        self._actions[:] = np.where(self._active, self._pending, _SKIP)
        self.learner_steps += int(self._active.sum())
        result = self._arrays.step(self._actions)
        illegal = self._active & (result.status == batch.ILLEGAL)
        if illegal.any():
            raise ValueError(f"the learner proposed an illegal placement {self._actions[illegal][0]} (masks are used when acting)")
        self._settle(rewards, dones)
        self._opponents_move(rewards, dones)
        return self._observations(), rewards, dones, [{} for _ in range(n)]

    def action_masks(self) -> np.ndarray:
        """The learner's legal placements per game (bool ``[n, H*W]``); all true in an idle slot, never all false."""
        masks = self._arrays.masks.astype(bool)
        masks[~self._active] = True
        return masks

    def env_method(self, method_name: str, *method_args: Any, indices: VecEnvIndices = None, **method_kwargs: Any) -> list[Any]:
        if method_name != "action_masks":
            raise AttributeError(f"SelfPlayVecEnv has no per-game method {method_name!r}")
        masks = self.action_masks()
        return [masks[i] for i in self._get_indices(indices)]

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        if attr_name == "render_mode":
            return [None for _ in self._get_indices(indices)]
        raise AttributeError(f"SelfPlayVecEnv games have no attribute {attr_name!r}")

    def has_attr(self, attr_name: str) -> bool:
        return attr_name == "action_masks"

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        raise AttributeError(f"SelfPlayVecEnv games have no attribute {attr_name!r} to set")

    def env_is_wrapped(self, wrapper_class: type[Any], indices: VecEnvIndices = None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]

    def close(self) -> None:
        """Nothing to release."""

    # -- inside ---------------------------------------------------------------------------------
    def _start(self, slot: int, flip: bool = True) -> None:
        """A new game in ``slot`` (already at the initial position) if the budget has one left, else the slot idles."""
        if self._left_to_start <= 0:
            self._active[slot] = False
            return
        self._left_to_start -= 1 if self.source.scorer.budget is not None else 0
        self._active[slot] = True
        if flip:
            self._learner[slot] ^= 1
        assert self.snapshots is not None, "attach() the learner before playing"
        self._opponent[slot] = self.snapshots.draw()

    def _settle(self, rewards: np.ndarray, dones: np.ndarray) -> None:
        """Score the games the last step finished, note the learner's rewards, and start new ones."""
        result = self._arrays._result
        ended = np.flatnonzero(self._active & (result.status == batch.FINISHED))
        if ended.size == 0:
            return
        moves = [self._arrays.moves(int(slot)) for slot in ended]
        black_reward, _ = self.source.scorer.score_many(result.black[ended], result.white[ended], moves)
        for slot, game, reward in zip(ended, moves, black_reward):
            learner_reward = float(reward) if self._learner[slot] == 0 else -float(reward)
            rewards[slot], dones[slot] = learner_reward, True
            self.games.append((game, int(reward)))
            self.learner_rewards.append(learner_reward)
            self._after_game()
            self._start(int(slot))

    def _after_game(self) -> None:
        """Every ``snapshot_games`` games: the learner's current weights join the pool (if finite)."""
        policy = self.learner_policy
        if policy is not None and self.snapshots is not None and len(self.games) % self._snapshot_games == 0 and weights_finite(policy):
            self.snapshots.add(policy)
            self.snapshots_taken += 1

    def _opponents_move(self, rewards: np.ndarray | None = None, dones: np.ndarray | None = None) -> None:
        """The snapshots play (all waiting games at once) until the learner is to move in every active game."""
        rewards = np.zeros(self.num_envs, dtype=np.float32) if rewards is None else rewards
        dones = np.zeros(self.num_envs, dtype=bool) if dones is None else dones
        arrays = self._arrays
        while True:
            waiting = np.flatnonzero(self._active & (arrays.colour != self._learner))
            if waiting.size == 0:
                return
            assert self.snapshots is not None
            moves = self.snapshots.act(self._opponent[waiting], arrays.planes[waiting], arrays.masks[waiting])
            self._actions[:] = _SKIP
            self._actions[waiting] = moves
            result = arrays.step(self._actions)
            if (result.status[waiting] == batch.ILLEGAL).any():
                raise RuntimeError("a snapshot proposed an illegal placement despite its mask")
            self._settle(rewards, dones)

    def _observations(self) -> np.ndarray:
        planes = self._arrays.planes.copy()
        planes[~self._active] = 0.0
        return planes
