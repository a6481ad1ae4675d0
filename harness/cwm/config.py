"""The ``cwm`` agent's settings: exploration, model calls, planning (:mod:`harness.cwm.agent` uses them)."""

from __future__ import annotations

from dataclasses import dataclass, field

from harness.cwm.engine_path import TRANSITIONS
from harness.cwm.finalists import RejectionConfig
from harness.cwm.refine import RefineConfig

PLANNERS = ("mcts", "minimax")


@dataclass(frozen=True)
class CwmConfig:
    """Exploration, model calls, planning."""

    explore_games: int = 20  # exploration games at most (random, then steered) before the first program
    explore_random: int = 8  # of which uniformly random (the rest steered towards informative shares while any is left)
    holdout_every: int = 4  # every n-th random exploration game is held out (0: none)
    heldout_transitions: int = 10_000  # random-play transitions of the true engine in the held-out set
    max_calls: int = 12  # model calls over the whole adaptation
    simulations: int = 1000  # MCTS simulations per move of a frozen (evaluation) game
    adapt_simulations: int = 50  # per move of the self-play games after exploration (they look for surprises)
    max_plies: int = 200
    uct_c: float = 1.4
    planner: str = "mcts"  # or "minimax": iterative-deepening alpha-beta on the program
    depth: int = 4  # minimax: the deepest iteration
    max_nodes: int = 20_000  # minimax: positions per move
    leaf_playouts: int = 4  # minimax: random playouts valuing a leaf cut by depth (when the program has no value())
    rejection: RejectionConfig = field(default_factory=RejectionConfig)
    refine: RefineConfig = field(default_factory=RefineConfig)
    transitions: str = "engine"  # plan on the engine with the program's returns table once it passes every transition test
    spot_check: float = 0.1  # engine path: the share of moves whose transition is checked against the program
    hint_level: str = "none"  # for the shared system prompt of ModelAgent (the cwm prompts hold their own rules)

    def __post_init__(self) -> None:
        if (
            min(self.explore_games, self.explore_random, self.holdout_every) < 0
            or min(self.max_calls, self.simulations, self.adapt_simulations) < 1
        ):
            raise ValueError("cwm: explore_games, explore_random, holdout_every >= 0; max_calls, simulations, adapt_simulations >= 1")
        if self.planner not in PLANNERS:
            raise ValueError(f"cwm: planner {self.planner!r}: choose one of {', '.join(PLANNERS)}")
        if self.transitions not in TRANSITIONS:
            raise ValueError(f"cwm: transitions {self.transitions!r}: choose one of {', '.join(TRANSITIONS)}")
        if not 0.0 <= self.spot_check <= 1.0:
            raise ValueError(f"cwm: spot_check {self.spot_check!r}: give a share of moves from 0 to 1")
        if min(self.depth, self.max_nodes) < 1 or self.leaf_playouts < 0:
            raise ValueError("cwm: depth and max_nodes >= 1, leaf_playouts >= 0")
