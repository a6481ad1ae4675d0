"""No K in any observation, info dict or public attribute of the environments: a walk over all 56 (and a custom one).

The walk follows every public attribute (names without a leading underscore) of the
environment objects and of every project object reachable from them, through dicts,
lists and tuples, plus every observation and info dict a few steps produce, and fails on
a Condition, a value equal to K (exact or as a float), an array holding K, or the
condition's label. Only ``reveal_k=True`` makes K public (``revealed_k``).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import pytest

from engine.condition import Condition
from harness.envs.aec import OthelloAEC
from harness.envs.gym_env import OthelloGym
from harness.envs.parallel import OthelloParallel
from harness.envs.vector import OthelloVector
from tests.harness.envs.envs_helpers import ENV_KEYS, environment


def _leaks(value: Any, condition: Condition, path: str, seen: set[int], found: list[str], depth: int = 0) -> None:
    if id(value) in seen or depth > 6:
        return
    seen.add(id(value))
    k = condition.k
    if isinstance(value, Condition):
        found.append(f"{path}: a Condition")
    elif isinstance(value, Fraction) and value == k:
        found.append(f"{path}: K as a fraction")
    elif isinstance(value, (float, np.floating)) and not isinstance(value, bool) and abs(float(value) - float(k)) < 1e-9:
        found.append(f"{path}: K as a float")
    elif isinstance(value, str) and condition.label and condition.label in value and condition.label != "custom":
        found.append(f"{path}: the condition's label {condition.label!r}")
    elif isinstance(value, np.ndarray):
        if value.dtype.kind == "f" and np.isclose(value, float(k)).any():
            found.append(f"{path}: K inside an array")
    elif isinstance(value, dict):
        for key, item in value.items():
            _leaks(item, condition, f"{path}[{key!r}]", seen, found, depth + 1)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for index, item in enumerate(value):
            _leaks(item, condition, f"{path}[{index}]", seen, found, depth + 1)
    elif type(value).__module__.split(".")[0] in {"harness", "engine"}:
        for name in dir(value):
            if name.startswith("_"):
                continue
            try:
                item = getattr(value, name)
            except Exception as error:  # noqa: BLE001 - a property that refuses is no leak
                item = repr(error)
            if callable(item) and not isinstance(item, (dict, list)):
                continue
            _leaks(item, condition, f"{path}.{name}", seen, found, depth + 1)


def _check(value: Any, condition: Condition, path: str) -> None:
    found: list[str] = []
    _leaks(value, condition, path, set(), found)
    assert not found, found


@pytest.mark.parametrize("key", ENV_KEYS)
@pytest.mark.parametrize("budget", [2000, None])
def test_no_k_in_attributes_observations_or_infos(key: int | str, budget: int | None) -> None:
    env = environment(key)
    condition = env.condition
    rng = np.random.default_rng(0)
    aec = OthelloAEC(env, budget=budget, render_mode="ansi")
    aec.reset(seed=0)
    for _ in range(12):
        observation, reward, terminated, truncated, info = aec.last()
        _check((observation, reward, info, aec.infos, aec.rewards), condition, "aec.last()")
        if terminated or truncated:
            break
        aec.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    _check(aec, condition, "aec")
    assert aec.revealed_k is None

    gym_env = OthelloGym(env, budget=budget, render_mode="ansi")
    _, info = gym_env.reset(seed=0)
    _check(info, condition, "gym.reset() info")
    for _ in range(6):
        planes, reward, done, _, info = gym_env.step(int(rng.choice(np.flatnonzero(gym_env.action_masks()))))
        _check((planes, info), condition, "gym.step()")
        if done:
            break
    _check(gym_env, condition, "gym")
    assert gym_env.revealed_k is None

    parallel = OthelloParallel(env, budget=budget, render_mode="ansi")
    observations, infos = parallel.reset(seed=0)
    _check((observations, infos), condition, "parallel.reset()")
    for _ in range(6):
        mover = parallel.to_move
        assert mover is not None
        step = parallel.step({mover: int(rng.choice(np.flatnonzero(observations[mover]["action_mask"])))})
        observations = step[0]
        _check(step, condition, "parallel.step()")
        if not parallel.agents:
            break
    _check(parallel, condition, "parallel")
    assert parallel.revealed_k is None

    vector = OthelloVector(env, 8, budget=budget)
    _, info = vector.reset(seed=0)
    for _ in range(3):
        _, rewards, _, _, info = vector.step(vector.random_actions())
        _check((rewards, info), condition, "vector.step()")
    _check(vector, condition, "vector")
    assert vector.revealed_k is None


def test_reveal_k_is_the_explicit_way_to_see_k() -> None:
    env = environment(16)
    assert OthelloAEC(env, budget=None, reveal_k=True).revealed_k == env.condition.k
    assert OthelloGym(env, reveal_k=True).revealed_k == env.condition.k


def test_the_walk_finds_a_planted_k() -> None:
    class Leaky:  # a project-like object that exposes K by accident
        pass

    Leaky.__module__ = "harness.envs.leaky"
    leaky = Leaky()
    leaky.threshold = {"k": float(environment(16).condition.k)}
    with pytest.raises(AssertionError, match="K as a float"):
        _check(leaky, environment(16).condition, "leaky")
