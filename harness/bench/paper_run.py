"""Running an ``arena bench paper`` plan: the per-(environment, agent) worker and the run directory.

Worker (:func:`run_task`): a fresh agent, seeded from (seed, env id, agent spec)
alone, adapts through a budgeted :class:`Arena`. Whenever it reports progress
(``on_progress(games_played)``, after each generation or batch) and the arena's
ledger has passed a checkpoint below the budget, the current agent plays the
checkpoint opponents. Then it is frozen and plays every opponent; the checkpoint
at the full budget is that final evaluation, as in the paper (its Table 3 20G
column is its Table 2). Matches are :func:`run_match`; privileged opponents
(MCTS) get their simulator from their own :class:`EvaluationGrants`, whose
usage is recorded. The budget: the arena refuses game ``budget + 1``; a
``BudgetExhausted`` escaping ``adapt`` fails that pair, loudly, and the others go
on; a watched arena counts refusals, so an agent that asked for more and handled
the refusal itself (Adaptive Minimax drops an unfinished generation) is noted;
the ledger is checked to hold at most ``budget`` games.

Run directory (default ``runs/<timestamp>-bench-paper``): ``manifest.json``,
``results.jsonl`` (one :class:`EnvAgentResult` per line, appended as each pair
finishes, so an interrupted run keeps them and ``resume`` skips them), then the
report's ``results.json``, ``report.md`` and plots. Pairs run in spawned worker
processes as the tournament's games do.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import multiprocessing
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from agents.base import AgentContext
from engine import make_env
from engine.environments import Environment
from engine.protocol.arena import BudgetExhausted
from harness.bench.paper_plan import (
    SCHEMA,
    WEIGHT_PROGRESS,
    WEIGHT_RHOS,
    Checkpoint,
    EnvAgentResult,
    Opponent,
    Outcome,
    PaperPlan,
    PaperTask,
    condition_label,
)
from harness.play.arena import Arena
from harness.play.grants import EvaluationGrants
from harness.prompting.beliefs import score_belief
from harness.records.provenance import git_commit, versions
from harness.registry.specs import make_agent
from harness.tournaments.match import MatchResult, run_match
from harness.tournaments.plan import TournamentError, is_privileged
from harness.tournaments.tournament import _ignore_interrupts, check_run_dir
from harness.tournaments.tournament import default_run_dir as tournament_run_dir

RUNS_ROOT = Path("runs")
T = TypeVar("T")
R = TypeVar("R")


class WatchedArena(Arena):
    """An arena that also counts the games it refused, so an agent that swallows BudgetExhausted is still caught."""

    def __init__(self, env: Environment, budget: int) -> None:
        super().__init__(env, budget)
        self.refused = 0

    def play(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().play(*args, **kwargs)
        except BudgetExhausted:
            self.refused += 1
            raise

    async def play_verified(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return await super().play_verified(*args, **kwargs)
        except BudgetExhausted:
            self.refused += 1
            raise


def _key(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def _seed(task: PaperTask, *parts: int | str) -> int:
    """A 64-bit seed from (plan seed, env id, agent spec, parts) only: independent of workers and other pairs."""
    words = [task.plan.seed, task.env_id, _key(task.agent), *(_key(p) if isinstance(p, str) else p for p in parts)]
    return int(np.random.SeedSequence(words).generate_state(1, np.uint64)[0])


def evaluate(task: PaperTask, env: Environment, agent: Any, opponents: Iterable[Opponent], games: int,
             phase: int) -> tuple[Outcome, ...]:
    """The agent (as it is now) against each opponent, ``games`` games each, colours alternating."""
    outcomes = []
    for opponent in opponents:
        grants = EvaluationGrants(env)
        context = AgentContext(env.rules, grant_simulator=grants.grant_simulator if opponent.privileged else None)
        def build_opponent(rng: Any, spec: str = opponent.spec, context: AgentContext = context) -> Any:
            return make_agent(spec, context, rng)

        match: MatchResult = run_match(env, lambda rng: agent, build_opponent, games, _seed(task, opponent.spec, phase))
        tally = match.overall
        outcomes.append(Outcome(opponent=opponent.label, spec=opponent.spec, privileged=opponent.privileged,
                                win=tally.wins, draw=tally.draws, lose=tally.losses, rewards=match.a_rewards,
                                simulator_uses=grants.usage.uses))
    return tuple(outcomes)


class _CheckpointRecorder:
    """The ``on_progress`` callback: evaluates the agent at each checkpoint below the budget the ledger has passed."""

    def __init__(self, task: PaperTask, env: Environment, agent: Any, arena: Arena) -> None:
        self.task, self.env, self.agent, self.arena = task, env, agent, arena
        self.pending = [c for c in task.plan.checkpoints if c < task.plan.budget]
        self.done: list[Checkpoint] = []
        self.seconds = 0.0

    def __call__(self, games_played: int | None = None, source: str = "adapting") -> None:
        played = self.arena.games_played  # the ledger, not the agent's word, is the count
        due = [c for c in self.pending if c <= played]
        if not due:
            return
        started = time.perf_counter()
        outcomes = evaluate(self.task, self.env, self.agent, self.task.plan.checkpoint_opponents,
                            self.task.plan.checkpoint_games, played)
        self.seconds += time.perf_counter() - started
        self.done += [Checkpoint(planned_games=c, games_played=played, source=source, outcomes=outcomes) for c in due]
        self.pending = [c for c in self.pending if c > played]


def run_task(task: PaperTask) -> EnvAgentResult:
    """Adapt, checkpoint, freeze and evaluate one agent on one environment; a failure is recorded, not raised."""
    env = make_env(task.env_id)
    base = {"env_id": env.id, "env_name": env.name, "layout": env.layout_index,
            "condition": condition_label(env.condition), "agent": task.agent, "budget": task.plan.budget}
    arena = WatchedArena(env, task.plan.budget)
    recorder: _CheckpointRecorder | None = None
    fields: dict[str, Any] = {}
    try:
        grant = arena.grant_simulator if is_privileged(task.agent) else None
        agent = make_agent(task.agent, AgentContext(env.rules, grant_simulator=grant),
                           np.random.default_rng(_seed(task, "agent")))
        recorder = _CheckpointRecorder(task, env, agent, arena)
        started = time.perf_counter()
        _adapt(agent, arena, recorder)
        fields["adapt_seconds"] = time.perf_counter() - started - recorder.seconds
        _check_budget(arena)
        recorder(source="after adapt")  # checkpoints passed without a progress report
        agent.freeze()
        started = time.perf_counter()
        final = evaluate(task, env, agent, task.plan.opponents, task.plan.games, 0)
        fields |= {"eval_seconds": time.perf_counter() - started, "final": final}
        fields |= _extras(agent, env)
        fields["notes"] = (*_refusal_note(arena), *fields.get("notes", ()))
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as error:  # noqa: BLE001 - recorded as this pair's failure; the other pairs go on
        fields |= {"status": "failed", "error": _describe_failure(error, arena)}
    checkpoints = _all_checkpoints(task, recorder, fields.get("final", ()), arena.games_played)
    return EnvAgentResult(**base, **{"status": "ok", **fields}, games_used=arena.games_played,
                          refused_games=arena.refused, adaptation_privileged=arena.privileged_uses,
                          checkpoint_seconds=recorder.seconds if recorder else 0.0, checkpoints=checkpoints)


def _adapt(agent: Any, arena: Arena, on_progress: Callable[..., None]) -> None:
    """``agent.adapt(arena, on_progress=...)``, or ``agent.adapt(arena)`` for agents without progress reports."""
    parameters = inspect.signature(agent.adapt).parameters
    takes_progress = "on_progress" in parameters or any(p.kind is p.VAR_KEYWORD for p in parameters.values())
    if takes_progress:
        agent.adapt(arena, on_progress=on_progress)
    else:
        agent.adapt(arena)


def _check_budget(arena: WatchedArena) -> None:
    """The ledger must hold at most ``budget`` games (the arena guarantees it; this guards against a bypass)."""
    if arena.games_played > arena.budget or len(arena.ledger.records) != arena.games_played:
        raise BudgetExhausted(f"the ledger holds {len(arena.ledger.records)} games, over the budget of {arena.budget}")


def _refusal_note(arena: WatchedArena) -> tuple[str, ...]:
    """An agent that asked for games beyond its budget and handled the refusal itself is noted, not failed."""
    if not arena.refused:
        return ()
    return (f"asked for {arena.refused} game(s) beyond its budget of {arena.budget}; the arena refused and the agent "
            "stopped there (e.g. an unfinished generation dropped)",)


def _describe_failure(error: Exception, arena: WatchedArena) -> str:
    if isinstance(error, BudgetExhausted):
        return (f"BUDGET EXCEEDED: the agent asked for more than its {arena.budget} games "
                f"({arena.games_played} played, {arena.refused} refused): {error}")
    return f"{type(error).__name__}: {error}"


def _extras(agent: Any, env: Environment) -> dict[str, Any]:
    """The interval agent's belief (scored against the true K) and the weight curves, for agents that have them."""
    extras: dict[str, Any] = {}
    notes = []
    if callable(getattr(agent, "belief", None)):
        try:
            belief = agent.belief()
            extras |= {"belief": belief, "belief_score": score_belief(belief, env.condition.k)}
        except Exception as error:  # noqa: BLE001 - a broken extra is a note, the results stand
            notes.append(f"belief() failed: {type(error).__name__}: {error}")
    if callable(getattr(agent, "weight_curve", None)):
        try:
            rhos = np.asarray(WEIGHT_RHOS)
            extras["weight_curves"] = {f"{p:g}": np.asarray(agent.weight_curve(p, rhos), dtype=float).round(6).tolist()
                                       for p in WEIGHT_PROGRESS}
        except Exception as error:  # noqa: BLE001
            notes.append(f"weight_curve() failed: {type(error).__name__}: {error}")
    return extras | {"notes": tuple(notes)} if notes else extras


