"""``arena bench paper``: what the paper's benchmark plays (the plan) and what it records per pair.

The plan: environments (default all 56; ``--quick`` one per condition family on
the smallest layout) x adaptive agents (default Adaptive Minimax, the
interval agent and PPO-2K), a game budget per pair (default 2,000), checkpoints at 5%, 25%,
50% and 100% of it (100, 500, 1,000, 2,000 games: generations 1, 5, 10, 20 of
the paper's Adaptive Minimax) where the agent plays Random and MCTS-100, and the
final evaluation against the paper's opponents (Random, PosNet, PPO-2K, MCTS-30/50/100),
``games`` each, colours alternating. Opponents that cannot be built yet (PosNet
without its weights) are left out and named. :mod:`harness.bench.paper_run`
plays the plan; :class:`EnvAgentResult` is one pair's record, one line of the
run's ``results.jsonl``; :mod:`harness.bench.paper_report` aggregates them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from agents.spec import AgentSpecError
from engine import EnvKey, make_env
from engine.condition import Condition
from engine.environments import N_CONDITIONS, N_LAYOUTS, Environment
from engine.protocol.arena import PrivilegedUsage
from engine.protocol.belief import Belief
from harness.prompting.beliefs import BeliefScore
from harness.registry.outside import referee_side
from harness.registry.specs import canonical_spec, is_outside, parse_spec, registry
from harness.tournaments.match import Tally
from harness.tournaments.plan import TournamentError, check_agents, is_privileged

SCHEMA = 1
N_ENVS = N_LAYOUTS * N_CONDITIONS
DEFAULT_AGENTS = ("adaptive-minimax", "interval", "ppo")
CHECKPOINT_FRACTIONS = (0.05, 0.25, 0.5, 1.0)  # of 2,000 games: generations 1, 5, 10, 20 of 100 games
CHECKPOINT_OPPONENTS = ("Random", "MCTS-100")
PAPER_CONDITIONS = ("K>1.0", "K=0.8", "K=0.6", "K=0.4", "K=0.2", "K<0.0", "K>1.0 (10 turns)", "K<0.0 (10 turns)")
WEIGHT_PROGRESS = (0.2, 0.4, 0.6, 0.8)  # the paper's Figures 6 and 7
WEIGHT_RHOS = tuple(float(x) for x in np.round(np.linspace(0.0, 1.0, 21), 4))
FULL = {"budget": 2000, "games": 20, "checkpoint_games": 20}
PPO_MIN_BUDGET = 1000  # the PPO-2K opponent column needs at least this many training games (--quick: left out)
QUICK = {"budget": 200, "games": 10, "checkpoint_games": 4}
# --quick: one environment per condition family, all on the smallest layout (Random Board 2, 6x8).
QUICK_ENVS = (5, 12, 26, 33, 47)
# --quick: smaller settings of the real agents, applied only to parameters the agent has and the spec leaves out.
QUICK_AGENT_PARAMS: dict[str, dict[str, Any]] = {"adaptive-minimax": {"population": 10}}


class Opponent(BaseModel):
    """An evaluation opponent: the paper's column label, its spec, whether it is privileged."""

    model_config = ConfigDict(frozen=True)

    label: str
    spec: str
    privileged: bool


class PaperPlan(BaseModel):
    """What a benchmark run plays: environments x adaptive agents, budgets, games, opponents, seed."""

    model_config = ConfigDict(frozen=True)

    schema_version: int = SCHEMA
    env_ids: tuple[EnvKey, ...]
    agents: tuple[str, ...]
    budget: int
    games: int
    checkpoint_games: int
    checkpoints: tuple[int, ...]
    opponents: tuple[Opponent, ...]
    seed: int
    quick: bool = False
    missing_opponents: tuple[str, ...] = ()  # paper opponents left out, with the reason (e.g. not registered)
    referee: bool = True  # False: agents adapt in-process, which a cheating agent can bend (reports say "unenforced")
    plugins: tuple[str, ...] = ()  # plugin sources (modules, files) the agents' processes load

    def tasks(self) -> list[PaperTask]:
        """Every (environment, agent) pair, environment by environment."""
        return [PaperTask(plan=self, env_id=env_id, agent=agent) for env_id in self.env_ids for agent in self.agents]

    @property
    def checkpoint_opponents(self) -> tuple[Opponent, ...]:
        return tuple(o for o in self.opponents if o.label in CHECKPOINT_OPPONENTS)


