"""The ``ppo`` agent spec: PPO-2K (paper section 4, Appendix F) as an adaptive agent of the arena.

``adapt(arena)`` trains MaskablePPO by self-play through the budgeted Gymnasium env made
from that arena, for exactly the arena's budget of games (2,000 in the benchmark), via
:func:`harness.envs.ppo.train_ppo`; ``act`` asks the trained policy with the legal-move
mask (deterministic once frozen). Before it adapts it plays with its freshly initialised
policy. A forced pass never reaches the policy. torch and sb3-contrib are imported on
first use, so the registry (which imports this module) stays quick to load.

``shared=STEM`` (``arena bench paper`` sets it): the environment's one PPO-2K of the run,
trained by whichever of the row and the opponent column comes first
(:mod:`harness.envs.ppo_shared`); the row replays its recorded games through its own
arena, so its ledger holds exactly the budget's games either way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from agents.base import Agent, AgentContext, forced_move
from agents.spec import Param, register
from engine.protocol.observation import Observation, to_planes

if TYPE_CHECKING:
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    from harness.envs.ppo import PpoConfig, TrainStats


class PpoAgent(Agent):
    """MaskablePPO with the default MlpPolicy over the reference-format planes."""

    name = "ppo"

    def __init__(self, context: AgentContext, rng: np.random.Generator, config: PpoConfig, shared: str = "") -> None:
        super().__init__(context, rng)
        self.config = config
        self.shared = shared  # the file stem of the run's shared training ("" = train alone)
        self.policy: MaskableActorCriticPolicy | None = None
        self.stats: TrainStats | None = None
        self.nan_fallbacks = 0

    def adapt(self, arena: Any) -> None:
        """Self-play training against snapshots for the arena's whole budget."""
        if self.frozen:
            return
        from harness.envs.ppo import TrainStats, train_ppo

        if not self.shared:
            self.policy, self.stats = train_ppo(arena, self.config)
            self.stats.record = []
            return
        from pathlib import Path

        from harness.envs.ppo_shared import replay, trained_once

        (policy, record), stats = trained_once(Path(self.shared), self.rules, self.config, lambda: train_ppo(arena, self.config))
        if stats is None:  # trained by the opponent column: its games replayed through this arena, rewards checked
            replay(arena, record)
            stats = TrainStats(games=len(record))
        stats.record = []  # stored (or replayed); frozen copies need not carry 2,000 games
        self.policy, self.stats = policy, stats

    def _untrained(self) -> MaskableActorCriticPolicy:
        """A freshly initialised policy for this layout (seeded from the agent's seed)."""
        import torch

        from harness.envs.ppo_shared import blank_policy

        torch.manual_seed(self.config.seed)
        return blank_policy(self.rules, self.config, trainable=False)  # played (an act before adapt), never trained

    def act(self, observation: Observation) -> int:
        move = forced_move(observation)
        if move is not None:
            return move
        from harness.envs.ppo import guarded_action

        if self.policy is None:
            self.policy = self._untrained()
        planes, mask = to_planes(observation)
        return guarded_action(self.policy, planes, mask, self.rng, deterministic=self.frozen, on_fallback=self._count_fallback)

    def _count_fallback(self) -> None:
        self.nan_fallbacks += 1

    def training_summary(self) -> dict[str, Any]:
        """Training figures for reports."""
        stats = self.stats
        trained = (
            {}
            if stats is None
            else {"games": stats.games, "steps": stats.steps, "train_seconds": round(stats.seconds, 1), "nan_restores": stats.nan_restores}
        )
        return {**trained, "nan_fallbacks": self.nan_fallbacks}


