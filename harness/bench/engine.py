"""Engine speed: random-playout games per second, fast kernels vs the pure-Python reference.

Everything runs on one core in this process. The numba kernel is compiled (or
loaded from its cache) before any clock starts, and the batch it is timed on
is sized to last about the requested number of seconds. The reference engine
is ``tests/reference_othello.py`` of a source checkout, imported by path; an
installed package without the tests has no reference and says so.
"""

from __future__ import annotations

import importlib.util
import random
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType

import harness
from engine import Environment, make_env
from engine.playouts import random_games

REFERENCE_PATH = Path(harness.__file__).resolve().parents[1] / "tests" / "reference_othello.py"
# Registered under its own name, apart from the tests' own ``import reference_othello``.
REFERENCE_MODULE = "_arena_bench_reference_othello"
REFERENCE_UNAVAILABLE = "reference unavailable (needs a source checkout)"
CALIBRATION_SECONDS = 0.05  # a timed probe at least this long sizes the measured batch


@dataclass(frozen=True)
class EngineBenchRow:
    """One environment's figures: fast-kernel games, and reference games if measured."""

    env_id: int
    name: str
    size: str
    games: int
    seconds: float
    plies: int
    reference_games: int = 0
    reference_seconds: float | None = None

    @property
    def games_per_second(self) -> float:
        return self.games / self.seconds if self.seconds > 0 else float("inf")

    @property
    def mean_plies(self) -> float:
        """Placements per game (passes not counted)."""
        return self.plies / self.games if self.games else 0.0

    @property
    def reference_games_per_second(self) -> float | None:
        if self.reference_seconds is None or not self.reference_games:
            return None
        return self.reference_games / self.reference_seconds if self.reference_seconds > 0 else float("inf")

    @property
    def ratio(self) -> float | None:
        """How many times faster the kernel plays than the reference (None without a reference)."""
        reference = self.reference_games_per_second
        return self.games_per_second / reference if reference else None


def time_fast_games(env: Environment, games: int, seed: int) -> tuple[float, int]:
    """(seconds, total placements) for ``games`` random games from the start of ``env``.

    Call :func:`warm_up` first so that compiling is not timed.
    """
    rules = env.rules
    state = rules.initial_state()
    start = time.perf_counter()
    plies = random_games(rules, state, games, seed)
    return time.perf_counter() - start, plies


def warm_up(env: Environment) -> None:
    """Compile (or load from cache) the playout kernel for this board's word count."""
    time_fast_games(env, 1, 1)


def batch_for(env: Environment, seconds: float, seed: int) -> int:
    """Games that should take about ``seconds``: doubling probes until one lasts CALIBRATION_SECONDS."""
    games = 16
    while True:
        elapsed, _ = time_fast_games(env, games, seed)
        if elapsed >= min(CALIBRATION_SECONDS, seconds) or games >= 1 << 30:
            return max(1, int(games * seconds / max(elapsed, 1e-9)))
        games *= 2


def measure_fast(env: Environment, seconds: float, games: int | None, seed: int) -> tuple[int, float, int]:
    """(games, seconds, placements) of one timed batch: ``games`` if given, else sized to ``seconds``."""
    warm_up(env)
    batch = games if games is not None else batch_for(env, seconds, seed + 1)
    elapsed, plies = time_fast_games(env, batch, seed)
    return batch, elapsed, plies


@cache
def load_reference() -> ModuleType | None:
    """``tests/reference_othello.py`` of the source checkout, or None if it is not there."""
    if not REFERENCE_PATH.is_file():
        return None
    spec = importlib.util.spec_from_file_location(REFERENCE_MODULE, REFERENCE_PATH)
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    sys.modules[REFERENCE_MODULE] = module  # its dataclasses look their module up while being created
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[REFERENCE_MODULE]
        raise
    return module if callable(getattr(module, "random_game", None)) else None


def measure_reference(env: Environment, games: int, seed: int) -> float | None:
    """Seconds for ``games`` reference random games on ``env`` (same turn limit); None without a reference."""
    module = load_reference()
    if module is None or games <= 0:
        return None
    rng = random.Random(seed)
    layout, limit, counting = env.layout, env.condition.turn_limit, env.condition.turn_counting
    start = time.perf_counter()
    for _ in range(games):
        module.random_game(layout, rng, limit, counting)
    return time.perf_counter() - start


def bench_engine(
    env_ids: Iterable[int],
    seconds: float = 1.0,
    games: int | None = None,
    reference_games: int = 20,
    seed: int = 12345,
    on_env_done: Callable[[EngineBenchRow], None] | None = None,
) -> list[EngineBenchRow]:
    """Measure every environment in ``env_ids``; ``on_env_done`` is called after each (progress)."""
    rows = []
    for env_id in env_ids:
        env = make_env(env_id)
        n, elapsed, plies = measure_fast(env, seconds, games, seed + env_id)
        reference_seconds = measure_reference(env, reference_games, seed + env_id)
        row = EngineBenchRow(
            env_id=env_id,
            name=env.name,
            size=f"{env.layout.rows}x{env.layout.cols}",
            games=n,
            seconds=elapsed,
            plies=plies,
            reference_games=reference_games if reference_seconds is not None else 0,
            reference_seconds=reference_seconds,
        )
        rows.append(row)
        if on_env_done is not None:
            on_env_done(row)
    return rows