class PaperTask(BaseModel):
    """One (environment, agent) pair of a plan; picklable, so it can go to a worker process."""

    model_config = ConfigDict(frozen=True)

    plan: PaperPlan
    env_id: EnvKey
    agent: str
    shared_dir: str = ""  # the run's directory of shared trainings (PPO-2K: one per environment), set by the runner

    @property
    def key(self) -> tuple[EnvKey, str]:
        return (self.env_id, self.agent)


class Outcome(BaseModel):
    """The adaptive agent's games against one opponent; ``rewards`` in game order (black in even games)."""

    model_config = ConfigDict(frozen=True)

    opponent: str
    spec: str
    privileged: bool
    win: int
    draw: int
    lose: int
    rewards: tuple[int, ...]
    simulator_uses: int = 0

    @property
    def tally(self) -> Tally:
        return Tally(self.win, self.draw, self.lose)

    def percent(self, outcome: str) -> float:
        """The rate of ``outcome`` ('win', 'draw', 'lose') in percent."""
        return 100.0 * self.tally.rate(outcome)


class Checkpoint(BaseModel):
    """The agent's results at a planned game count; ``games_played`` is the ledger's count when evaluated."""

    model_config = ConfigDict(frozen=True)

    planned_games: int
    games_played: int | None = None
    source: Literal["adapting", "after adapt", "final", "not reached"] = "not reached"
    outcomes: tuple[Outcome, ...] = ()


class EnvAgentResult(BaseModel):
    """Everything recorded for one (environment, adaptive agent) pair: one line of ``results.jsonl``."""

    model_config = ConfigDict(frozen=True)

    schema_version: int = SCHEMA
    env_id: EnvKey
    env_name: str
    layout: int  # 0-6, the paper's L - 1 (-1: an environment outside the 56)
    condition: str  # the paper's label, e.g. "K=0.6" or "K>1.0 (10 turns)"; "held-out majority<0.734" outside the 56
    agent: str
    enforced: bool = True  # adapted through the referee process (False: in-process, unenforced)
    status: Literal["ok", "failed"]
    error: str | None = None
    budget: int
    games_used: int = 0
    refused_games: int = 0
    adaptation_privileged: PrivilegedUsage = PrivilegedUsage()
    adapt_seconds: float = 0.0
    checkpoint_seconds: float = 0.0
    eval_seconds: float = 0.0
    checkpoints: tuple[Checkpoint, ...] = ()
    final: tuple[Outcome, ...] = ()
    belief: Belief | None = None
    belief_score: BeliefScore | None = None
    weight_curves: dict[str, list[list[float]]] | None = None  # progress -> len(WEIGHT_RHOS) x (pos, mob, corner, disc)
    notes: tuple[str, ...] = ()

    @property
    def key(self) -> tuple[EnvKey, str]:
        return (self.env_id, self.agent)

    def outcome(self, opponent: str) -> Outcome | None:
        """The final result against the opponent labelled ``opponent``, if it was played."""
        return next((o for o in self.final if o.opponent == opponent), None)


def condition_label(condition: Condition) -> str:
    """The paper's name of a condition: ``K>1.0``, ``K<0.0``, ``K=0.8``, with `` (10 turns)`` for blitz."""
    k = float(condition.k)
    label = "K>1.0" if k > 1 else "K<0.0" if k < 0 else f"K={k:g}"
    return f"{label} ({condition.turn_limit} turns)" if condition.turn_limit else label


def env_condition_label(env: Environment) -> str:
    """:func:`condition_label` for the 56; outside them ``held-out <condition text>`` (with its turns), never pooled
    with a paper condition in the per-condition tables. Written with the pair's result, once it has finished."""
    if isinstance(env.id, int):
        return condition_label(env.condition)
    limit = f" ({env.condition.turn_limit} turns)" if env.condition.turn_limit else ""
    return f"held-out {env.condition.label}{limit}"


