"""Tournament plans: pairings of agent specs, environments, games and seeds, and playing one planned game.

A tournament is a :class:`TournamentPlan`: pairings (A, B) of canonical agent
specs, environment ids, a number of games per pairing and environment, and a
seed. Game ``i`` of a pairing on an environment has A as black when ``i`` is
even and as white when it is odd. Its seed is derived from (seed, env id, the
pairing's two specs, i) alone, so the results do not depend on the number of
workers nor on what else the tournament contains: ``arena match A B`` with the
same seed plays exactly the games of pairing (A, B) in a tournament.

Every game builds fresh agents from their specs (``make_agent``) with
generators spawned from the game seed: ``SeedSequence(game_seed).spawn(2)``, A's
then B's. Where they are built depends on the plan's mode:

- referee mode (``referee=True``, the default): the game loop, the condition (K)
  and the rewards stay in this process (a tournament worker), and every agent the
  registry does not mark privileged is built and asked for its moves in a player
  process (:mod:`harness.referee.seats`), one per side, that is given only the
  public rules, the spec and the seed, never the condition, the environment id or
  its name;
- in-process (``referee=False``, UNENFORCED, for quick experiments): both agents
  are built here, where a cheating agent could reach K.

The same seeds and colours make the same games in both modes. Agents the registry
marks privileged (MCTS) are always built here, with a simulator grant from their
own :class:`~harness.play.grants.EvaluationGrants` on the environment; what they
used is recorded with the game (:class:`GameLine`), and every game with a
privileged agent is marked privileged. Running a plan over worker processes into
a run directory is :mod:`harness.tournaments.tournament`.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from agents.base import Agent, AgentContext
from agents.spec import AgentSpecError
from engine import EnvKey, make_env
from engine.env_spec import seed_word
from engine.protocol.arena import PrivilegedUsage
from engine.protocol.policy import Policy
from engine.state import BLACK, WHITE
from harness.play.game import play_game
from harness.play.grants import EvaluationGrants
from harness.referee.seats import AgentFailed, RemotePlayer, Seats
from harness.registry.outside import referee_side
from harness.registry.specs import canonical_spec, is_outside, make_agent, parse_spec

GAME_LINE_SCHEMA = 1
MANIFEST_SCHEMA = 1
RUNS_ROOT = Path("runs")


class TournamentError(ValueError):
    """A tournament that cannot be run as asked (no pairings, a repeated agent, a used run directory, ...)."""


class GameFailed(RuntimeError):
    """A game stopped with an error (an agent crashed or proposed a bad move); the message says which game."""


@dataclass(frozen=True)
class Pairing:
    """Agent A against agent B (canonical specs); A is black in even-numbered games."""

    a: str
    b: str

    @property
    def key(self) -> int:
        """A stable 64-bit number for the pair (A, B), one of the inputs of every game seed."""
        return int.from_bytes(hashlib.sha256(f"{self.a}\n{self.b}".encode()).digest()[:8], "big")


@dataclass(frozen=True)
class GameTask:
    """One game to play: picklable, so it can be sent to a worker process."""

    env_id: EnvKey
    pairing_index: int
    pairing: Pairing
    game_index: int
    seed: int
    referee: bool = True  # unprivileged agents in player processes (False: in this process, UNENFORCED)

    @property
    def a_colour(self) -> int:
        return BLACK if self.game_index % 2 == 0 else WHITE

    @property
    def game_seed(self) -> int:
        """A 64-bit seed from (tournament seed, env id, pairing, game index) only."""
        sequence = np.random.SeedSequence([self.seed, seed_word(self.env_id), self.pairing.key, self.game_index])
        return int(sequence.generate_state(1, np.uint64)[0])


@dataclass(frozen=True)
class TournamentPlan:
    """Pairings x environments x games, and the seed they are all derived from."""

    pairings: tuple[Pairing, ...]
    env_ids: tuple[EnvKey, ...]
    games: int
    seed: int
    referee: bool = True  # unprivileged agents in player processes (False: in-process, UNENFORCED)

    @property
    def agents(self) -> tuple[str, ...]:
        """Every spec taking part, in first-appearance order."""
        return tuple(dict.fromkeys(spec for p in self.pairings for spec in (p.a, p.b)))

    @property
    def privileged_agents(self) -> tuple[str, ...]:
        return tuple(spec for spec in self.agents if is_privileged(spec))

    @property
    def unadapted_agents(self) -> tuple[str, ...]:
        """Adaptive agents, which play here without the game budget they would adapt within."""
        return tuple(spec for spec in self.agents if is_adaptive(spec))

    @property
    def total_games(self) -> int:
        return len(self.pairings) * len(self.env_ids) * self.games

    def tasks(self) -> Iterator[GameTask]:
        """Every game, environment by environment, pairing by pairing, in game order."""
        for env_id in self.env_ids:
            for index, pairing in enumerate(self.pairings):
                for game in range(self.games):
                    yield GameTask(env_id, index, pairing, game, self.seed, self.referee)


class GameLine(BaseModel):
    """One finished game as written to ``games.jsonl``.

    ``moves`` are flat indices ``row * cols + col`` with PASS = -1, forced passes
    included; ``rewards`` is (black, white). ``game_seed`` alone rebuilds the
    agents' generators (``SeedSequence(game_seed).spawn(2)``: A's, then B's).
    ``simulator`` holds the privileged usage of each privileged side ("a"/"b").
    ``seconds`` is the game's wall time, the only field that differs between
    two runs of the same plan.
    """

    model_config = ConfigDict(frozen=True)

    schema_version: int = GAME_LINE_SCHEMA
    env_id: EnvKey
    env_name: str
    pairing: int
    game: int
    agent_a: str
    agent_b: str
    a_colour: Literal["black", "white"]
    black: str
    white: str
    moves: tuple[int, ...]
    plies: int
    black_discs: int
    white_discs: int
    rewards: tuple[int, int]
    a_reward: int
    seed: int
    game_seed: int
    privileged: bool
    simulator: dict[str, PrivilegedUsage] = {}
    seconds: float
    calls: tuple[dict[str, Any], ...] = Field(default=(), exclude=True)  # model agents' calls: calls.jsonl, not here


def round_robin(specs: Sequence[str]) -> tuple[Pairing, ...]:
    """Every pair of distinct agents once, the earlier-listed one as A."""
    agents = _canonical_list(specs, "--agents")
    if len(agents) < 2:
        raise TournamentError("a round robin needs at least two agents (or give --vs to play them against opponents)")
    return tuple(Pairing(a, b) for i, a in enumerate(agents) for b in agents[i + 1 :])


def versus(specs: Sequence[str], opponents: Sequence[str]) -> tuple[Pairing, ...]:
    """Each agent (as A) against each opponent (as B); an agent may meet itself."""
    agents = _canonical_list(specs, "--agents")
    rivals = _canonical_list(opponents, "--vs")
    return tuple(Pairing(a, b) for a in agents for b in rivals)


def make_plan(pairings: Sequence[Pairing], env_ids: Sequence[EnvKey], games: int, seed: int, *, referee: bool = True) -> TournamentPlan:
    """A checked plan: canonical specs, environments that exist, games >= 1, seed >= 0, agents that can be built.

    Privileged agents are built once here; so are the others in-process
    (``referee=False``). Under the referee an unprivileged agent is never built in
    this process (which holds K): :func:`check_agents_on_seat` builds it in a player
    process before the run writes anything.
    """
    if not pairings:
        raise TournamentError("no pairings to play")
    if isinstance(games, bool) or not isinstance(games, int) or games < 1:
        raise TournamentError(f"games={games!r}: give 1 or more games per pairing and environment")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise TournamentError(f"seed={seed!r}: give a whole number 0 or more")
    if not env_ids:
        raise TournamentError("no environments to play on")
    ids = tuple(dict.fromkeys(env_ids))
    for env_id in ids:
        make_env(env_id)  # raises UnknownEnvironmentError with the valid ids
    canonical = tuple(Pairing(canonical_spec(p.a), canonical_spec(p.b)) for p in pairings)
    plan = TournamentPlan(canonical, ids, games, seed, referee)
    check_agents(plan.agents, ids[0], unprivileged=not referee)
    return plan


def check_agents(specs: Sequence[str], env_id: EnvKey, *, unprivileged: bool = True) -> None:
    """Build each agent once on ``env_id``: a value its constructor rejects (``mcts:n=0``) is an AgentSpecError.

    ``unprivileged=False``: only the privileged ones (the others are checked on a
    player process, :func:`check_agents_on_seat`). In a referee's process an agent
    from outside the project is only parsed here: it is built in its agent process,
    which reports a build failure as the pair's failure.
    """
    env = make_env(env_id)
    for spec in specs:
        privileged = is_privileged(spec)
        if not (privileged or unprivileged) or (referee_side() and is_outside(spec)):
            continue
        grant = EvaluationGrants(env).grant_simulator if privileged else None
        try:
            make_agent(spec, AgentContext(env.rules, grant_simulator=grant), np.random.default_rng(0))
        except AgentSpecError:
            raise
        except (ValueError, TypeError) as error:
            raise AgentSpecError(_cannot_build(spec, str(error))) from None


def check_agents_on_seat(plan: TournamentPlan, seats: Seats) -> None:
    """Build each unprivileged agent of the plan once in side A's player process for it (the public rules only).

    An agent that cannot be built there is an AgentSpecError, as in :func:`check_agents`.
    """
    rules = make_env(plan.env_ids[0]).rules
    for spec in plan.agents:
        if not is_privileged(spec):
            try:
                seats.for_spec("a", spec).new_game(rules, spec, 0, 0)
            except AgentFailed as failure:
                raise AgentSpecError(_cannot_build(spec, failure.detail)) from None


def _cannot_build(spec: str, text: str) -> str:
    for prefix in ("ValueError: ", "TypeError: ", "AgentSpecError: "):
        text = text.removeprefix(prefix)
    if not text.startswith(spec.partition(":")[0] + ":"):  # the agent's own message may name it already
        text = f"agent {spec!r} cannot be built: {text}"
    if "unknown agent" in text:
        text += (
            "; player processes know the project's agents, installed ones and --plugin ones, not agents "
            "registered at run time in this process (use a plugin, or --in-process)"
        )
    return text


def _canonical_list(specs: Sequence[str], option: str) -> list[str]:
    if not specs:
        raise TournamentError(f"{option}: give at least one agent spec (`arena agents` lists them)")
    agents: list[str] = []
    for spec in specs:
        canonical = canonical_spec(spec)  # raises AgentSpecError listing the valid names/parameters
        if canonical in agents:
            raise TournamentError(f"{option}: agent {canonical!r} is listed twice")
        agents.append(canonical)
    return agents


def is_privileged(spec: str) -> bool:
    """Whether the registry marks the agent privileged (it needs the true simulator)."""
    return parse_spec(spec)[0].privileged


def is_adaptive(spec: str) -> bool:
    """Whether the agent learns within a game budget (``adapt``): a model-driven agent, or a class overriding it.

    A match or tournament gives no budget, so such an agent plays unadapted there.
    """
    entry = parse_spec(spec)[0]
    factory = entry.factory
    own_adapt = (
        isinstance(factory, type) and issubclass(factory, Agent) and (factory.adapt is not Agent.adapt or hasattr(factory, "adapt_async"))
    )
    return entry.model_driven or own_adapt


def play_task(task: GameTask, seats: Seats | None = None) -> GameLine:
    """Play one game of the plan and return its line; errors become :class:`GameFailed`, naming game and agent.

    Under the referee (``task.referee``) the unprivileged agents play from the
    player processes of ``seats`` (side A on ``seats.a``, B on ``seats.b``).
    """
    try:
        if task.referee and seats is None:
            raise ValueError("a refereed game needs the seats of its player processes")
        return _play(task, seats)
    except Exception as error:  # noqa: BLE001 - any failure is re-raised as a picklable error naming the game
        where = f"env {task.env_id}, {task.pairing.a} vs {task.pairing.b}, game {task.game_index}"
        raise GameFailed(f"{where}: {type(error).__name__}: {error}") from None


def _play(task: GameTask, seats: Seats | None) -> GameLine:
    env = make_env(task.env_id)
    seeds = np.random.SeedSequence(task.game_seed).spawn(2)
    grants: dict[str, EvaluationGrants] = {}
    agents: list[Policy] = []
    calls: dict[str, list[dict[str, Any]]] = {"a": [], "b": []}  # model agents' calls (spec-built ones report them)
    for stream, (side, spec) in enumerate((("a", task.pairing.a), ("b", task.pairing.b))):
        if is_privileged(spec):
            grants[side] = EvaluationGrants(env)
            context = AgentContext(env.rules, grant_simulator=grants[side].grant_simulator, record_call=calls[side].append)
            agents.append(make_agent(spec, context, np.random.default_rng(seeds[stream])))
        elif task.referee and seats is not None:
            colour = "black" if (task.a_colour == BLACK) == (side == "a") else "white"
            who = f"{side.upper()}, {colour}"
            agents.append(seats.for_spec(side, spec).new_game(env.rules, spec, task.game_seed, stream, who, side))
        else:
            agents.append(make_agent(spec, AgentContext(env.rules, record_call=calls[side].append), np.random.default_rng(seeds[stream])))
    a, b = agents
    black, white = (a, b) if task.a_colour == BLACK else (b, a)
    started = time.perf_counter()
    record = play_game(env.rules, env.condition, black, white)
    seconds = time.perf_counter() - started
    simulator = {side: grantor.usage for side, grantor in grants.items()}
    for side, agent in zip(("a", "b"), agents):
        calls[side].extend(getattr(agent, "calls", []) if isinstance(agent, RemotePlayer) else [])
    game_calls = tuple(
        {"side": side, "agent": spec, **call} for side, spec in (("a", task.pairing.a), ("b", task.pairing.b)) for call in calls[side]
    )
    return GameLine(
        env_id=env.id,
        env_name=env.name,
        pairing=task.pairing_index,
        game=task.game_index,
        agent_a=task.pairing.a,
        agent_b=task.pairing.b,
        a_colour="black" if task.a_colour == BLACK else "white",
        black=task.pairing.a if task.a_colour == BLACK else task.pairing.b,
        white=task.pairing.b if task.a_colour == BLACK else task.pairing.a,
        moves=record.moves,
        plies=record.plies,
        black_discs=record.black,
        white_discs=record.white,
        rewards=record.rewards,
        a_reward=record.reward(task.a_colour),
        seed=task.seed,
        game_seed=task.game_seed,
        privileged=bool(grants),
        simulator=simulator,
        seconds=round(seconds, 6),
        calls=game_calls,
    )