def _all_checkpoints(task: PaperTask, recorder: _CheckpointRecorder | None, final: Sequence[Outcome],
                     games_used: int) -> tuple[Checkpoint, ...]:
    """Every planned checkpoint: evaluated while adapting, or the final evaluation, or not reached (a failure).

    The budget's checkpoint is the final evaluation; so are those beyond the games
    an agent used when it stopped adapting early (it would not have changed).
    """
    done = {c.planned_games: c for c in (recorder.done if recorder else [])}
    labels = {o.label for o in task.plan.checkpoint_opponents}
    rows = []
    for planned in task.plan.checkpoints:
        if planned in done:
            rows.append(done[planned])
        elif final and (planned == task.plan.budget or planned > games_used):
            rows.append(Checkpoint(planned_games=planned, games_played=games_used, source="final",
                                   outcomes=tuple(o for o in final if o.opponent in labels)))
        else:
            rows.append(Checkpoint(planned_games=planned))
    return tuple(rows)


def parallel_map(function: Callable[[T], R], items: Sequence[T], jobs: int) -> Iterator[R]:
    """``function`` over ``items`` in finishing order, in ``jobs`` spawned worker processes (1: in this process)."""
    jobs = max(1, min(jobs, len(items)))
    if jobs == 1:
        yield from map(function, items)
        return
    # spawn, not fork, as the tournament does: the parent's progress-bar thread must not be copied mid-lock.
    with multiprocessing.get_context("spawn").Pool(jobs, initializer=_ignore_interrupts) as pool:
        yield from pool.imap_unordered(function, items, chunksize=1)


