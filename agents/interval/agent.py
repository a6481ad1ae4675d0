"""``interval``: identify K exactly from terminal rewards, then play Minimax for the belief's outcome.

Adaptation (:meth:`IntervalAgent.adapt`) plays self-play *probe* games, steered
so that the larger final share ``m`` lands in the middle of the shares whose
outcome is still uncertain (:func:`agents.interval.belief.probe_target`): the
outcome then says K > m, K < 1 - m or neither, and the feasible set
(:class:`~agents.interval.belief.KInterval`) shrinks by about half. Steering:
the agent plays both colours, each searching with the utility ``-|own share -
its target|`` (the exact solver near the end) and weights that make the holder
of the target majority gain discs and the other give them (for an extreme
target, one of a few "dominate" styles, cycled; :func:`steering_weights`).
Probes alternate colours; once probes stop teaching, they open with a few
random plies for variety. Probing stops when no achievable share is
informative, after ``patience`` probes in a row taught nothing, once the arena
has played ``probes`` games, or at the end of the budget; the rest of the
budget is left unused.

Playing (:meth:`IntervalAgent.act`): the terminal utility is the belief's
``P(win) - P(loss)`` (:func:`~agents.interval.belief.outcome_table`) plus a small
tie-break (``margin``) towards the middle of the best shares. The midgame is an
alpha-beta search of at least ``depth`` plies (``limit_depth`` under a turn
limit; deeper while within ``nodes`` nodes) with evaluation weights chosen by the
winning shares (:func:`play_weights`); with at most ``endgame`` empty cells, or
``limit_plies`` placements left under a turn limit, the game is solved exactly.
Unadapted, the belief is symmetric (every utility 0) and the agent plays the
neutral evaluation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from fractions import Fraction
from types import MappingProxyType
from typing import Any

import numpy as np

from agents.base import Agent, AgentContext, choose, forced_move, placements
from agents.interval.belief import HALF, KInterval, outcome_table, probe_target
from agents.search.api import SearchResult, SearchTables, empties, search_position, solve_position
from agents.search.endgame import ratio_utility
from agents.search.features import DEFAULT_WEIGHTS, FEATURES, weights_array
from agents.spec import Param, check_whole_numbers, register
from engine.protocol.belief import Belief
from engine.protocol.observation import Observation
from engine.rules import Rules
from engine.state import State

# Evaluation weights by the shares that win (see play_weights); weights_array fills in the rest from DEFAULT_WEIGHTS.
NEUTRAL_WEIGHTS = MappingProxyType({"discs": 0.0})
BROAD_MAJORITY_WEIGHTS = MappingProxyType(dict(DEFAULT_WEIGHTS))
MODERATE_MAJORITY_WEIGHTS = MappingProxyType({"discs": -1.0, "stability": 0.0})
NARROW_MAJORITY_WEIGHTS = MappingProxyType({"discs": -3.0, "stability": -3.0, "corners": 6.0, "positional": 6.0})
NARROW_MINORITY_WEIGHTS = MappingProxyType({"discs": -3.0, "stability": -3.0, "corners": 0.0, "positional": 0.0})
BROAD_MINORITY_WEIGHTS = MappingProxyType({"discs": -6.0, "stability": -6.0, "corners": -6.0, "positional": -6.0, "corner_closeness": 0.0})
LIMITED_MAJORITY_WEIGHTS = MappingProxyType({name: 10.0 if name == "discs" else 0.0 for name in FEATURES})
BROAD_SHARE = Fraction(7, 10)  # the middle of the winning shares beyond this (or below 1 - it): a broad regime
MODERATE_SHARE = Fraction(3, 5)  # a majority regime whose middle share lies below this is narrow
STEERING_GAIN = 4.0  # probe disc weight per unit of (target share - 1/2)
# Probe styles of the colour that should end with an extreme share (the other plays the negation).
DOMINATE_STYLES = (
    MappingProxyType(DEFAULT_WEIGHTS | {"discs": 5.0}),
    MappingProxyType({name: {"discs": 10.0, "mobility": 6.0}.get(name, 0.0) for name in FEATURES}),
    MappingProxyType({name: {"discs": 4.0, "corners": 12.0, "positional": 12.0, "stability": 12.0}.get(name, 0.0) for name in FEATURES}),
)


@dataclass(frozen=True, eq=False)
class PlayPlan:
    """What the agent plays for: the terminal utility table, the midgame weights, the middle of the best shares."""

    utility: np.ndarray
    weights: np.ndarray
    centre: Fraction | None


def final_total(rules: Rules) -> int:
    """Discs on the board at the end of a game that fills the board or reaches the turn limit."""
    layout = rules.layout
    start = len(layout.black) + len(layout.white)
    free = layout.playable_mask.bit_count() - start
    if rules.turn_limit is None:
        return start + free
    placements_left = rules.turn_limit * (2 if rules.turn_counting == "per_player" else 1)
    return start + min(free, placements_left)


def remaining_placements(rules: Rules, state: State) -> int:
    """At most how many placements the game has left: empty cells, or fewer under a turn limit."""
    left = empties(rules, state)
    if rules.turn_limit is None:
        return left
    placed = state.placed_black + state.placed_white
    budget = 2 * rules.turn_limit - placed if rules.turn_counting == "per_player" else rules.turn_limit - placed
    return min(left, budget)


def best_share_centre(table: np.ndarray, total: int) -> Fraction | None:
    """The mean of the shares own / ``total`` with the table's best positive value (None if none is positive)."""
    values = np.array([table[own, total - own] for own in range(total + 1)])
    best = values.max()
    if best <= 0:
        return None
    winners = [Fraction(own, total) for own in range(total + 1) if values[own] >= best - 1e-12]
    return sum(winners, Fraction(0)) / len(winners)


