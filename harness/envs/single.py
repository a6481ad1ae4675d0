"""One game at a time on the batch kernels: what the PettingZoo and Gymnasium environments step.

:class:`SingleGame` plays placements (a player without a move is passed inside the
kernel), scores the finished game through the source's scorer (the budgeted arena or
free experimentation), and shows the position from either colour's point of view as the
reference format: float32 planes ``[3, H, W]`` (own, opponent, obstacle) and an int8
mask of length ``H * W``. It also owns the spaces and the pictures, so both environments
describe a game the same way; :class:`GameFace` is what the three faces (AEC, parallel,
Gymnasium) share: how they are built from a source, the budget, and rendering;
:class:`TwoAgentFace` adds what the two PettingZoo faces share: their constructor, the
two agents and their spaces.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from engine import batch
from engine.environments import Environment
from engine.notation import format_move
from engine.protocol.arena import DEFAULT_BUDGET, AdaptationArena
from engine.rules import IllegalMoveError
from engine.state import BLACK, COLOUR_NAMES
from harness.envs.games import GameArrays
from harness.envs.render import board_image, board_text
from harness.envs.scoring import Source, open_source

RENDER_MODES = ("ansi", "rgb_array")
AGENTS = list(COLOUR_NAMES)  # ["black", "white"]: the PettingZoo faces' agents


def planes_space(rows: int, cols: int) -> spaces.Box:
    """The reference format's observation planes: own, opponent, obstacle."""
    return spaces.Box(0.0, 1.0, (3, rows, cols), dtype=np.float32)


def mask_space(cells: int) -> spaces.Box:
    return spaces.Box(0, 1, (cells,), dtype=np.int8)


class SingleGame:
    """A game on the source's rules; ``reset()`` starts one (refused once a budget is spent)."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.rules = source.rules
        self._arrays = GameArrays(source.rules, 1, parallel=False, restart=False)
        self._planes = self._arrays.planes[0]  # views into the kernel's arrays, rewritten in place by every step
        self._mask = self._arrays.masks[0]
        self._no_moves = np.zeros(self.rules.layout.cells, dtype=np.int8)
        self.rewards: tuple[int, int] | None = None
        self.over = False
        self.to_move = 0  # the colour to move (at the end: the colour that would have moved)
        self.started = False

    def reset(self) -> None:
        """A new game (raises BudgetExhausted when the budget has no game left)."""
        self.source.scorer.check_open()
        self._arrays.reset()
        self.rewards = None
        self.over = False
        self.to_move = int(self._arrays.colour[0])
        self.started = True

    def mask(self) -> np.ndarray:
        """The mover's legal placements (int8, all zeros once the game is over)."""
        return self._no_moves.copy() if self.over else self._mask.copy()

    def mask_of(self, colour: int) -> np.ndarray:
        """``colour``'s legal placements: the mover's mask; all zeros for the other colour and once the game is over."""
        return self._mask.copy() if colour == self.to_move and not self.over else self._no_moves.copy()

    def planes(self, colour: int) -> np.ndarray:
        """The position from ``colour``'s point of view: float32 [3, H, W] (own, opponent, obstacle)."""
        if colour == self.to_move:
            return self._planes.copy()
        return self._planes[[1, 0, 2]]

    def play(self, action: int) -> bool:
        """The mover places at ``action`` (a flat index); True when that ended the game (then scored)."""
        if self.over:
            raise IllegalMoveError("the game is over: reset() starts the next one")
        arrays = self._arrays
        status = arrays.step_one(action)
        self.to_move = int(arrays.colour[0])
        if status == batch.RUNNING:
            return False
        if status == batch.ILLEGAL:
            raise IllegalMoveError(self.illegal_reason(action))
        self.rewards = self.source.scorer.score(arrays.moves(0), int(arrays.black_out[0]), int(arrays.white_out[0]))
        self.over = True
        return True

    def abandon(self) -> None:
        """End the game unfinished: not scored, not counted (an illegal action in the Gymnasium env)."""
        self.rewards = (0, 0)
        self.over = True

    def is_legal(self, action: object) -> bool:
        if self.over or not isinstance(action, int | np.integer):
            return False
        index = int(action)
        return 0 <= index < len(self._mask) and bool(self._mask[index])

    def illegal_reason(self, action: object) -> str:
        layout = self.rules.layout
        legal = ", ".join(format_move(int(m), layout) for m in np.flatnonzero(self._arrays.masks[0])) or "none"
        shown = (
            format_move(int(action), layout) if isinstance(action, int | np.integer) and 0 <= int(action) < layout.cells else repr(action)
        )
        return f"illegal action {shown} ({action!r}) for {COLOUR_NAMES[self.to_move]}: legal placements are {legal}"

    def moves(self) -> list[int]:
        """The game's moves so far (PASS = -1 for a forced pass)."""
        return self._arrays.moves(0)

    def _colour_planes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        view = self._arrays.planes[0]
        own, opp = (view[0], view[1]) if self.to_move == BLACK else (view[1], view[0])
        return own, opp, view[2]

    def ansi(self) -> str:
        black, white, obstacles = self._colour_planes()
        return board_text(black, white, obstacles, None if self.over else COLOUR_NAMES[self.to_move])

    def rgb(self) -> np.ndarray:
        return board_image(*self._colour_planes())