def default_run_dir(root: Path = RUNS_ROOT) -> Path:
    """``runs/<YYYYmmdd-HHMMSS>-bench-paper``, with a numeric suffix if that is taken."""
    return tournament_run_dir("bench-paper", root)


def read_plan(run_dir: Path) -> PaperPlan:
    """The plan recorded in ``run_dir/manifest.json`` (for ``--resume``)."""
    path = run_dir / "manifest.json"
    if not path.is_file():
        raise TournamentError(f"cannot resume {str(run_dir)!r}: no manifest.json there (not a bench-paper run?)")
    manifest = json.loads(path.read_text(encoding="utf-8"))
    if manifest.get("kind") != "bench-paper":
        raise TournamentError(f"cannot resume {str(run_dir)!r}: its manifest is a {manifest.get('kind')!r} run")
    return PaperPlan.model_validate(manifest["plan"])


def read_results(run_dir: Path) -> dict[tuple[int, str], EnvAgentResult]:
    """The pairs recorded in ``results.jsonl``, the latest line of each (a failed pair re-run on resume)."""
    path = run_dir / "results.jsonl"
    if not path.exists():
        return {}
    results = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            result = EnvAgentResult.model_validate_json(line)
            results[result.key] = result
    return results


def run_bench_paper(
    plan: PaperPlan, run_dir: Path, jobs: int, *, command: str = "", resume: bool = False,
    on_result: Callable[[EnvAgentResult], None] | None = None,
) -> list[EnvAgentResult]:
    """Run the plan's pairs not finished yet (``resume``: those without an ``ok`` line), streaming each line.

    Returns every pair's latest result in plan order. With ``jobs`` > 1 the pairs
    run in spawned worker processes (a script calling this needs the usual
    ``if __name__ == "__main__":`` guard); ``on_result`` runs here after each line is written.
    """
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise TournamentError(f"jobs={jobs!r}: give 1 or more worker processes")
    if resume:
        _drop_partial_line(run_dir / "results.jsonl")
    else:
        check_run_dir(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    finished = {k for k, r in read_results(run_dir).items() if r.status == "ok"} if resume else set()
    todo = [task for task in plan.tasks() if task.key not in finished]
    manifest = _manifest(plan, run_dir, jobs, command, resumed=len(finished))
    _write_json(run_dir / "manifest.json", manifest)
    status, error = "complete", None
    try:
        with (run_dir / "results.jsonl").open("a", encoding="utf-8") as lines:
            for result in parallel_map(run_task, todo, jobs):
                lines.write(result.model_dump_json() + "\n")
                lines.flush()
                if on_result is not None:
                    on_result(result)
    except BaseException as failure:
        status = "interrupted" if isinstance(failure, KeyboardInterrupt) else "failed"
        error = f"{type(failure).__name__}: {failure}"
        raise
    finally:
        _write_json(run_dir / "manifest.json", manifest | {"status": status, "finished_at": _now()}
                    | ({"error": error} if error else {}))
    recorded = read_results(run_dir)
    return [recorded[task.key] for task in plan.tasks() if task.key in recorded]


def _drop_partial_line(path: Path) -> None:
    """Cut a line left half-written by a killed run, so the next line starts clean (its pair is re-run)."""
    if path.exists() and (text := path.read_text(encoding="utf-8")) and not text.endswith("\n"):
        path.write_text(text[: text.rfind("\n") + 1], encoding="utf-8")


def _manifest(plan: PaperPlan, run_dir: Path, jobs: int, command: str, resumed: int) -> dict[str, object]:
    return {
        "schema_version": SCHEMA, "kind": "bench-paper", "run_id": run_dir.name, "command": command,
        "plan": plan.model_dump(mode="json"), "pairs": len(plan.tasks()), "already_finished": resumed,
        "jobs": jobs, "privileged_opponents": [o.label for o in plan.opponents if o.privileged],
        "seeding": "agent and match seeds = SeedSequence([seed, env_id, sha256(agent spec), ...]): "
                   "independent of --jobs and of the other pairs",
        "versions": versions(), "git": git_commit(), "started_at": _now(), "status": "running",
    }


def _write_json(path: Path, data: object) -> None:
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