def play_weights(centre: Fraction | None, turn_limited: bool) -> Mapping[str, float]:
    """Midgame weights for the middle of the best shares: broad/moderate/narrow majority, broad/narrow minority.

    ``None`` (no share is favoured): neutral. Under a turn limit a broad
    majority plays for discs alone: the game stops long before positional
    advantages pay. The boundaries sit between the benchmark's conditions
    (middles 0.75, 0.65, 0.55 / 0.45, 0.35, 0.25); the weights were chosen in
    short matches against Random on all seven layouts.
    """
    if centre is None:
        return NEUTRAL_WEIGHTS
    if centre > HALF:
        if centre >= BROAD_SHARE:
            return LIMITED_MAJORITY_WEIGHTS if turn_limited else BROAD_MAJORITY_WEIGHTS
        return MODERATE_MAJORITY_WEIGHTS if centre >= MODERATE_SHARE else NARROW_MAJORITY_WEIGHTS
    return BROAD_MINORITY_WEIGHTS if centre <= 1 - BROAD_SHARE else NARROW_MINORITY_WEIGHTS


def play_plan(interval: KInterval, rules: Rules, margin: float) -> PlayPlan:
    """The belief's utility (plus ``margin`` x closeness to the best shares) and the weights it calls for."""
    cells = rules.layout.cells
    outcome = outcome_table(interval, cells)
    centre = best_share_centre(outcome, final_total(rules))
    utility = np.array(outcome)
    if centre is not None and margin > 0:
        utility += margin * (1.0 + ratio_utility(cells, float(centre)))  # in [0, margin]: closer is better
    return PlayPlan(utility, weights_array(dict(play_weights(centre, rules.turn_limit is not None))), centre)


def steering_weights(target_share: float, style: int) -> np.ndarray:
    """Probe weights for a mover aiming at ``target_share`` of the final discs.

    Near 1/2: discs only, positive for a majority, negative for a minority. For
    an extreme share: one of the :data:`DOMINATE_STYLES` (by ``style``, cycled),
    or its negation to help the other colour dominate, since disc counts alone
    do not carry a game to an extreme share, and layouts answer different styles.
    """
    if abs(target_share - 0.5) >= float(BROAD_SHARE - HALF):
        dominate = weights_array(dict(DOMINATE_STYLES[style % len(DOMINATE_STYLES)]))
        return dominate if target_share > 0.5 else -dominate
    weights = np.zeros(len(FEATURES))
    weights[FEATURES.index("discs")] = STEERING_GAIN * (target_share - 0.5)
    return weights