class GameFace:
    """What the environments built on one :class:`SingleGame` share: the source, the budget, the pictures."""

    render_mode: str | None

    def _open(
        self,
        env: int | Environment | Source | None,
        arena: AdaptationArena | None,
        budget: int | None,
        reveal_k: bool,
        render_mode: str | None,
    ) -> Source:
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode={render_mode!r}: choose one of {', '.join(RENDER_MODES)} or None")
        source = open_source(env, arena=arena, budget=budget, reveal_k=reveal_k)
        self._game = SingleGame(source)
        self.render_mode = render_mode
        self.budgeted = source.budgeted
        self.revealed_k = source.revealed_k
        self.layout = source.rules.layout
        return source

    @property
    def games_played(self) -> int:
        """Finished games scored by this environment's scorer (for a budgeted one: the arena's ledger count)."""
        return self._game.source.scorer.games_played

    @property
    def budget(self) -> int | None:
        """The game budget, or None for free experimentation."""
        return self._game.source.scorer.budget

    def render(self) -> str | np.ndarray | None:
        """The board: text for ``"ansi"``, an image for ``"rgb_array"``; None before the first game or without a mode."""
        if self.render_mode is None or not self._game.started:
            return None
        return self._game.ansi() if self.render_mode == "ansi" else self._game.rgb()


class TwoAgentFace(GameFace):
    """What the PettingZoo faces (AEC and parallel) share: the constructor, the agents ``black`` and ``white``, their spaces."""

    agents: list[str]

    def __init__(
        self,
        env: int | Environment | Source | None = None,
        *,
        arena: AdaptationArena | None = None,
        budget: int | None = DEFAULT_BUDGET,
        reveal_k: bool = False,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        self._open(env, arena, budget, reveal_k, render_mode)
        self.possible_agents = list(AGENTS)
        self.agents = []
        layout = self.layout
        space = spaces.Dict({"observation": planes_space(layout.rows, layout.cols), "action_mask": mask_space(layout.cells)})
        self.observation_spaces = {agent: space for agent in AGENTS}
        self.action_spaces = {agent: spaces.Discrete(layout.cells) for agent in AGENTS}
        self._ready()

    def _ready(self) -> None:
        """What a face sets up once its game and spaces exist (nothing by default)."""

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    def _seed_spaces(self, seed: int | None) -> None:
        """Seed the action spaces (``seed`` for black, ``seed + 1`` for white), unless ``seed`` is None."""
        if seed is not None:
            for index, agent in enumerate(AGENTS):
                self.action_spaces[agent].seed(seed + index)

    def _observation(self, colour: int) -> dict[str, np.ndarray]:
        """``colour``'s observation in the reference format (its mask all zeros unless it is to move)."""
        return {"observation": self._game.planes(colour), "action_mask": self._game.mask_of(colour)}
