"""MCTS-N: UCT with random rollouts scored by the true outcome rule (paper Appendix E). Privileged.

The agent gets the hidden condition only through a privileged simulator: on
construction it asks its context for one (``grant_simulator("MCTS rollouts")``,
recorded by whoever grants it) and takes the simulator's reward table, the
true reward (+1/0/-1) for every (own discs, opponent discs). Every result it
takes part in must be labelled privileged.

Per move, ``n`` simulations run in one numba kernel (``agents/search/mcts_kernel.py``):
selection by UCT, ``Q + c * sqrt(ln N(parent) / n(child))`` (Eq. 20); expansion of
one untried move; a uniformly random rollout of at most ``rollout_turns`` turns (a
turn is a placement or a forced pass), scored with the reward table on the disc
counts where it stops, at the end of the game or at the cap; backup to the root.
The move with the most root visits is played, ties broken by the agent's
generator. A forced pass is a tree node with one child; turn limits (blitz) come
from the rules.

Values are win rates: a win counts 1, a draw 0.5, a loss 0. By default each
node's value is from the viewpoint of the player who moved into it, so both
players pick their own best replies (correct two-player backup).
``paper_compat=True`` reproduces the paper's public reference implementation
instead: every node is backed up from the root player's viewpoint (the
opponent's replies are then chosen to be good for the root player, an
optimistic search that a real opponent punishes), draws still worth 0.5.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from agents.base import Agent, AgentContext, choose, placements
from agents.search.mcts_kernel import mcts_search
from agents.spec import Param, register
from engine.playouts import kernel_position
from engine.protocol.observation import Observation
from engine.rules import Rules
from engine.state import PASS, State

GRANT_REASON = "MCTS rollouts"
NO_CAP = -1


class MissingSimulatorGrant(RuntimeError):
    """A privileged agent was built without a simulator grant in its context."""


class SearchResult(NamedTuple):
    """The root's children after a search: moves, visit counts and mean values (root player's win rate)."""

    moves: tuple[int, ...]
    visits: tuple[int, ...]
    values: tuple[float, ...]

    def most_visited(self) -> list[int]:
        """The moves with the highest visit count (more than one on a tie)."""
        top = max(self.visits)
        return [move for move, count in zip(self.moves, self.visits) if count == top]


def search(
    rules: Rules,
    table: np.ndarray,
    state: State,
    n: int,
    c: float = 1.4,
    rollout_turns: int = 30,
    paper_compat: bool = False,
    seed: int = 1,
) -> SearchResult:
    """Run ``n`` UCT simulations from ``state`` (mover to play) with the reward table ``table``.

    ``rollout_turns``: the rollout cap in turns (0: score the new node as it
    stands, -1: play to the end). ``seed``: the kernel's xorshift state (non-zero).
    """
    moves, visits, values = mcts_search(
        *kernel_position(rules, state),
        *rules.limit_args,
        rules.geometry.kernel_args,
        table,
        n,
        float(c),
        rollout_turns,
        paper_compat,
        np.uint64(seed),
    )
    return SearchResult(
        tuple(int(m) for m in moves),
        tuple(int(v) for v in visits),
        tuple(float(total) / int(count) if count else 0.0 for total, count in zip(values, visits)),
    )


@register(
    "mcts",
    "UCT Monte Carlo tree search with random rollouts scored by the true K (privileged: needs a simulator grant)",
    params={
        "n": Param(int, 100, "simulations per move"),
        "c": Param(float, 1.4, "UCT exploration constant"),
        "rollout_turns": Param(int, 30, "rollout cap in turns, scored by the true rule at the cap (0: no rollout, -1: no cap)"),
        "paper_compat": Param(bool, False, "back every node up from the root player's view, as the paper's reference code does"),
    },
    privileged=True,
)
class MctsAgent(Agent):
    """MCTS-N over the true outcome rule, reached through a privileged simulator grant."""

    name = "mcts"
    privileged = True

    def __init__(
        self,
        context: AgentContext,
        rng: np.random.Generator,
        n: int = 100,
        c: float = 1.4,
        rollout_turns: int = 30,
        paper_compat: bool = False,
    ) -> None:
        super().__init__(context, rng)
        _check_params(n, c, rollout_turns)
        self.n, self.c, self.rollout_turns, self.paper_compat = n, float(c), rollout_turns, bool(paper_compat)
        simulator = context.grant_simulator(GRANT_REASON) if context.grant_simulator is not None else None
        if simulator is None:
            raise MissingSimulatorGrant(
                "mcts is privileged: it needs a simulator grant (build its AgentContext with grant_simulator=..., "
                "e.g. harness.play.grants.EvaluationGrants(env).grant_simulator or Arena.grant_simulator)"
            )
        if simulator.rules != context.rules:
            raise ValueError("the simulator granted to mcts is for other rules than the agent's context")
        self.simulator = simulator
        self.table = simulator.reward_table()
        self.last_search: SearchResult | None = None

    def act(self, observation: Observation) -> int:
        """The most visited root move after ``n`` simulations (PASS when forced; no search with one move)."""
        if observation.must_pass:
            return PASS
        legal = placements(observation)
        if len(legal) == 1:
            return legal[0]
        seed = int(self.rng.integers(1, 2**63))
        self.last_search = search(self.rules, self.table, observation.state, self.n, self.c, self.rollout_turns, self.paper_compat, seed)
        return choose(self.rng, self.last_search.most_visited())


def _check_params(n: int, c: float, rollout_turns: int) -> None:
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"mcts:n={n!r}: give a positive number of simulations per move")
    if isinstance(c, bool) or not isinstance(c, int | float) or not (c >= 0 and math.isfinite(c)):
        raise ValueError(f"mcts:c={c!r}: give a non-negative exploration constant")
    if isinstance(rollout_turns, bool) or not isinstance(rollout_turns, int) or rollout_turns < NO_CAP:
        raise ValueError(f"mcts:rollout_turns={rollout_turns!r}: give a number of turns >= 0, or -1 for no cap")
