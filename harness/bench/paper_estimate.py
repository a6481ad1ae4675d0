"""``arena bench paper --dry-run``: what a plan will play, how long it may take, and what its model agents may cost.

Nothing is written and no model is asked:

- **counts** come from the plan (:class:`~harness.bench.paper_plan.PaperPlan`) exactly as
  :mod:`harness.bench.paper_worker` plays it: per pair, ``budget`` adaptation games, at each
  checkpoint below the budget ``checkpoint_games`` against each checkpoint opponent (the budget's
  checkpoint is the final evaluation), then ``games`` against each evaluation opponent;
- **wall time**: on the plan's first environment each agent adapts with two budgets (a fixed part
  and a per-game rate, see :func:`_adapt_seconds`), its process start through the referee is timed
  (unless ``--in-process``), then (frozen) it plays :data:`PROBE_GAMES` games against each opponent;
  the seconds are scaled by the plan's counts and the pairs spread over ``jobs`` workers.
  An opponent trained once per environment and shared by the run's pairs (PPO-2K) is built once
  here, timed on its own, and counted once per environment, not in every game against it;
  Other layouts (larger boards) and later adaptation may be slower. A model agent with a real
  model is not played (that would call it): its time is its model calls at
  ``latency_s`` a call, the opponents' search not counted;
- **model agents** (``llm-policy``, ``llm-strategist``, ``cwm`` with ``model=M``): calls, tokens and
  dollars per pair from :func:`harness.runs.estimate.estimate_run`, with the checkpoint games
  counted as evaluation games; summed over the plan's environments.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from agents.base import AgentContext
from agents.spec import AgentSpecError
from engine import EnvKey, make_env
from engine.protocol.arena import BudgetExhausted
from harness.bench.paper_plan import PaperPlan, PaperTask
from harness.bench.paper_worker import WatchedArena, shared_ppo
from harness.play.grants import EvaluationGrants
from harness.referee.agent_process import AgentJob, adapt
from harness.referee.session import AgentSession
from harness.registry.specs import make_agent, parse_spec
from harness.runs.estimate import RunEstimate, duration, estimate_run
from harness.runs.llm_config import LlmRunConfig
from harness.tournaments.match import run_match
from harness.tournaments.plan import is_privileged

PROBE_START_GAMES = 2  # adaptation budget of the untimed first adaptation (and of the referee's process start)
PROBE_SMALL_GAMES = 10  # the smaller and larger adaptation budgets timed per agent (or the plan's budget)
PROBE_ADAPT_GAMES = 40
PROBE_GAMES = 2  # games timed per (agent, opponent)
SLOW_GAME_S = 1.0  # an agent whose first game takes longer is timed on one game per opponent, without warm-ups
MODEL_AGENTS = ("llm-policy", "llm-strategist", "cwm")


class ModelCost(BaseModel):
    """A model agent's calls, tokens and dollars over every environment of the plan."""

    model_config = ConfigDict(frozen=True)

    agent: str
    model: str
    calls: int
    prompt_tokens: int
    reply_tokens: int
    cost_usd: float | None  # None: litellm's local price table does not price the model
    call_seconds: float  # per-pair wall time of the calls at latency_s, summed over the environments
    token_counter: str

    def line(self) -> str:
        cost = "unpriced (not in litellm's price table)" if self.cost_usd is None else f"${self.cost_usd:,.2f}"
        return (
            f"  {self.agent}: {self.calls:,} model calls, {self.prompt_tokens:,} prompt + {self.reply_tokens:,} "
            f"reply tokens, {cost} for {self.model} (tokens: {self.token_counter})"
        )