def paper_order(conditions: Iterable[str]) -> list[str]:
    """Condition labels in the order of the paper's tables, unknown ones last."""
    rank = {c: i for i, c in enumerate(PAPER_CONDITIONS)}
    return sorted(set(conditions), key=lambda c: (rank.get(c, len(rank)), c))


def checkpoints_for(budget: int) -> tuple[int, ...]:
    """Checkpoint game counts for a budget: 5%, 25%, 50% and 100% of it (100, 500, 1000, 2000 for 2,000)."""
    return tuple(sorted({max(1, round(budget * fraction)) for fraction in CHECKPOINT_FRACTIONS}))


def opponent_label(spec: str) -> str:
    """The paper's column name of an opponent spec (``mcts:n=30`` -> ``MCTS-30``)."""
    entry, values = parse_spec(spec)
    names = {"random": "Random", "posnet": "PosNet", "ppo": "PPO-2K", "ppo-2k": "PPO-2K"}
    return f"MCTS-{values['n']}" if entry.name == "mcts" else names.get(entry.name, canonical_spec(spec))


def paper_opponents(paper_mcts: bool = True) -> tuple[tuple[Opponent, ...], tuple[str, ...]]:
    """The paper's opponents that can be built, and why the others are left out (e.g. PosNet not there yet)."""
    mcts = ",paper_compat=true" if paper_mcts else ""
    found, missing = [], []
    for spec in ("random", "posnet", "ppo-2k", f"mcts:n=30{mcts}", f"mcts:n=50{mcts}", f"mcts:n=100{mcts}"):
        name = spec.partition(":")[0]
        if name not in registry():
            missing.append(f"{spec} (not registered)")
            continue
        try:
            check_agents([spec], 0)
        except Exception as error:  # noqa: BLE001 - e.g. a missing weights file: leave the opponent out, say why
            missing.append(f"{spec} ({type(error).__name__}: {error})")
            continue
        found.append(Opponent(label=opponent_label(spec), spec=canonical_spec(spec), privileged=is_privileged(spec)))
    return tuple(found), tuple(missing)


def with_quick_params(spec: str) -> str:
    """The spec with :data:`QUICK_AGENT_PARAMS` added where the agent has them and the spec does not set them."""
    entry = parse_spec(spec)[0]
    name, _, arguments = spec.strip().partition(":")
    given = {item.partition("=")[0].strip() for item in arguments.split(",") if item.strip()}
    extra = [f"{k}={v}" for k, v in QUICK_AGENT_PARAMS.get(entry.name, {}).items() if k in entry.params and k not in given]
    if not extra:
        return spec
    return f"{name}:" + ",".join([arguments.strip()] * bool(arguments.strip()) + extra)