@dataclass(frozen=True, eq=False)
class Searcher:
    """Alpha-beta in the midgame, the exact solver near the end, for one utility table and weights.

    The midgame search starts at ``depth`` plies and goes one ply deeper while
    the next iteration is predicted (by the growth of the last one) to stay
    within ``nodes`` nodes, so small boards and short games get deeper searches
    at the same cost; ``nodes = 0`` keeps the depth fixed. Deterministic.
    """

    tables: SearchTables
    utility: np.ndarray
    weights: np.ndarray
    depth: int
    endgame: int
    limit_plies: int
    nodes: int = 0
    exact_nodes: int = 0

    def _small_tree(self, rules: Rules, state: State, remaining: int) -> bool:
        """Under a turn limit, with at most twice ``limit_plies`` placements left: whether alpha-beta's
        exact tree, about b ** (remaining / 2) for b legal moves now, should stay within ``exact_nodes``
        (short games on small boards get solved sooner)."""
        if rules.turn_limit is None or not self.exact_nodes or remaining > 2 * self.limit_plies:
            return False
        return max(2, len(rules.legal_moves(state))) ** (remaining / 2) <= self.exact_nodes

    def analyse(self, rules: Rules, state: State) -> SearchResult:
        """The search or, close enough to the end, the exact solve of ``state`` for its mover."""
        remaining = remaining_placements(rules, state)
        if remaining <= (self.endgame if rules.turn_limit is None else self.limit_plies) or self._small_tree(rules, state, remaining):
            return solve_position(rules, state, self.utility, tables=self.tables)
        depth, previous = self.depth, 0
        result = self._search(rules, state, depth)
        while self.nodes and depth < remaining:
            growth = result.nodes / previous if previous else float(len(result.moves))
            if result.nodes * max(growth, 1.0) > self.nodes:
                break
            depth, previous = depth + 1, result.nodes
            result = self._search(rules, state, depth)
        return result

    def _search(self, rules: Rules, state: State, depth: int) -> SearchResult:
        return search_position(rules, state, depth, self.weights, self.utility, tables=self.tables)

    def move(self, observation: Observation, rng: np.random.Generator) -> int:
        """A best move (ties drawn with ``rng``); a lone or forced move without a search."""
        forced = forced_move(observation)
        if forced is not None:
            return forced
        return choose(rng, self.analyse(observation.rules, observation.state).ties)


@dataclass(frozen=True)
class IntervalConfig:
    """The agent's settings (the registry parameters of ``interval``), checked on construction."""

    depth: int = 3
    endgame: int = 12
    nodes: int = 3000
    limit_depth: int = 7
    limit_plies: int = 6
    exact_nodes: int = 20_000
    probes: int = 200
    patience: int = 12
    probe_depth: int = 2
    probe_endgame: int = 10
    probe_nodes: int = 1000
    margin: float = 0.01

    def __post_init__(self) -> None:
        least = {
            "depth": 1,
            "endgame": 0,
            "nodes": 0,
            "limit_depth": 1,
            "limit_plies": 0,
            "exact_nodes": 0,
            "probes": 0,
            "patience": 1,
            "probe_depth": 1,
            "probe_endgame": 0,
            "probe_nodes": 0,
        }
        check_whole_numbers(self, least, prefix="interval:")
        if isinstance(self.margin, bool) or not isinstance(self.margin, int | float) or not 0.0 <= self.margin <= 0.5:
            raise ValueError(f"interval:margin={self.margin!r}: give a weight in [0, 0.5]")


class SteeringPolicy:
    """One colour of a probe game: ``random_plies`` random plies, then aims at ``target_share`` of the final discs."""

    def __init__(self, searcher: Searcher, rng: np.random.Generator, target_share: float, random_plies: int) -> None:
        self.searcher, self.rng, self.random_plies = searcher, rng, random_plies
        self.name = f"interval-probe:{target_share:.3f}"

    def act(self, observation: Observation) -> int:
        if observation.move_number < self.random_plies and not observation.must_pass:
            return choose(self.rng, placements(observation))
        return self.searcher.move(observation, self.rng)


PARAM_HELP = MappingProxyType(
    {
        "depth": "midgame search depth in plies (the least: see nodes)",
        "endgame": "solve exactly at or below this many empty cells",
        "nodes": "search a ply deeper while that should stay within this many nodes (0: fixed depth)",
        "limit_depth": "the least search depth under a turn limit (short games)",
        "limit_plies": "under a turn limit: solve exactly when at most this many placements remain",
        "exact_nodes": (
            "under a turn limit: also solve exactly with at most 2 x limit_plies placements left "
            "when (legal moves) ** (placements left / 2) is at most this (0: never)"
        ),
        "probes": "probe (self-play) games stop once the arena has played this many",
        "patience": "stop probing after this many probes in a row that left the interval unchanged",
        "probe_depth": "search depth of the probe games",
        "probe_endgame": "probe games: solve exactly at or below this many empty cells",
        "probe_nodes": "probe games: node budget for deeper searches (0: fixed depth)",
        "margin": "tie-break weight towards the middle of the best final shares",
    }
)