class PaperEstimate(BaseModel):
    """The dry run's figures: counts from the plan, measured seconds per game, model costs."""

    model_config = ConfigDict(frozen=True)

    plan: PaperPlan
    jobs: int
    probe_env: EnvKey
    adapt_seconds: dict[str, float | None]  # agent -> estimated seconds of one pair's adaptation (None: a real model)
    adapt_probe: dict[str, tuple[int, int]]  # agent -> (games the probe's adaptation played, the probe's budget)
    probe_errors: dict[str, str] = {}  # agent -> why its probe failed (a run would likely fail its pairs too)
    game_seconds: dict[str, dict[str, float | None]]  # agent -> opponent label -> seconds per game
    shared_seconds: dict[str, float] = {}  # opponent label -> seconds of its one training per environment (PPO-2K)
    model_costs: tuple[ModelCost, ...]
    latency_s: float

    @property
    def pairs(self) -> int:
        return len(self.plan.tasks())

    @property
    def checkpoints_below_budget(self) -> int:
        return sum(c < self.plan.budget for c in self.plan.checkpoints)

    @property
    def checkpoint_games_per_pair(self) -> int:
        return self.checkpoints_below_budget * len(self.plan.checkpoint_opponents) * self.plan.checkpoint_games

    @property
    def eval_games_per_pair(self) -> int:
        return len(self.plan.opponents) * self.plan.games

    def pair_seconds(self, agent: str) -> float:
        """Estimated seconds of one pair of ``agent``: measured games scaled, or model-call time where not measured."""
        cost = next((c for c in self.model_costs if c.agent == agent), None)
        if self.adapt_seconds[agent] is None:
            return cost.call_seconds / len(self.plan.env_ids) if cost else 0.0
        per_game = self.game_seconds[agent]
        seconds = self.adapt_seconds[agent] or 0.0
        seconds += sum(
            self.checkpoints_below_budget * self.plan.checkpoint_games * (per_game[o.label] or 0.0) for o in self.plan.checkpoint_opponents
        )
        seconds += sum(self.plan.games * (per_game[o.label] or 0.0) for o in self.plan.opponents)
        return seconds

    @property
    def wall_seconds(self) -> float:
        """Every pair's seconds over ``min(jobs, pairs)`` workers (at least the longest pair)."""
        per_pair = [self.pair_seconds(agent) for _env in self.plan.env_ids for agent in self.plan.agents]
        shared = len(self.plan.env_ids) * sum(self.shared_seconds.values())
        workers = max(1, min(self.jobs, len(per_pair)))
        return max((sum(per_pair) + shared) / workers, max(per_pair, default=0.0))

    def lines(self) -> list[str]:
        """The dry run's report, plain text."""
        plan = self.plan
        opponents = ", ".join(o.label + ("*" if o.privileged else "") for o in plan.opponents)
        lines = [
            f"arena bench paper --dry-run: {_count(self.pairs, 'pair')} ({_count(len(plan.env_ids), 'environment')} x "
            f"{_count(len(plan.agents), 'agent')}); nothing played for the record, nothing written",
            f"environments: {', '.join(map(str, plan.env_ids))}",
            f"agents: {', '.join(plan.agents)}",
            f"per pair: {plan.budget:,} adaptation games; {self.checkpoint_games_per_pair:,} checkpoint games "
            f"({self.checkpoints_below_budget} checkpoints at {', '.join(str(c) for c in plan.checkpoints if c < plan.budget)} "
            f"x {plan.checkpoint_games} games x {len(plan.checkpoint_opponents)} opponents); "
            f"{self.eval_games_per_pair:,} evaluation games ({plan.games} per opponent x {len(plan.opponents)}: {opponents})",
            f"in total: {self.pairs * plan.budget:,} adaptation + {self.pairs * self.checkpoint_games_per_pair:,} "
            f"checkpoint + {self.pairs * self.eval_games_per_pair:,} evaluation games",
        ]
        lines += [f"left out: {m}" for m in plan.missing_opponents]
        untimed = f" (not counting {', '.join(self.probe_errors)}: not timed)" if self.probe_errors else ""
        lines.append(f"wall time: ~{duration(self.wall_seconds)} at --jobs {self.jobs}{untimed}")
        lines += [
            f"  {label}: trained once per environment and shared by its pairs: ~{duration(seconds)} each, "
            f"~{duration(seconds * len(plan.env_ids))} in all"
            for label, seconds in self.shared_seconds.items()
        ]
        for agent in plan.agents:
            adapt_s = self.adapt_seconds[agent]
            if agent in self.probe_errors:
                lines.append(f"  {agent}: not timed: its probe failed ({self.probe_errors[agent]}); a run may fail its pairs too")
                continue
            if adapt_s is None:
                lines.append(
                    f"  {agent}: ~{duration(self.pair_seconds(agent))} a pair (model calls at "
                    f"{self.latency_s:g} s each; not played: a real model would be called)"
                )
                continue
            games = ", ".join(f"{label} {seconds:.2f}" for label, seconds in self.game_seconds[agent].items() if seconds is not None)
            played, probe = self.adapt_probe[agent]
            how = (
                f"it stopped after {played} of {probe} probe games: taken as is"
                if played < probe
                else "timed at the full budget"
                if probe == self.plan.budget
                else f"{PROBE_SMALL_GAMES} and {probe} probe games fitted to {self.plan.budget:,}"
            )
            lines.append(
                f"  {agent}: ~{duration(self.pair_seconds(agent))} a pair; adaptation ~{duration(adapt_s)} ({how}); s/game: {games}"
            )
        lines.append(
            f"how: timed adaptations with budgets of {PROBE_SMALL_GAMES} and {PROBE_ADAPT_GAMES} games in this process "
            f"{'(plus the agent process start, through the referee) ' if self.plan.referee else ''}"
            f"and {PROBE_GAMES} games (1 for a slow agent) against each opponent per agent on env {self.probe_env}, "
            "scaled by the counts above "
            "(larger layouts and later adaptation may be slower; worker start-up, report and plots not counted)"
        )
        model_agents = [a for a in plan.agents if parse_spec(a)[0].name in MODEL_AGENTS]
        if self.model_costs:
            lines.append(
                f"model calls over all {len(plan.env_ids)} environments (checkpoint games counted as evaluation; every reply usable):"
            )
            lines += [cost.line() for cost in self.model_costs]
        lines.append("model calls: none (no model agent)" if not model_agents else "opponents and non-model agents make no model calls")
        return lines


