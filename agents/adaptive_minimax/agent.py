"""Adaptive Minimax (arena paper, section 4.3 and Appendix D): alpha-beta on a utility whose weights WeightNet sets.

Utility (Eq. 13) of a position s for the agent, each sub-utility in [-1, 1]::

    U(s) = w_pos * PosScore + w_mobility * Mobility + w_corner * Corner + w_disc * discDiff

- PosScore (Eq. 14): WPC / (n_agent + n_opponent) with the layout's value table
  (:func:`table_for`: PosNet once ``agents.posnet.network`` exists, else
  ``agents.heuristic.positional.positional_table``). Exactly Eq. 14 for tables with values
  in [-1, 1] (SWH, a B.3-ensembled PosNet table); a table with a larger |value|
  is divided by it, so PosScore stays in [-1, 1]. The search's ``positional``
  feature divides WPC by a constant instead; the factor between the two depends
  only on the disc count, so it is folded into the weight table.
- Mobility (Eq. 15), Corner and discDiff (Eq. 17): the ``mobility``, ``corners``
  and ``discs`` features of ``agents.search.features``. Corner divides by the
  number of corner cells, which is Eq. 16's 4 on boards with four corners and
  keeps the value in [-1, 1] on layouts with more (No Corners has eight).

WeightNet (Eq. 18, 19) maps (progress, rho, 1 - rho) to the four weights in that
order: ``progress = (own + opp) / (rows * cols)``, ``rho = own / (own + opp)``.
It is a shallow MLP, 3 -> ``hidden`` (default 8) tanh units -> 4 linear outputs,
its parameters one flat float64 vector ``[W1 (3 x h), b1 (h), W2 (h x 4), b2 (4)]``
drawn from N(0, 1) (:data:`INIT_SCALE`) and mutated with N(0, sigma^2), sigma 0.1
by default. Outputs are linear so that a weight can turn negative (minority
conditions need a negative disc weight).

Since WeightNet sees only the disc counts of a position, each parameter vector is
turned once into a weight table over all count pairs (vectorised numpy) with the
PosScore factor folded in, and the search kernel (``agents.search.negamax``, the
one the Minimax agent uses) reads a leaf's weights from it. The agent does not
know the outcome rule, so finished games in the search are scored by U too.

Training (Appendix B, D.3) is ``agents.evolution.evolve`` through the arena:
population 2N = 100, pairs (i, i + N) play two games with colours swapped at
depth 3 (each individual with its raw WeightNet outputs; no transposition
table, which costs more than it saves at that depth), 20 generations = 2,000
games. Ties between best moves are drawn with the agent's generator, so the
whole adaptation is reproducible from its seed. After every generation the agent plays
(at depth 5) with the B.3 ensemble of its population: per count pair, the mean
of the L1-normalised WeightNet outputs (``agents.evolution.ensemble_weights``).
If the budget runs out inside a generation, that generation is dropped.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any

import numpy as np

from agents.base import Agent, AgentContext, choose, forced_move, placements
from agents.evolution import check_population, ensemble_weights, evolve
from agents.heuristic.positional import positional_table
from agents.search.api import Searcher, SearchTables
from agents.search.features import CORNERS, DISCS, FEATURES, MOBILITY, POSITIONAL
from agents.spec import Param, register, whole_number
from engine.layout import Layout
from engine.protocol.arena import BudgetExhausted
from engine.protocol.observation import Observation
from engine.state import BLACK, WHITE

UTILITY_TERMS: tuple[str, ...] = ("positional", "mobility", "corners", "discs")  # WeightNet outputs (Eq. 13)
_TERM_FEATURES = (POSITIONAL, MOBILITY, CORNERS, DISCS)  # their columns in the search's feature order
INPUTS = 3  # progress, rho, 1 - rho
INIT_SCALE = 1.0
_CHUNK = 1024  # count pairs per step when ensembling (bounds the temporary arrays)


def table_for(layout: Layout) -> np.ndarray:
    """The layout's value table for PosScore: PosNet's once ``agents.posnet.network`` exists, else the positional table."""
    if importlib.util.find_spec("agents.posnet.network") is None:
        return positional_table(layout)
    from agents.posnet.network import posnet_table

    return posnet_table(layout)


def parameter_count(hidden: int) -> int:
    """Length of a WeightNet parameter vector with ``hidden`` units."""
    return INPUTS * hidden + hidden + hidden * len(UTILITY_TERMS) + len(UTILITY_TERMS)


def weightnet(population: np.ndarray, inputs: np.ndarray, hidden: int) -> np.ndarray:
    """WeightNet outputs ``[individual, input row, term]`` for parameter rows ``population`` and rows of ``inputs``."""
    population = np.atleast_2d(population)
    if population.shape[1] != parameter_count(hidden):
        raise ValueError(
            f"WeightNet with {hidden} hidden units has {parameter_count(hidden)} parameters, got vectors of {population.shape[1]}"
        )
    n, terms = population.shape[0], len(UTILITY_TERMS)
    cut = np.cumsum([INPUTS * hidden, hidden, hidden * terms])
    w1 = population[:, : cut[0]].reshape(n, INPUTS, hidden)
    b1 = population[:, cut[0] : cut[1]]
    w2 = population[:, cut[1] : cut[2]].reshape(n, hidden, terms)
    b2 = population[:, cut[2] :]
    return np.tanh(inputs @ w1 + b1[:, None, :]) @ w2 + b2[:, None, :]


def count_pairs(layout: Layout) -> np.ndarray:
    """The (own, opp) disc counts a position can have (own + opp <= playable cells), shape ``(pairs, 2)``."""
    playable = layout.cells - len(layout.obstacles)
    own, opp = np.indices((layout.cells + 1, layout.cells + 1)).reshape(2, -1)
    keep = own + opp <= playable
    return np.stack([own[keep], opp[keep]], axis=1)


def count_inputs(layout: Layout, pairs: np.ndarray) -> np.ndarray:
    """WeightNet inputs (Eq. 18, 19) ``(progress, rho, 1 - rho)`` of (own, opp) count pairs (rho 0.5 at 0 discs)."""
    own, opp = pairs.T.astype(np.float64)
    total = own + opp
    rho = np.divide(own, total, out=np.full_like(own, 0.5), where=total > 0)
    return np.stack([total / (layout.rows * layout.cols), rho, 1.0 - rho], axis=1)


def ensemble_outputs(population: np.ndarray, inputs: np.ndarray, hidden: int) -> np.ndarray:
    """B.3: per input row, the mean of the population's L1-normalised WeightNet outputs, shape ``(rows, 4)``."""
    parts = [ensemble_weights(weightnet(population, inputs[start : start + _CHUNK], hidden)) for start in range(0, len(inputs), _CHUNK)]
    return np.concatenate(parts) if parts else np.zeros((0, len(UTILITY_TERMS)))


