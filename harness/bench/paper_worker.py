"""The ``arena bench paper`` worker: one (environment, adaptive agent) pair, adapted, checkpointed, evaluated.

By default (``plan.referee``) the agent runs in its own process and adapts
through the referee (:mod:`harness.referee`), which holds K and the ledger here;
checkpoint and final evaluations are played here, with the opponents on the
referee's side and a frozen copy of the agent answering over the pipe. With
``referee=False`` the agent adapts through an in-process :class:`Arena` (quick
experiments; a cheating agent could reach K, so results say ``enforced: false``).
Either way: a fresh agent, seeded from (seed, env id, agent spec) alone; whenever
it reports progress and the ledger has passed a checkpoint below the budget, a
frozen copy plays the checkpoint opponents; then the frozen agent plays every
opponent (the budget's checkpoint is that final evaluation, as in the paper).
Privileged opponents (MCTS) get their simulator from their own
:class:`EvaluationGrants`, whose usage is recorded. The budget: game
``budget + 1`` is refused; a ``BudgetExhausted`` escaping ``adapt`` fails the pair,
loudly; refusals the agent handled itself are noted; simulator requests of a
non-privileged agent are refused, recorded and noted.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import AgentContext
from engine import make_env
from engine.env_spec import seed_word
from engine.environments import Environment
from engine.protocol.arena import BudgetExhausted, Ledger
from engine.protocol.belief import Belief
from engine.protocol.policy import Policy
from harness.bench.paper_plan import (
    WEIGHT_PROGRESS,
    WEIGHT_RHOS,
    Checkpoint,
    EnvAgentResult,
    Opponent,
    Outcome,
    PaperTask,
    env_condition_label,
)
from harness.play.arena import Arena
from harness.play.grants import EvaluationGrants
from harness.prompting.beliefs import score_belief
from harness.referee.agent_process import AgentJob, adapt, agent_extras, frozen_copy
from harness.referee.session import AgentSession
from harness.registry.specs import is_outside, make_agent, parse_spec
from harness.tournaments.match import MatchResult, run_match
from harness.tournaments.plan import is_privileged


class WatchedArena(Arena):
    """An in-process arena that also counts the games it refused, so an agent that swallows BudgetExhausted is still caught."""

    def __init__(self, env: Environment, budget: int, *, privileged: bool = False) -> None:
        super().__init__(env, budget, privileged=privileged)
        self.refused = 0

    def play(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().play(*args, **kwargs)
        except BudgetExhausted:
            self.refused += 1
            raise


def _key(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def _seed(task: PaperTask, *parts: int | str) -> int:
    """A 64-bit seed from (plan seed, env id, agent spec, parts) only: independent of workers and other pairs."""
    words = [task.plan.seed, seed_word(task.env_id), _key(task.agent), *(_key(p) if isinstance(p, str) else p for p in parts)]
    return int(np.random.SeedSequence(words).generate_state(1, np.uint64)[0])


def evaluate(
    task: PaperTask, env: Environment, agent: Policy, opponents: Iterable[Opponent], games: int, phase: int
) -> tuple[Outcome, ...]:
    """The agent (a frozen copy, or its remote stand-in) against each opponent, ``games`` games each, colours alternating."""
    outcomes = []
    for opponent in opponents:
        grants = EvaluationGrants(env)
        context = AgentContext(env.rules, grant_simulator=grants.grant_simulator if opponent.privileged else None)

        def build_opponent(rng: Any, spec: str = shared_ppo(task, opponent.spec), context: AgentContext = context) -> Any:
            return make_agent(spec, context, rng)

        match: MatchResult = run_match(env, lambda rng: agent, build_opponent, games, _seed(task, opponent.spec, phase))
        tally = match.overall
        outcomes.append(
            Outcome(
                opponent=opponent.label,
                spec=opponent.spec,
                privileged=opponent.privileged,
                win=tally.wins,
                draw=tally.draws,
                lose=tally.losses,
                rewards=match.a_rewards,
                simulator_uses=grants.usage.uses,
            )
        )
    return tuple(outcomes)


def shared_ppo(task: PaperTask, spec: str) -> str:
    """``spec`` with the environment's shared PPO-2K training of this run, if it is the default ``ppo`` row or the
    ``ppo-2k`` opponent (one training per environment, whichever comes first; :mod:`harness.envs.ppo_shared`)."""
    entry, values = parse_spec(spec)
    if not task.shared_dir or "," in task.shared_dir or not (spec == "ppo" or (entry.name == "ppo-2k" and values["seed"] == 0)):
        return spec
    games = task.plan.budget if entry.name == "ppo" else values["games"]
    seed = int(np.random.SeedSequence([task.plan.seed, seed_word(task.env_id), _key("ppo-2k")]).generate_state(1)[0])
    stem = f"{task.shared_dir}/env-{re.sub(r'[^A-Za-z0-9_.-]', '_', str(task.env_id))}-seed-{seed}-games-{games}"
    return f"ppo:seed={seed},shared={stem}" if entry.name == "ppo" else f"ppo-2k:games={games},seed={seed},shared={stem}"


def _ppo_folder(task: PaperTask, spec: str) -> tuple[str, ...]:
    """The folder shared PPO trainings are written to (:func:`shared_ppo`), made, and writable by the agent process's
    own uid behind the walls: for every project agent (so one warm agent server serves all of a worker's pairs), never
    for an agent from outside the project."""
    if not task.shared_dir or is_outside(spec):
        return ()
    folder = Path(task.shared_dir)
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o1777)
    return (str(folder),)


class _Checkpoints:
    """The checkpoints below the budget: which are due once the ledger has passed them, and their evaluations."""

    def __init__(self, task: PaperTask, env: Environment) -> None:
        self.task, self.env = task, env
        self.pending = [c for c in task.plan.checkpoints if c < task.plan.budget]
        self.done: list[Checkpoint] = []
        self.seconds = 0.0

    def due(self, games_played: int) -> bool:
        return any(c <= games_played for c in self.pending)

    def run(self, agent: Policy, games_played: int, source: str = "adapting") -> None:
        """Evaluate the frozen agent for every pending checkpoint at or below ``games_played`` (the ledger's count)."""
        started = time.perf_counter()
        outcomes = evaluate(self.task, self.env, agent, self.task.plan.checkpoint_opponents, self.task.plan.checkpoint_games, games_played)
        self.seconds += time.perf_counter() - started
        due = [c for c in self.pending if c <= games_played]
        self.done += [Checkpoint(planned_games=c, games_played=games_played, source=source, outcomes=outcomes) for c in due]
        self.pending = [c for c in self.pending if c > games_played]


def run_task(task: PaperTask) -> EnvAgentResult:
    """Adapt, checkpoint, freeze and evaluate one agent on one environment; a failure is recorded, not raised."""
    env = make_env(task.env_id)
    return (_run_refereed if task.plan.referee else _run_in_process)(task, env)


def _base(task: PaperTask, env: Environment) -> dict[str, Any]:
    return {
        "env_id": env.id,
        "env_name": env.name,
        "layout": env.layout_index,
        "condition": env_condition_label(env),
        "agent": task.agent,
        "budget": task.plan.budget,
        "enforced": task.plan.referee,
    }


def _run_refereed(task: PaperTask, env: Environment) -> EnvAgentResult:
    """The agent in its own process, adapting through the referee (here), which holds K and the ledger."""
    job = AgentJob(
        agent=shared_ppo(task, task.agent),
        rules=env.rules,
        budget=task.plan.budget,
        seed=_seed(task, "agent"),
        plugins=task.plan.plugins,
        curve_points=(WEIGHT_PROGRESS, WEIGHT_RHOS),
        privileged_condition=env.condition if is_privileged(task.agent) else None,
    )
    checkpoints = _Checkpoints(task, env)
    fields: dict[str, Any] = {}
    session = None
    try:
        session = AgentSession(env, job, writable=_ppo_folder(task, job.agent))
        adapted = session.adapt(checkpoints.due, checkpoints.run)
        fields["adapt_seconds"] = max(0.0, adapted.seconds - checkpoints.seconds)
        referee = session.referee
        if adapted.error is not None:
            raise _AgentFailed(_described(adapted.error, referee.ledger.budget, referee.games_played, referee.refused_games))
        _check_budget(referee.ledger)
        if checkpoints.due(referee.games_played):  # checkpoints passed without a progress report
            session.evaluate(lambda agent: checkpoints.run(agent, referee.games_played, "after adapt"))
        started = time.perf_counter()
        final = session.evaluate(lambda agent: evaluate(task, env, agent, task.plan.opponents, task.plan.games, 0))
        fields |= {"eval_seconds": time.perf_counter() - started, "final": final}
        fields |= _extras(adapted.extras, env)
        fields["notes"] = (
            *_refusal_note(referee.refused_games, task.plan.budget),
            *_privilege_notes(referee.ledger),
            *fields.get("notes", ()),
        )
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as error:  # noqa: BLE001 - recorded as this pair's failure; the other pairs go on
        fields |= {"status": "failed", "error": str(error) if isinstance(error, _AgentFailed) else f"{type(error).__name__}: {error}"}
    finally:
        if session is not None:
            session.close()
    ledger = session.referee.ledger if session else Ledger(layout=env.layout.name, budget=task.plan.budget)
    checkpoint_rows = _all_checkpoints(task, checkpoints, fields.get("final", ()), ledger.games_played)
    return EnvAgentResult(
        **_base(task, env),
        **{"status": "ok", **fields},
        games_used=ledger.games_played,
        refused_games=session.referee.refused_games if session else 0,
        adaptation_privileged=ledger.privileged,
        checkpoint_seconds=checkpoints.seconds,
        checkpoints=checkpoint_rows,
    )


def _run_in_process(task: PaperTask, env: Environment) -> EnvAgentResult:
    """Quick experiments: the agent adapts through an in-process arena (unenforced: a cheating agent could reach K)."""
    arena = WatchedArena(env, task.plan.budget, privileged=is_privileged(task.agent))
    checkpoints = _Checkpoints(task, env)
    fields: dict[str, Any] = {}
    try:
        grant = arena.grant_simulator if is_privileged(task.agent) else None
        agent = make_agent(
            shared_ppo(task, task.agent), AgentContext(env.rules, grant_simulator=grant), np.random.default_rng(_seed(task, "agent"))
        )

        def on_progress(*_args: Any, **_kwargs: Any) -> None:
            if checkpoints.due(arena.games_played):  # the ledger, not the agent's word, is the count
                checkpoints.run(frozen_copy(agent), arena.games_played)

        started = time.perf_counter()
        try:
            adapt(agent, arena, on_progress)
        except BudgetExhausted as error:
            raise _AgentFailed(_described(f"BudgetExhausted: {error}", arena.budget, arena.games_played, arena.refused)) from None
        fields["adapt_seconds"] = time.perf_counter() - started - checkpoints.seconds
        _check_budget(arena.ledger)
        if checkpoints.due(arena.games_played):
            checkpoints.run(frozen_copy(agent), arena.games_played, "after adapt")
        agent.freeze()
        started = time.perf_counter()
        final = evaluate(task, env, frozen_copy(agent), task.plan.opponents, task.plan.games, 0)
        fields |= {"eval_seconds": time.perf_counter() - started, "final": final}
        fields |= _extras(_own_extras(agent), env)
        fields["notes"] = (*_refusal_note(arena.refused, arena.budget), *_privilege_notes(arena.ledger), *fields.get("notes", ()))
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as error:  # noqa: BLE001 - recorded as this pair's failure; the other pairs go on
        fields |= {"status": "failed", "error": str(error) if isinstance(error, _AgentFailed) else f"{type(error).__name__}: {error}"}
    checkpoint_rows = _all_checkpoints(task, checkpoints, fields.get("final", ()), arena.games_played)
    return EnvAgentResult(
        **_base(task, env),
        **{"status": "ok", **fields},
        games_used=arena.games_played,
        refused_games=arena.refused,
        adaptation_privileged=arena.privileged_uses,
        checkpoint_seconds=checkpoints.seconds,
        checkpoints=checkpoint_rows,
    )


class _AgentFailed(RuntimeError):
    """The agent's adaptation raised: the message is the pair's recorded error."""


def _own_extras(agent: Any) -> dict[str, Any]:
    """The in-process agent's belief and weight curves, in the form the agent process reports them."""
    return agent_extras(agent, (WEIGHT_PROGRESS, WEIGHT_RHOS))


def _check_budget(ledger: Ledger) -> None:
    """The ledger must hold at most ``budget`` games (the arena guarantees it; this guards against a bypass)."""
    if ledger.games_played > ledger.budget:
        raise BudgetExhausted(f"the ledger holds {ledger.games_played} games, over the budget of {ledger.budget}")


def _refusal_note(refused: int, budget: int) -> tuple[str, ...]:
    """An agent that asked for games beyond its budget and handled the refusal itself is noted, not failed."""
    if not refused:
        return ()
    return (
        f"asked for {refused} game(s) beyond its budget of {budget}; the arena refused and the agent "
        "stopped there (e.g. an unfinished generation dropped)",
    )


def _privilege_notes(ledger: Ledger) -> tuple[str, ...]:
    """Simulator requests refused because the agent is not privileged (reported, never granted)."""
    refused = ledger.privileged.refused
    if not refused:
        return ()
    return (
        f"REFUSED SIMULATOR REQUESTS: asked {len(refused)} time(s) for the true outcome rule without being "
        f"privileged (reasons: {', '.join(repr(r) for r in refused[:3])}); none was granted",
    )


def _described(error: str, budget: int, played: int, refused: int) -> str:
    if error.startswith("BudgetExhausted"):
        return f"BUDGET EXCEEDED: the agent asked for more than its {budget} games ({played} played, {refused} refused): {error}"
    return error


def _extras(reported: dict[str, Any], env: Environment) -> dict[str, Any]:
    """The agent's reported belief (validated, then scored against the true K here) and weight curves."""
    extras: dict[str, Any] = {}
    notes = [str(note)[:500] for note in reported.get("notes", ())][:10]
    try:
        if reported.get("belief") is not None:
            belief = Belief.model_validate(reported["belief"])
            extras |= {"belief": belief, "belief_score": score_belief(belief, env.condition.k)}
        if reported.get("weight_curves") is not None:
            extras["weight_curves"] = reported["weight_curves"]
    except (ValueError, TypeError) as error:
        notes.append(f"the agent's belief or weight curves do not parse: {str(error)[:300]}")
    return extras | {"notes": tuple(notes)} if notes else extras


def _all_checkpoints(task: PaperTask, checkpoints: _Checkpoints, final: Sequence[Outcome], games_used: int) -> tuple[Checkpoint, ...]:
    """Every planned checkpoint: evaluated while adapting, or the final evaluation, or not reached (a failure).

    The budget's checkpoint is the final evaluation; so are those beyond the games
    an agent used when it stopped adapting early (it would not have changed).
    """
    done = {c.planned_games: c for c in checkpoints.done}
    labels = {o.label for o in task.plan.checkpoint_opponents}
    rows = []
    for planned in task.plan.checkpoints:
        if planned in done:
            rows.append(done[planned])
        elif final and (planned == task.plan.budget or planned > games_used):
            rows.append(
                Checkpoint(
                    planned_games=planned, games_played=games_used, source="final", outcomes=tuple(o for o in final if o.opponent in labels)
                )
            )
        else:
            rows.append(Checkpoint(planned_games=planned))
    return tuple(rows)