def estimate_paper(plan: PaperPlan, jobs: int, *, latency_s: float = 1.0, timer: Callable[[], float] = time.perf_counter) -> PaperEstimate:
    """The dry run of ``plan`` at ``jobs`` workers (plays a few games here; writes nothing, calls no real model)."""
    env = make_env(plan.env_ids[0])
    adapt_seconds: dict[str, float | None] = {}
    adapt_probe: dict[str, tuple[int, int]] = {}
    probe_errors: dict[str, str] = {}
    game_seconds: dict[str, dict[str, float | None]] = {}
    shared_seconds: dict[str, float] = {}
    costs = []
    shared_dir = tempfile.TemporaryDirectory(prefix="arena-estimate-")
    task = plan.tasks()[0].model_copy(update={"shared_dir": shared_dir.name})
    for agent in plan.agents:
        entry, values = parse_spec(agent)
        real_model = entry.name in MODEL_AGENTS and not str(values.get("model", "")).startswith("mock/")
        adapt_seconds[agent], game_seconds[agent] = None, {o.label: None for o in plan.opponents}
        if not real_model:
            try:
                adapt_seconds[agent], adapt_probe[agent], game_seconds[agent] = _probe(agent, env, plan, task, timer, shared_seconds)
            except Exception as error:  # noqa: BLE001 - the estimate says the agent could not be timed, and why
                probe_errors[agent] = f"{type(error).__name__}: {error}"
        if entry.name in MODEL_AGENTS:
            costs.append(_model_cost(plan, agent, entry.name, values, latency_s))
    shared_dir.cleanup()
    rows = {_shared_stem(shared_ppo(task, agent)) for agent in plan.agents} - {""}
    stems = {o.label: _shared_stem(shared_ppo(task, o.spec)) for o in plan.opponents}
    # a training shared with the adaptive ppo row is in that row's adaptation time already
    shared_seconds = {label: seconds for label, seconds in shared_seconds.items() if stems[label] not in rows}
    return PaperEstimate(
        plan=plan,
        jobs=jobs,
        probe_env=env.id,
        adapt_seconds=adapt_seconds,
        adapt_probe=adapt_probe,
        probe_errors=probe_errors,
        game_seconds=game_seconds,
        shared_seconds=shared_seconds,
        model_costs=tuple(costs),
        latency_s=latency_s,
    )