def make_paper_plan(
    env_ids: Sequence[EnvKey] | None = None,
    agents: Sequence[str] | None = None,
    *,
    budget: int | None = None,
    games: int | None = None,
    checkpoint_games: int | None = None,
    seed: int = 0,
    quick: bool = False,
    paper_mcts: bool = True,
    held_out: Sequence[EnvKey] = (),
    dry_run: bool = False,
    opponents: Sequence[str] | None = None,
) -> PaperPlan:
    """A checked plan; settings left as None take the full (or ``quick``) defaults.

    ``dry_run``: a model agent asking a real model is checked by its spec only (its
    parameters), not built: a plan is estimated with no key and no network.

    ``opponents``: evaluation opponent specs instead of the paper's (checked here; labelled as
    the paper's columns where they are the paper's opponents, e.g. ``mcts:n=100`` -> MCTS-100).

    ``held_out``: environments outside the 56 (``--suite``'s entries), played after
    ``env_ids`` and compared with them in the report's generalisation table.
    """
    defaults = QUICK if quick else FULL
    budget = defaults["budget"] if budget is None else budget
    games = defaults["games"] if games is None else games
    checkpoint_games = defaults["checkpoint_games"] if checkpoint_games is None else checkpoint_games
    for name, value in (("budget", budget), ("games", games), ("checkpoint_games", checkpoint_games)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise TournamentError(f"{name}={value!r}: give 1 or more")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise TournamentError(f"seed={seed!r}: give a whole number 0 or more")
    paper_ids = QUICK_ENVS if env_ids is None and quick else range(N_ENVS) if env_ids is None else env_ids
    ids = tuple(dict.fromkeys([*paper_ids, *held_out]))
    if not ids:
        raise TournamentError("no environments to run")
    for env_id in ids:
        make_env(env_id)  # raises UnknownEnvironmentError with the valid ids
    specs = _agent_specs(DEFAULT_AGENTS if agents is None else agents, quick)
    try:
        check_agents([spec for spec in specs if not (dry_run and calls_a_model(spec))], ids[0])
    except AgentSpecError:
        raise
    except Exception as error:  # noqa: BLE001 - e.g. a missing weights file: a one-line error, not a traceback
        raise AgentSpecError(f"an agent of --agents cannot be built: {type(error).__name__}: {error}") from None
    if opponents is None:
        chosen, missing = _ppo_for_budget(*paper_opponents(paper_mcts), budget)
    else:
        chosen, missing = given_opponents(opponents, ids[0]), ()
    return PaperPlan(
        env_ids=ids,
        agents=specs,
        budget=budget,
        games=games,
        checkpoint_games=checkpoint_games,
        checkpoints=checkpoints_for(budget),
        opponents=chosen,
        seed=seed,
        quick=quick,
        missing_opponents=missing,
    )


def given_opponents(specs: Sequence[str], env_id: EnvKey) -> tuple[Opponent, ...]:
    """``--opponents``: each spec checked (built once on ``env_id``), labelled, and listed once."""
    if not specs:
        raise TournamentError("--opponents: give at least one opponent spec (`arena agents` lists them)")
    chosen: dict[str, Opponent] = {}
    for spec in specs:
        canonical = canonical_spec(spec)
        if referee_side() and is_outside(canonical):
            raise TournamentError(
                f"--opponents: {spec!r} comes from a plugin; bench paper plays its opponents in the referee's "
                "process, which never runs a plugin's code: play it with arena match or arena tournament, or as "
                "arena run's opponent"
            )
        check_agents([canonical], env_id)
        label = opponent_label(canonical)
        if label in chosen:
            raise TournamentError(f"--opponents: {spec!r} is listed twice (as {label})")
        chosen[label] = Opponent(label=label, spec=canonical, privileged=is_privileged(canonical))
    return tuple(chosen.values())


def calls_a_model(spec: str) -> bool:
    """Whether the spec's agent asks a real model (not a ``mock/...`` one): building it needs the model's key."""
    entry, values = parse_spec(spec)
    return entry.model_driven and not str(values.get("model", "")).startswith("mock/")


def _ppo_for_budget(opponents: tuple[Opponent, ...], missing: tuple[str, ...], budget: int) -> tuple[tuple[Opponent, ...], tuple[str, ...]]:
    """PPO-2K trains for the plan's budget (2,000 games in the full plan); below :data:`PPO_MIN_BUDGET` it is left out."""
    if budget >= PPO_MIN_BUDGET:
        return tuple(o.model_copy(update={"spec": f"ppo-2k:games={budget}"}) if o.label == "PPO-2K" else o for o in opponents), missing
    left_out = f"ppo-2k (a budget of {budget} games is too few to train it: {PPO_MIN_BUDGET} or more)"
    return tuple(o for o in opponents if o.label != "PPO-2K"), (*missing, left_out)


def _agent_specs(agents: Sequence[str], quick: bool) -> tuple[str, ...]:
    if not agents:
        raise TournamentError("--agents: give at least one adaptive agent spec (`arena agents` lists them)")
    specs: list[str] = []
    for spec in agents:
        canonical = canonical_spec(with_quick_params(spec) if quick else spec)
        if canonical in specs:
            raise TournamentError(f"--agents: agent {canonical!r} is listed twice")
        specs.append(canonical)
    return tuple(specs)
