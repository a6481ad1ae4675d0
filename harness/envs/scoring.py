"""Where an environment's finished games are scored and counted: the budgeted arena, or free experimentation.

A :class:`Scorer` turns a finished game (its moves and final disc counts) into the
terminal rewards (black, white). Two kinds:

- :class:`ArenaScorer` submits every finished game to an adaptation arena
  (:class:`harness.play.arena.Arena`, or the referee's handle in an agent process): the
  arena replays the moves, scores them with the hidden condition and enters the game in
  its ledger, so an environment counts games exactly like the arena and raises its
  :class:`~engine.protocol.arena.BudgetExhausted` after the budget.
- :class:`FreeScorer` scores with the condition itself and counts nothing against any
  budget: for free experimentation, and it says so (``budgeted`` is False).

Either way the condition (K) stays in a private attribute (``_condition``, or the
arena's); no public attribute of a scorer holds it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Protocol

import numpy as np

from engine.condition import Condition
from engine.environments import Environment, make_env
from engine.layout import Layout
from engine.layout_text import load_layout
from engine.protocol.arena import DEFAULT_BUDGET, AdaptationArena, BudgetExhausted
from engine.protocol.observation import Observation
from engine.protocol.record import GameRecord
from engine.rules import Rules
from engine.state import PASS
from harness.play.arena import Arena

CUSTOM_ENV_ID = 1000  # the id a custom layout's environment gets (outside 0-55)
FREE_NOTE = "free experimentation: games are scored but counted against no budget (not a benchmark result)"


class Scorer(Protocol):
    """Scores finished games; ``budgeted`` says whether they are counted against an arena's budget."""

    budgeted: bool

    @property
    def games_played(self) -> int: ...

    @property
    def budget(self) -> int | None: ...

    def check_open(self) -> None:
        """Raise BudgetExhausted if no further game may start."""

    def score(self, moves: Sequence[int], black: int, white: int) -> tuple[int, int]:
        """Rewards (black, white) of a finished game."""
        ...

    def score_many(self, black: np.ndarray, white: np.ndarray, moves: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
        """Rewards of several finished games at once (int8 arrays: black's, white's)."""
        ...


class _SelfCounted:
    """A scorer that counts the games it scores itself, against ``_budget`` (None: no budget)."""

    def __init__(self, budget: int | None) -> None:
        self._budget = budget
        self._games = 0

    @property
    def games_played(self) -> int:
        return self._games

    @property
    def budget(self) -> int | None:
        return self._budget


class FreeScorer(_SelfCounted):
    """Scores with the condition directly; counts games but enforces no budget."""

    budgeted = False
    note = FREE_NOTE

    def __init__(self, condition: Condition) -> None:
        super().__init__(None)
        self._condition = condition  # private: the hidden K

    def check_open(self) -> None:
        """Always open."""

    def score(self, moves: Sequence[int], black: int, white: int) -> tuple[int, int]:
        self._games += 1
        return self._condition.rewards(black, white)

    def score_many(self, black: np.ndarray, white: np.ndarray, moves: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
        """Vectorised :meth:`Condition.wins` on exact integers (the interval's fractions cross-multiplied)."""
        self._games += len(black)
        low, high = self._condition.interval
        black_wins = _inside(black.astype(np.int64), white.astype(np.int64), low, high)
        white_wins = _inside(white.astype(np.int64), black.astype(np.int64), low, high)
        black_reward = black_wins.astype(np.int8) - white_wins.astype(np.int8)
        return black_reward, -black_reward

    def __repr__(self) -> str:
        return f"FreeScorer(games_played={self._games}; {FREE_NOTE})"


def _inside(own: np.ndarray, other: np.ndarray, low: Fraction, high: Fraction) -> np.ndarray:
    total = own + other
    return (total > 0) & (low.numerator * total < own * low.denominator) & (own * high.denominator < high.numerator * total)


class ArenaScorer:
    """Submits each finished game to an adaptation arena, which scores it and counts it against its budget."""

    budgeted = True

    def __init__(self, arena: AdaptationArena) -> None:
        self._arena = arena

    @property
    def games_played(self) -> int:
        return self._arena.games_played

    @property
    def budget(self) -> int | None:
        return self._arena.budget

    @property
    def remaining(self) -> int:
        return self._arena.remaining

    def check_open(self) -> None:
        if self._arena.remaining <= 0:
            raise BudgetExhausted(
                f"budget of {self._arena.budget} games used up: {self._arena.games_played} games played; no further game is allowed"
            )

    def score(self, moves: Sequence[int], black: int, white: int) -> tuple[int, int]:
        record = submit_moves(self._arena, moves)
        if (record.black, record.white) != (black, white):
            raise RuntimeError(f"the arena replayed the game to {record.black}-{record.white}, the environment had {black}-{white}")
        return record.rewards

    def score_many(self, black: np.ndarray, white: np.ndarray, moves: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
        rewards = [self.score(game, int(b), int(w)) for game, b, w in zip(moves, black, white)]
        black_reward = np.array([r[0] for r in rewards], dtype=np.int8)
        return black_reward, -black_reward

    def __repr__(self) -> str:
        return f"ArenaScorer(budget={self.budget}, games_played={self.games_played})"


class TableScorer(_SelfCounted):
    """Scores with a privileged simulator's reward table (the true rule, granted and recorded) for ``budget`` games.

    For opponents whose registry entry is privileged (PPO-2K as an evaluation opponent
    trains with it); the table stays private, the budget is enforced like the arena's.
    """

    budgeted = True

    def __init__(self, reward_table: np.ndarray, budget: int) -> None:
        super().__init__(budget)
        self._table = reward_table  # private: the true rewards for every final count

    def check_open(self) -> None:
        if self._budget is not None and self._games >= self._budget:
            raise BudgetExhausted(f"budget of {self._budget} games used up: no further game is allowed")

    def score(self, moves: Sequence[int], black: int, white: int) -> tuple[int, int]:
        self.check_open()
        self._games += 1
        reward = int(self._table[black, white])
        return reward, -reward

    def score_many(self, black: np.ndarray, white: np.ndarray, moves: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
        rewards = [self.score(game, int(b), int(w))[0] for game, b, w in zip(moves or [[]] * len(black), black, white)]
        black_reward = np.array(rewards, dtype=np.int8)
        return black_reward, -black_reward


def submit_moves(arena: AdaptationArena, moves: Sequence[int]) -> GameRecord:
    """A finished game's moves through ``arena``: counted in its ledger, scored by its rule.

    The agent process's arena (``RemoteArena.play_moves``) sends the moves to the referee as they are, which re-plays
    and checks them itself; any other arena plays them through its game loop (:class:`_Script`)."""
    play_moves = getattr(arena, "play_moves", None)
    if play_moves is not None:
        record: GameRecord = play_moves(moves, _Script.name)
        return record
    script = _Script(moves)
    return arena.play(script, script)


class _Script:
    """Both colours' policy for replaying a finished game through the arena's game loop."""

    name = "environment"

    def __init__(self, moves: Sequence[int]) -> None:
        self._moves = [int(move) for move in moves]
        self._next = 0

    def act(self, observation: Observation) -> int:
        if observation.must_pass:
            if self._next < len(self._moves) and self._moves[self._next] == PASS:
                self._next += 1
            return PASS
        while self._moves[self._next] == PASS:  # the loop plays forced passes without asking
            self._next += 1
        self._next += 1
        return self._moves[self._next - 1]


@dataclass(frozen=True)
class Source:
    """What an environment is built on: the public rules, the scorer, and K only when revealed on purpose."""

    rules: Rules
    scorer: Scorer
    revealed_k: Fraction | None = None

    @property
    def budgeted(self) -> bool:
        return self.scorer.budgeted


def custom_environment(
    layout: Layout | str | Path, k: float | str | Fraction, turn_limit: int | None = None, turn_counting: str = "per_player"
) -> Environment:
    """An environment outside the 56: a layout (or a layout file) with threshold ``k`` and an optional turn limit."""
    board = layout if isinstance(layout, Layout) else load_layout(layout)
    return Environment(
        CUSTOM_ENV_ID, board, Condition(Fraction(str(k)) if not isinstance(k, Fraction) else k, turn_limit, turn_counting, "custom")
    )


def open_source(
    target: int | Environment | Source | None = None,
    *,
    arena: AdaptationArena | None = None,
    budget: int | None = DEFAULT_BUDGET,
    reveal_k: bool = False,
) -> Source:
    """The source of an environment.

    ``arena``: count games through that arena (its rules; ``target`` must be left out).
    Else ``target`` (an id 0-55 or an :class:`Environment`, e.g. :func:`custom_environment`;
    a :class:`Source` is used as it is):
    with ``budget`` a new in-process :class:`Arena` of that many games, with ``budget=None``
    free experimentation. ``reveal_k`` makes K a public attribute (never in the budgeted case
    through an arena handed in, which does not hold it).
    """
    if arena is not None:
        if target is not None:
            raise ValueError("give either an environment or an arena, not both: an arena brings its own rules")
        if reveal_k:
            raise ValueError("reveal_k needs the environment itself: an arena never hands out K")
        return Source(arena.rules, ArenaScorer(arena))
    if isinstance(target, Source):
        return target
    if target is None:
        raise ValueError("give an environment (an id 0-55, an Environment or custom_environment(...)) or an arena")
    env = make_env(target) if not isinstance(target, Environment) else target
    revealed = env.condition.k if reveal_k else None
    if budget is None:
        return Source(env.rules, FreeScorer(env.condition), revealed)
    return Source(env.rules, ArenaScorer(Arena(env, budget)), revealed)