def _probe(
    agent: str, env: Any, plan: PaperPlan, task: PaperTask, timer: Callable[[], float], shared_seconds: dict[str, float]
) -> tuple[float, tuple[int, int], dict[str, float | None]]:
    """A pair's adaptation seconds, the probe's (games played, budget), and seconds per game against each opponent.

    With ``plan.referee`` (as the run plays) the agent's process is started once with a budget of
    :data:`PROBE_START_GAMES`: its start, imports and compilation are the per-pair overhead, and the
    frozen agent answers the timed evaluation games over the pipe. The adaptation itself is timed here
    (:func:`_adapt_seconds`).
    """
    overhead = 0.0
    if plan.referee:
        job = AgentJob(
            agent=agent,
            rules=env.rules,
            budget=min(PROBE_START_GAMES, plan.budget),
            seed=plan.seed,
            plugins=plan.plugins,
            privileged_condition=env.condition if is_privileged(agent) else None,
        )
        started = timer()
        session = AgentSession(env, job)
        try:
            adapted = session.adapt(lambda _played: False, lambda _agent, _played: None)
            if adapted.error is not None:
                raise AgentSpecError(f"{agent} failed while adapting on env {env.id}: {adapted.error}")
            overhead = max(0.0, timer() - started - adapted.seconds)
            per_game = session.evaluate(lambda policy: _time_games(policy, env, plan, task, timer, shared_seconds))
        finally:
            session.close()
    seconds, played, probe, policy = _adapt_seconds(agent, env, plan, timer)
    if not plan.referee:
        per_game = _time_games(policy, env, plan, task, timer, shared_seconds)
    return overhead + seconds, (played, probe), per_game


def _adapt_seconds(agent: str, env: Any, plan: PaperPlan, timer: Callable[[], float]) -> tuple[float, int, int, Any]:
    """A pair's adaptation seconds from fresh agents adapting in this process (after an untimed one compiles).

    Budgets of :data:`PROBE_SMALL_GAMES` and :data:`PROBE_ADAPT_GAMES` games give a fixed part and a
    per-game rate, scaled to the plan's budget; an agent that stops before the larger budget is taken
    as is. Returns (seconds, games played, probe budget, the adapted and frozen agent).
    """

    def timed(budget: int) -> tuple[float, int, Any]:
        arena = WatchedArena(env, budget, privileged=is_privileged(agent))
        grant = arena.grant_simulator if is_privileged(agent) else None
        policy = make_agent(agent, AgentContext(env.rules, grant_simulator=grant), np.random.default_rng(plan.seed))
        started = timer()
        try:
            adapt(policy, arena, lambda *_args, **_kwargs: None)
        except BudgetExhausted:
            pass  # a small budget: an agent that plays past it has still timed its games
        return timer() - started, arena.games_played, policy

    timed(min(PROBE_START_GAMES, plan.budget))
    small, large = min(PROBE_SMALL_GAMES, plan.budget), min(PROBE_ADAPT_GAMES, plan.budget)
    small_s, _, _ = timed(small)
    large_s, played, policy = timed(large)
    if hasattr(policy, "freeze"):
        policy.freeze()
    if played < large or large == plan.budget:
        return large_s, played, large, policy
    rate = max(0.0, large_s - small_s) / (large - small) if large > small else large_s / large
    return max(0.0, small_s - rate * small) + rate * plan.budget, played, large, policy