class UtilityTables:
    """Turns WeightNet outputs over all count pairs into the search's count-indexed weight tables."""

    def __init__(self, layout: Layout, tables: SearchTables) -> None:
        self.size = layout.cells + 1
        self.pairs = count_pairs(layout)
        self.inputs = count_inputs(layout, self.pairs)
        features = tables.features
        playable = [i for i in range(layout.cells) if layout.cell(i) not in layout.obstacles]
        bound = max(1.0, float(np.abs(features.table[playable]).max()) if playable else 0.0)
        discs = self.pairs.sum(axis=1)
        # feature "positional" = WPC / positional_norm; PosScore = WPC / (discs * bound)
        factor = features.positional_norm / (np.maximum(discs, 1) * bound)
        self.scale = np.ones((len(self.pairs), len(UTILITY_TERMS)))
        self.scale[:, 0] = np.where(discs > 0, factor, 0.0)
        own, opp = self.pairs.T
        # flat positions in the table of [own, opp, term feature], row by row as ``outputs`` is laid out
        self._flat = (((own[:, None] * self.size + opp[:, None]) * len(FEATURES)) + np.array(_TERM_FEATURES)).ravel()

    def kernel_table(self, outputs: np.ndarray) -> np.ndarray:
        """The ``(cells + 1, cells + 1, features)`` table of WeightNet ``outputs`` (a row per count pair, else 0)."""
        table = np.zeros((self.size, self.size, len(FEATURES)))
        table.reshape(-1)[self._flat] = (outputs * self.scale).reshape(-1)
        return table


class _Player:
    """A policy that searches with one weight table (a training individual, or the ensemble)."""

    def __init__(self, name: str, searcher: Searcher, depth: int, rng: np.random.Generator) -> None:
        self.name, self.searcher, self.depth, self.rng = name, searcher, depth, rng

    def act(self, observation: Observation) -> int:
        forced = forced_move(observation)
        if forced is not None:
            return forced
        result = self.searcher.search(observation.state, self.depth, legal=placements(observation))
        return choose(self.rng, result.ties)


def _whole(name: str, value: Any, least: int) -> int:
    return whole_number(name, value, least, prefix="adaptive-minimax ")