@register(
    "interval",
    "Deduces the feasible interval of K exactly from steered self-play probes; Minimax on P(win) - P(loss)",
    {item.name: Param(type(item.default), item.default, PARAM_HELP[item.name]) for item in fields(IntervalConfig)},
)
class IntervalAgent(Agent):
    """Feasible-interval identification of K, then Minimax for the belief's win-minus-loss probability.

    Public state: ``interval`` (the feasible set), ``totals`` (final disc totals
    seen, which decide the achievable shares), ``probe_games`` (games it played
    while adapting) and ``plan`` (utility and weights in force).
    """

    name = "interval"

    def __init__(self, context: AgentContext, rng: np.random.Generator, **settings: Any) -> None:
        super().__init__(context, rng)
        self.config = IntervalConfig(**settings)
        self.tables = SearchTables(self.rules.layout)
        self.interval = KInterval.everything()
        self.totals: frozenset[int] = frozenset({final_total(self.rules)})
        self.probe_games = 0
        self._plan: tuple[KInterval, PlayPlan] | None = None

    # --- knowledge -------------------------------------------------------------------------------
    def observe_game(self, record: Any) -> KInterval:
        """Narrow the feasible set with a finished game (anything with black, white, rewards); returns it."""
        self.interval = self.interval.update(record)
        self.totals = self.totals | {record.black + record.white}
        return self.interval

    def belief(self) -> Belief:
        """The feasible set, reported like the LLM agents' beliefs."""
        return self.interval.belief()

    @property
    def plan(self) -> PlayPlan:
        """The utility and weights for the current feasible set (rebuilt when it changes)."""
        if self._plan is None or self._plan[0] != self.interval:
            self._plan = (self.interval, play_plan(self.interval, self.rules, self.config.margin))
        return self._plan[1]

    # --- playing ---------------------------------------------------------------------------------
    def act(self, observation: Observation) -> int:
        """A best move for the belief's utility (search, or the exact solve near the end)."""
        config, plan = self.config, self.plan
        depth = config.depth if self.rules.turn_limit is None else config.limit_depth
        searcher = Searcher(
            self.tables, plan.utility, plan.weights, depth, config.endgame, config.limit_plies, config.nodes, config.exact_nodes
        )
        return searcher.move(observation, self.rng)

    # --- adapting --------------------------------------------------------------------------------
    def adapt(self, arena: Any, on_progress: Callable[[int], None] | None = None) -> None:
        """Probe until the feasible set is as narrow as the achievable shares allow (module docstring).

        Games already in the arena's ledger (a resumed run) are taken in first
        and count towards ``probes``. ``on_progress(games_played)`` is called
        after every probe game.
        """
        if self.frozen:
            raise RuntimeError("interval: adapt() after freeze(); build a fresh agent for a new environment")
        for record in arena.ledger.records:
            self.observe_game(record)
        unchanged = 0
        while arena.games_played < self.config.probes and arena.remaining > 0 and unchanged < self.config.patience:
            target = probe_target(self.interval, self.totals)
            if target is None:
                break
            before = self.interval
            random_plies = int(self.rng.integers(0, 2 * unchanged + 1))  # vary the games once probes stop teaching
            self.observe_game(arena.play(*self._probe_policies(float(target), arena.games_played, random_plies)))
            self.probe_games += 1
            unchanged = unchanged + 1 if self.interval == before else 0
            if on_progress is not None:
                on_progress(arena.games_played)

    def _probe_policies(self, share: float, index: int, random_plies: int) -> tuple[SteeringPolicy, SteeringPolicy]:
        """Black's and white's policies for probe ``index`` (:func:`probe_policies` with this agent's settings)."""
        return probe_policies(self.rules, self.tables, self.config, self.rng, share, index, random_plies)


def probe_policies(
    rules: Rules, tables: SearchTables, config: IntervalConfig, rng: np.random.Generator, share: float, index: int, random_plies: int
) -> tuple[SteeringPolicy, SteeringPolicy]:
    """Black's and white's policies for probe ``index``: one colour (black when even) should end with ``share``.

    Successive probes alternate the colours and cycle the steering styles (:func:`steering_weights`);
    both colours search with ``config``'s probe settings. Used by the interval agent and by any agent
    that steers self-play games towards an informative final share (the ``cwm`` agent's exploration).
    """
    black_share = share if index % 2 == 0 else 1.0 - share
    cells = rules.layout.cells
    policies = []
    for own_share in (black_share, 1.0 - black_share):
        searcher = Searcher(
            tables,
            ratio_utility(cells, own_share),
            steering_weights(own_share, index // 2),
            config.probe_depth,
            config.probe_endgame,
            config.limit_plies,
            config.probe_nodes,
        )
        policies.append(SteeringPolicy(searcher, rng, own_share, random_plies))
    return policies[0], policies[1]