def _time_games(
    policy: Any, env: Any, plan: PaperPlan, task: PaperTask, timer: Callable[[], float], shared_seconds: dict[str, float]
) -> dict[str, float | None]:
    """Seconds per game of the frozen ``policy`` against each opponent.

    An opponent the run trains once per environment (``shared_ppo``) trains in a first untimed game whose
    seconds are kept in ``shared_seconds`` (once: the agents' probes share the training as a run's pairs do).

    A fast agent first plays one untimed game against each kind of opponent (compiling its search), then
    :data:`PROBE_GAMES` timed games each; a slow one (a first game over :data:`SLOW_GAME_S`) one timed game each.
    """
    per_game: dict[str, float | None] = {}
    warmed: set[str] = set()
    slow = False
    for opponent in plan.opponents:
        grants = EvaluationGrants(env)
        context = AgentContext(env.rules, grant_simulator=grants.grant_simulator if opponent.privileged else None)

        def build(rng: Any, spec: str = shared_ppo(task, opponent.spec), context: AgentContext = context) -> Any:
            return make_agent(spec, context, rng)

        kind = opponent.spec.partition(":")[0]
        if _shared_stem(shared_ppo(task, opponent.spec)) and opponent.label not in shared_seconds:
            started = timer()  # its first game trains it (then this process's cache answers, as a run's file does)
            run_match(env, lambda rng: policy, build, 1, plan.seed)
            shared_seconds[opponent.label] = timer() - started
            warmed.add(kind)

        if not slow and kind not in warmed:
            started = timer()
            run_match(env, lambda rng: policy, build, 1, plan.seed)  # untimed: compiles what the opponent's search needs
            slow = timer() - started > SLOW_GAME_S
            warmed.add(kind)
        games = 1 if slow else PROBE_GAMES
        started = timer()
        run_match(env, lambda rng: policy, build, games, plan.seed)
        per_game[opponent.label] = (timer() - started) / games
    return per_game


def _model_cost(plan: PaperPlan, agent: str, name: str, values: dict[str, Any], latency_s: float) -> ModelCost:
    """A model agent's calls, tokens and dollars summed over the plan's environments (one estimate per environment)."""
    checkpoint_games = sum(c < plan.budget for c in plan.checkpoints) * len(plan.checkpoint_opponents) * plan.checkpoint_games
    estimates: list[RunEstimate] = []
    for env_id in plan.env_ids:
        config = LlmRunConfig.model_validate(
            {
                "agent": name,
                "model": values["model"],
                "env": env_id,
                "budget": plan.budget,
                "seed": plan.seed,
                "opponents": ("random",),
                "eval_games": len(plan.opponents) * plan.games + checkpoint_games,
                "concurrency": 1,
                **({"hint": values["hint"]} if "hint" in values else {}),
                **({"cwm_calls": values["calls"]} if name == "cwm" else {}),
            }
        )
        estimates.append(estimate_run(config, latency_s=latency_s))
    priced = [e.cost_usd for e in estimates]
    return ModelCost(
        agent=agent,
        model=values["model"],
        calls=sum(e.calls for e in estimates),
        prompt_tokens=sum(e.prompt_tokens for e in estimates),
        reply_tokens=sum(e.reply_tokens for e in estimates),
        cost_usd=None if any(c is None for c in priced) else sum(c for c in priced if c is not None),
        call_seconds=sum(e.wall_s for e in estimates),
        token_counter=estimates[0].token_counter,
    )


def _shared_stem(spec: str) -> str:
    """The file stem of a spec's shared training (``shared=`` is its last value, set by ``shared_ppo``); "" if none."""
    return spec.partition("shared=")[2]


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'s' if n != 1 else ''}"