@register(
    "adaptive-minimax",
    "Alpha-beta on Eq. 13's utility, weights by WeightNet evolved through the arena (survival-only, Appendix D)",
    {
        "population": Param(int, 100, "individuals 2N (even): 2N games per generation"),
        "generations": Param(int, 20, "generations of adaptation (20 x 100 = the 2,000-game budget)"),
        "sigma": Param(float, 0.1, "mutation scale of the WeightNet parameters"),
        "train_depth": Param(int, 3, "search depth of the training games"),
        "eval_depth": Param(int, 5, "search depth when playing (the ensemble)"),
        "hidden": Param(int, 8, "WeightNet hidden units"),
    },
)
class AdaptiveMinimaxAgent(Agent):
    """Minimax with a WeightNet-weighted utility; ``adapt`` evolves the WeightNet population in the arena.

    ``value_table(layout)`` gives PosScore's flat table of cell values (default :func:`table_for`).
    """

    name = "adaptive-minimax"

    def __init__(
        self,
        context: AgentContext,
        rng: np.random.Generator,
        population: int = 100,
        generations: int = 20,
        sigma: float = 0.1,
        train_depth: int = 3,
        eval_depth: int = 5,
        hidden: int = 8,
        value_table: Callable[[Layout], np.ndarray] | None = None,
    ) -> None:
        super().__init__(context, rng)
        if _whole("population", population, 2) % 2:
            raise ValueError(f"adaptive-minimax population={population}: give an even number (pairs i, i + N)")
        if not sigma >= 0:
            raise ValueError(f"adaptive-minimax sigma={sigma!r}: give a mutation scale >= 0")
        self.generations = _whole("generations", generations, 0)
        self.train_depth = _whole("train_depth", train_depth, 1)
        self.eval_depth = _whole("eval_depth", eval_depth, 1)
        self.hidden = _whole("hidden", hidden, 1)
        self.sigma = float(sigma)
        layout = self.rules.layout
        self.tables = SearchTables(layout, positional=(value_table or table_for)(layout))
        self.utility = UtilityTables(layout, self.tables)
        self.population = INIT_SCALE * rng.standard_normal((population, parameter_count(self.hidden)))
        self.generations_done = 0
        self.games_played = 0
        self._ensemble: _Player | None = None

    def _player(self, name: str, outputs: np.ndarray, depth: int, use_tt: bool) -> _Player:
        table = self.utility.kernel_table(outputs)
        searcher = Searcher(self.rules, table, tables=self.tables, use_tt=use_tt, evaluate_finished=True)
        return _Player(name, searcher, depth, self.rng)

    def _individual(self, parameters: np.ndarray) -> _Player:
        """A training individual; no transposition table: at depth 3 it costs more than it saves."""
        outputs = weightnet(parameters, self.utility.inputs, self.hidden)[0]
        return self._player(f"{self.name}/individual", outputs, self.train_depth, use_tt=False)

    def ensemble(self) -> _Player:
        """The policy the agent plays with: the B.3 ensemble of the current population at ``eval_depth``."""
        if self._ensemble is None:
            outputs = ensemble_outputs(self.population, self.utility.inputs, self.hidden)
            self._ensemble = self._player(self.name, outputs, self.eval_depth, use_tt=True)
        return self._ensemble

    def act(self, observation: Observation) -> int:
        """A best move of the depth-``eval_depth`` search with the ensemble's weights, ties drawn at random."""
        return self.ensemble().act(observation)

    def adapt(self, arena: Any, on_progress: Callable[[int], None] | None = None) -> None:
        """Survival-only evolution of the WeightNet population through ``arena.play`` (Algorithm 1).

        After each generation the ensemble is updated and ``on_progress(arena.games_played)``
        is called. Stops when ``generations`` are done or the arena's budget runs out
        (the unfinished generation is dropped; :class:`BudgetExhausted` does not escape).
        """
        if self.frozen:
            raise RuntimeError("adaptive-minimax is frozen: adapt() after freeze() is not allowed")
        if arena.rules != self.rules:
            raise ValueError("the arena's rules (layout, turn limit) are not the ones this agent was built for")

        def play_pair(first: np.ndarray, second: np.ndarray) -> tuple[int, int]:
            a, b = self._individual(first), self._individual(second)
            as_black = arena.play(a, b).rewards[BLACK]
            self.games_played += 1
            as_white = arena.play(b, a).rewards[WHITE]
            self.games_played += 1
            return as_black, as_white

        def generation_done(_: int, population: np.ndarray) -> None:
            self.population = check_population(population)
            self.generations_done += 1
            self._ensemble = None
            if on_progress is not None:
                on_progress(arena.games_played)

        try:
            evolve(self.population, self.generations, self.sigma, self.rng, play_pair, generation_done)
        except BudgetExhausted:
            pass

    def weight_curve(self, progress: float, rhos: np.ndarray) -> np.ndarray:
        """Ensemble weights (B.3) at ``progress`` for each rho: ``(len(rhos), 4)``, columns :data:`UTILITY_TERMS`."""
        rhos = np.asarray(rhos, dtype=np.float64).reshape(-1)
        inputs = np.stack([np.full_like(rhos, float(progress)), rhos, 1.0 - rhos], axis=1)
        return ensemble_outputs(self.population, inputs, self.hidden)

    def summary(self) -> dict[str, Any]:
        """What adaptation did, and the ensemble's weights at mid-game parity (progress 0.5, rho 0.5)."""
        weights = self.weight_curve(0.5, np.array([0.5]))[0]
        return {
            "generations": self.generations_done,
            "games": self.games_played,
            "population": int(self.population.shape[0]),
            "sigma": self.sigma,
            "hidden": self.hidden,
            "weights_mid_game": {term: float(w) for term, w in zip(UTILITY_TERMS, weights)},
        }
