"""PPO-2K: tiny training runs through the budgeted env, the ppo spec, and the guards against MaskablePPO's failure modes."""

from __future__ import annotations

import tempfile

import numpy as np
import pytest
import torch
from sb3_contrib import MaskablePPO

from agents.base import AgentContext
from engine.protocol.observation import observe, to_planes
from engine.state import PASS
from harness.envs.gym_env import OthelloGym
from harness.envs.ppo import NanGuard, PpoConfig, TrainStats, guarded_action, train_ppo, usable_mask
from harness.envs.scoring import ArenaScorer, FreeScorer, Source
from harness.envs.selfplay import SelfPlayVecEnv, SnapshotPool, choose
from harness.play.arena import Arena
from harness.registry.specs import make_agent
from tests.harness.envs.envs_helpers import environment

TINY = PpoConfig(n_envs=4, n_steps=8, batch_size=16, n_epochs=1, snapshot_games=3, seed=1)


def test_training_plays_exactly_the_budget_on_several_games_at_once_and_stops_without_raising(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # sb3's default logger makes an SB3-<time> directory there
    arena = Arena(environment(5), budget=7)  # the 6x8 board: short games
    policy, stats = train_ppo(arena, TINY)
    assert arena.games_played == 7 == stats.games == len(stats.record) == len(stats.history) and arena.remaining == 0
    assert stats.steps > 32 and stats.snapshots == 2  # several updates; snapshots after games 3 and 6
    assert [record.rewards[0] for record in arena.ledger.records] == [reward for _, reward in stats.record]
    assert all(bool(torch.isfinite(p).all()) for p in policy.parameters())
    assert list(tmp_path.glob("SB3-*")) == []  # training leaves no log directory behind
    with pytest.raises(ValueError, match="not free experimentation"):
        train_ppo(Source(environment(5).rules, FreeScorer(environment(5).condition)), TINY)


def test_the_ppo_spec_adapts_through_an_arena_and_plays_legal_moves() -> None:
    env = environment(12)
    agent = make_agent("ppo:n_envs=2,n_steps=16,epochs=1,snapshot_games=2", AgentContext(env.rules), np.random.default_rng(0))
    arena = Arena(env, budget=4)
    agent.adapt(arena)
    agent.freeze()
    assert arena.games_played == 4 and agent.training_summary()["games"] == 4
    rules = env.rules
    state = rules.initial_state()
    for _ in range(10):
        legal = rules.legal_moves(state)
        if not legal:
            break
        move = agent.act(observe(rules, state))
        assert move in legal
        state = rules.play(state, move)


def test_an_unadapted_ppo_agent_plays_and_a_forced_pass_never_reaches_the_policy() -> None:
    env = environment(4)
    agent = make_agent("ppo", AgentContext(env.rules), np.random.default_rng(3))
    state = env.rules.initial_state()
    assert agent.act(observe(env.rules, state)) in env.rules.legal_moves(state)
    agent.policy = None
    passing = observe(env.rules, state, legal=(PASS,))
    assert agent.act(passing) == PASS and agent.policy is None


def test_an_all_false_mask_never_reaches_the_policy() -> None:
    assert usable_mask(np.zeros(5, dtype=np.int8)).all()
    assert (usable_mask(np.array([0, 1, 0])) == np.array([False, True, False])).all()
    env = environment(0)
    vec = SelfPlayVecEnv(Source(env.rules, ArenaScorer(Arena(env, budget=1))), 3, seed=0, snapshot_games=5)
    model = MaskablePPO("MlpPolicy", OthelloGym(env, budget=None), n_steps=16, seed=0, device="cpu")
    vec.attach(model.policy)
    vec.reset()
    masks = vec.action_masks()
    assert masks[0].sum() == 4 and masks[1:].all()  # one game of the budget; the idle slots' masks are all true
    planes = np.zeros((3, 8, 8), dtype=np.float32)
    with pytest.raises(ValueError, match="no legal placement to choose from"):
        guarded_action(model.policy, planes, np.zeros(64, dtype=np.int8), np.random.default_rng(0), deterministic=True)
    with pytest.raises(ValueError, match="no legal placement to choose from"):
        choose(np.zeros((2, 64)), np.vstack([masks[0], np.zeros(64, dtype=bool)]), np.random.default_rng(0), False)


def test_nan_weights_fall_back_to_a_legal_move_and_are_restored_after_an_update() -> None:
    env = environment(0)
    model = MaskablePPO("MlpPolicy", OthelloGym(env, budget=None), n_steps=16, seed=0, device="cpu")
    state = env.rules.initial_state()
    planes, mask = to_planes(observe(env.rules, state))
    stats = TrainStats()
    guard = NanGuard(stats)
    guard.init_callback(model)
    guard.on_rollout_start()  # weights finite: remembered
    with torch.no_grad():
        for parameter in model.policy.action_net.parameters():
            parameter.fill_(float("nan"))
    fallbacks = []
    move = guarded_action(model.policy, planes, mask, np.random.default_rng(0), deterministic=True, on_fallback=lambda: fallbacks.append(1))
    assert mask[move] == 1 and fallbacks == [1]
    pool = SnapshotPool(model.policy, np.random.default_rng(0))  # the snapshots' batched choice falls back the same way
    batch_moves = pool.act(np.zeros(3, dtype=np.int64), np.repeat(planes[None], 3, axis=0), np.repeat(mask[None], 3, axis=0))
    assert all(mask[m] == 1 for m in batch_moves) and pool.fallbacks == 3
    guard.on_rollout_start()  # after the update: NaN found, the last finite weights put back
    assert stats.nan_restores == 1
    assert all(bool(torch.isfinite(p).all()) for p in model.policy.parameters())
    assert mask[guarded_action(model.policy, planes, mask, np.random.default_rng(0), deterministic=True)] == 1


def test_the_ppo_2k_opponent_trains_once_per_environment_with_a_recorded_grant() -> None:
    from harness.envs import ppo_agent
    from harness.play.grants import EvaluationGrants

    env = environment(33)
    grants = EvaluationGrants(env)
    context = AgentContext(env.rules, grant_simulator=grants.grant_simulator)
    first = make_agent("ppo-2k:games=3", context, np.random.default_rng(0))
    assert first.privileged and first.frozen and grants.usage.privileged
    state = env.rules.initial_state()
    assert first.act(observe(env.rules, state)) in env.rules.legal_moves(state)
    trained = len(ppo_agent._TRAINED_OPPONENTS)
    second = make_agent("ppo-2k:games=3", context, np.random.default_rng(1))
    second.act(observe(env.rules, state))
    assert len(ppo_agent._TRAINED_OPPONENTS) == trained and second.policy is first.policy
    with pytest.raises(ValueError, match="games=0: give 1 or more"):
        make_agent("ppo-2k:games=0", context, np.random.default_rng(0))
    with pytest.raises(ValueError, match="needs a simulator grant"):
        make_agent("ppo-2k", AgentContext(env.rules), np.random.default_rng(0))
