"""The Othello League measure (Lucas and Runarsson 2006; Jaskowski 2014) for any agent spec.

On standard 8x8 (environment 0: more discs wins), the agent plays the Standard
WPC Heuristic player (the ``positional`` agent: Table I weights, output
negation, random ties) in epsilon-Othello: each move of *both* sides is uniformly
random with probability 0.1. ``double_games`` pairs of games, one with each
colour; a win counts 1, a draw 0.5, and the League score is the mean. Games go
through the project's game loop (every move verified), so any agent a spec
names can be measured; the result is a :class:`harness.bench.record.WinDrawLoss`
whose ``rate`` is the League score, with the normal 95% interval of the mean
points per game.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from agents.base import Agent, AgentContext
from engine.environments import make_env
from engine.protocol.observation import Observation
from harness.bench.record import WinDrawLoss
from harness.play.game import play_game
from harness.registry.specs import make_agent

LEAGUE_ENV = 0
LEAGUE_EPSILON = 0.1
LEAGUE_DOUBLE_GAMES = 50
SWH_SPEC = "positional"


class EpsilonPolicy:
    """A policy that plays uniformly random legal moves while fewer than ``opening`` discs have been placed
    in the game, then with probability ``epsilon``, else the agent's."""

    def __init__(self, agent: Agent, epsilon: float, rng: np.random.Generator, opening: int = 0) -> None:
        self.agent, self.epsilon, self.rng, self.opening = agent, epsilon, rng, opening

    def act(self, observation: Observation) -> int:
        if observation.move_number < self.opening or self.rng.random() < self.epsilon:
            return int(observation.legal_moves[int(self.rng.integers(len(observation.legal_moves)))])
        return self.agent.act(observation)


def league(
    spec: str,
    double_games: int = LEAGUE_DOUBLE_GAMES,
    seed: int = 0,
    epsilon: float = LEAGUE_EPSILON,
    on_game: Callable[[], None] | None = None,
) -> WinDrawLoss:
    """Play the League measure for ``spec`` (module docstring); ``on_game()`` after each game."""
    if double_games < 1:
        raise ValueError(f"double_games={double_games}: give 1 or more")
    if not 0 <= epsilon <= 1:
        raise ValueError(f"epsilon={epsilon}: give a probability from 0 to 1")
    env = make_env(LEAGUE_ENV)
    context = AgentContext(env.rules)
    agent = make_agent(spec, context, np.random.default_rng([seed, 1]))
    swh = make_agent(SWH_SPEC, context, np.random.default_rng([seed, 2]))
    mine = EpsilonPolicy(agent, epsilon, np.random.default_rng([seed, 3]))
    theirs = EpsilonPolicy(swh, epsilon, np.random.default_rng([seed, 4]))
    wins = draws = losses = 0
    for game in range(2 * double_games):
        agent_black = game % 2 == 0
        record = play_game(env.rules, env.condition, *((mine, theirs) if agent_black else (theirs, mine)))
        reward = record.rewards[0] if agent_black else record.rewards[1]
        wins, draws, losses = wins + (reward > 0), draws + (reward == 0), losses + (reward < 0)
        if on_game is not None:
            on_game()
    return WinDrawLoss(wins, draws, losses, interval_method="normal")