@register(
    "ppo",
    "PPO-2K: MaskablePPO (default MlpPolicy) trained by self-play against snapshots for the arena's 2,000 games",
    {
        "n_envs": Param(int, 16, "self-play games played at once"),
        "n_steps": Param(int, 128, "learner steps per game between updates (a rollout of n_envs x n_steps)"),
        "epochs": Param(int, 10, "optimisation epochs per update"),
        "snapshot_games": Param(int, 200, "games between new self-play snapshots"),
        "threads": Param(int, 1, "torch CPU threads while training"),
        "seed": Param(int, -1, "training seed (-1: drawn from the agent's seed)"),
        "shared": Param(str, "", "file stem of a run's shared PPO-2K training (set by arena bench paper)"),
    },
)
def make_ppo(
    context: AgentContext,
    rng: np.random.Generator,
    n_envs: int = 16,
    n_steps: int = 128,
    epochs: int = 10,
    snapshot_games: int = 200,
    threads: int = 1,
    seed: int = -1,
    shared: str = "",
) -> Agent:
    from harness.envs.ppo import PpoConfig

    drawn = int(rng.integers(2**31))
    config = PpoConfig(
        n_envs=n_envs, n_steps=n_steps, n_epochs=epochs, snapshot_games=snapshot_games, seed=drawn if seed < 0 else seed, threads=threads
    )
    return PpoAgent(context, rng, config, shared)


# Trained PPO-2K opponents of this process, by (layout, turn limit, counting, reward table, games, seed): an
# evaluation builds its opponent once per game, and every game of every pair on one environment meets the same one.
_TRAINED_OPPONENTS: dict[tuple[Any, ...], Any] = {}


class PpoOpponent(PpoAgent):
    """PPO-2K as a frozen evaluation opponent: trained on its first move (not when built), then cached per environment."""

    name = "ppo-2k"
    privileged = True  # trained with the true rule

    def __init__(
        self, context: AgentContext, rng: np.random.Generator, config: PpoConfig, reward_table: np.ndarray, games: int, shared: str = ""
    ) -> None:
        super().__init__(context, rng, config, shared)
        self._table = reward_table  # private: the true rewards, from the recorded simulator grant
        self._games = games
        self.freeze()

    def _untrained(self) -> MaskableActorCriticPolicy:
        """The trained policy of this environment (trained now if this process has not yet)."""
        from harness.envs.ppo import train_ppo
        from harness.envs.scoring import Source, TableScorer

        rules = self.rules
        key = (rules.layout, rules.turn_limit, rules.turn_counting, self._table.tobytes(), self._games, self.config.seed, self.shared)
        if key not in _TRAINED_OPPONENTS:

            def train() -> tuple[MaskableActorCriticPolicy, TrainStats]:
                return train_ppo(Source(rules, TableScorer(self._table, self._games)), self.config)

            if self.shared:
                from pathlib import Path

                from harness.envs.ppo_shared import trained_once

                _TRAINED_OPPONENTS[key] = trained_once(Path(self.shared), rules, self.config, train)[0][0]
            else:
                _TRAINED_OPPONENTS[key] = train()[0]
        trained: MaskableActorCriticPolicy = _TRAINED_OPPONENTS[key]
        return trained


@register(
    "ppo-2k",
    "PPO-2K as an evaluation opponent: PPO trained by self-play for 2,000 games with the true outcome rule "
    "(a privileged simulator's reward table), once per environment and process, then frozen",
    {
        "games": Param(int, 2000, "training games"),
        "seed": Param(int, 0, "training seed (the same opponent for every pair of an environment)"),
        "shared": Param(str, "", "file stem of a run's shared PPO-2K training (set by arena bench paper)"),
    },
    privileged=True,
)
def make_ppo_opponent(context: AgentContext, rng: np.random.Generator, games: int = 2000, seed: int = 0, shared: str = "") -> Agent:
    from harness.envs.ppo import PpoConfig

    if context.grant_simulator is None:
        raise ValueError("ppo-2k trains with the true outcome rule: it needs a simulator grant (a privileged opponent)")
    if games < 1:
        raise ValueError(f"ppo-2k: games={games!r}: give 1 or more")
    simulator = context.grant_simulator("PPO-2K opponent: self-play training scored by the true rule")
    return PpoOpponent(context, rng, PpoConfig(seed=seed), simulator.reward_table(), games, shared)
