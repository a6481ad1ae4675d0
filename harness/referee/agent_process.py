"""The agent process: builds the agent from public information, adapts through a remote arena, answers moves.

:func:`agent_main` is the process's whole life. It receives an :class:`AgentJob`
(the rules, the budget, the agent's spec and seed, plugin sources; the condition
only for an agent whose registry entry is privileged), clears the command line it
inherited, builds the agent, and lets it adapt through a
:class:`~harness.referee.remote_arena.RemoteArena`. When the agent reports
progress the referee may ask for a checkpoint: a frozen deep copy of the agent
then answers move requests until the referee says ``resume``, so nothing the
evaluation does reaches the agent's adaptation state or the budget. After
adapting, the agent is frozen and a frozen copy answers the final evaluation.
"""

from __future__ import annotations

import copy
import inspect
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from agents.base import AgentContext
from engine.condition import Condition
from engine.protocol.arena import BudgetExhausted, Ledger
from engine.protocol.observation import observe
from engine.protocol.record import GameRecord
from engine.rules import Rules
from engine.state import State
from harness.play.grants import EvaluationGrants
from harness.referee.launch import adopt_environment
from harness.referee.remote_arena import RemoteArena
from harness.referee.wire import AgentProcessGone, Wire, int_list
from harness.registry import plugins
from harness.registry.specs import become_agent_process, make_agent, project_agents_only


@dataclass(frozen=True)
class AgentJob:
    """What an agent process is given: public information, plus the condition for a privileged agent only."""

    agent: str
    rules: Rules
    budget: int
    seed: int
    plugins: tuple[str, ...] = ()
    records: tuple[GameRecord, ...] = ()  # adaptation games already on record (a resumed run)
    privileged_condition: Condition | None = None
    curve_points: tuple[tuple[float, ...], tuple[float, ...]] = ((), ())  # weight_curve(progress, rhos) to report


def agent_main(connection: Any, job: AgentJob, environ: dict[str, str] | None = None) -> None:
    """The agent process: adapt, then answer evaluation moves until the referee says ``finish``.

    ``environ``: the parent's environment variables (:mod:`harness.referee.launch`), replacing the ones this process
    was forked with."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and ends this process
    sys.argv = sys.argv[:1]  # the start copies the parent's command line, which may name the environment
    if environ is not None:
        adopt_environment(environ)
    become_agent_process()  # this process imports the plugins; the referee's never do
    wire = Wire(connection)
    try:
        _run(wire, job)
    except AgentProcessGone:
        pass
    finally:
        wire.close()


def _run(wire: Wire, job: AgentJob) -> None:
    started = time.perf_counter()  # restarted just before adapt(): building the agent is not adapting
    grants, agent, error = None, None, None
    try:
        load_plugins(job.plugins)
        if job.privileged_condition is not None:
            grants = EvaluationGrants.for_rules(job.rules, job.privileged_condition)
        context = AgentContext(job.rules, grant_simulator=grants.grant_simulator if grants else None)
        agent = make_agent(job.agent, context, np.random.default_rng(job.seed))
        ledger = Ledger(layout=job.rules.layout.name, budget=job.budget, records=job.records)
        arena = RemoteArena(wire, job.rules, ledger, grants.grant_simulator if grants else None)
        started = time.perf_counter()
        adapt(agent, arena, lambda *_args, **_kwargs: _progress(wire, agent, job.rules))
        agent.freeze()
    except (KeyboardInterrupt, SystemExit, AgentProcessGone):
        raise
    except BudgetExhausted as exhausted:
        error = f"BudgetExhausted: {exhausted}"
    except Exception as failure:  # noqa: BLE001 - reported to the referee, which records the pair as failed
        error = f"{type(failure).__name__}: {failure}"
    wire.send(
        "adapted",
        error=error,
        seconds=time.perf_counter() - started,
        usage=grants.usage.model_dump(mode="json") if grants else None,
        extras=agent_extras(agent, job.curve_points) if agent is not None else {},
    )
    while wire.recv("snapshot", "finish")["op"] == "snapshot":
        serve_moves(wire, agent, job.rules)


def adapt(agent: Any, arena: Any, on_progress: Callable[..., None]) -> None:
    """``agent.adapt(arena, on_progress=...)``, or ``agent.adapt(arena)`` for agents without progress reports."""
    parameters = inspect.signature(agent.adapt).parameters
    takes_progress = "on_progress" in parameters or any(p.kind is p.VAR_KEYWORD for p in parameters.values())
    if takes_progress:
        agent.adapt(arena, on_progress=on_progress)
    else:
        agent.adapt(arena)


def frozen_copy(agent: Any) -> Any:
    """A deep copy of the agent, frozen: what it does in evaluation games never reaches the original."""
    duplicate = copy.deepcopy(agent)
    duplicate.freeze()
    return duplicate


def _progress(wire: Wire, agent: Any, rules: Rules) -> None:
    """Tell the referee; if a checkpoint is due, a frozen copy answers its evaluation moves."""
    wire.send("progress")
    if wire.recv("snapshot", "resume")["op"] == "snapshot":
        serve_moves(wire, agent, rules)


def serve_moves(wire: Wire, agent: Any, rules: Rules) -> None:
    """Answer ``act`` requests with a frozen copy of ``agent`` until the referee says ``resume``."""
    if agent is None:
        wire.send("act_error", error="the agent could not be built")
        return
    player = frozen_copy(agent)
    wire.send("ready")
    while (message := wire.recv("act", "resume", "finish"))["op"] == "act":
        black, white, to_move, placed_black, placed_white = int_list(message, "state", 5)
        state = State(black, white, to_move, placed_black, placed_white)
        try:
            move = int(player.act(observe(rules, state)))
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as failure:  # noqa: BLE001 - the referee records the failed move
            wire.send("act_error", error=f"{type(failure).__name__}: {failure}")
            continue
        wire.send("move", move=move)
    if message["op"] == "finish":  # the referee ends the session mid-evaluation (Ctrl-C): end quietly
        raise AgentProcessGone("the referee finished the session")


def agent_extras(agent: Any, curve_points: tuple[tuple[float, ...], tuple[float, ...]]) -> dict[str, Any]:
    """What the agent says about itself for the report: its belief and weight curves (JSON), or why not."""
    progress_points, rho_points = curve_points
    extras: dict[str, Any] = {}
    notes = []
    if callable(getattr(agent, "belief", None)):
        try:
            extras["belief"] = agent.belief().model_dump(mode="json")
        except Exception as error:  # noqa: BLE001 - a broken extra is a note, the results stand
            notes.append(f"belief() failed: {type(error).__name__}: {error}")
    if callable(getattr(agent, "weight_curve", None)) and progress_points:
        try:
            rhos = np.asarray(rho_points)
            extras["weight_curves"] = {
                f"{p:g}": np.asarray(agent.weight_curve(p, rhos), dtype=float).round(6).tolist() for p in progress_points
            }
        except Exception as error:  # noqa: BLE001
            notes.append(f"weight_curve() failed: {type(error).__name__}: {error}")
    return extras | {"notes": notes}


def load_plugins(sources: tuple[str, ...]) -> None:
    """The job's plugins, after those the parent passed down in its environment (:data:`PLUGINS_ENV`).

    A spawned process's registry reads the inherited ones when it is first built; this process was forked from a
    server whose registry was built before (:mod:`harness.referee.launch`), so they are loaded here. A process that
    serves only the project's agents (:func:`~harness.registry.specs.project_agents_only`) loads none."""
    if not project_agents_only():
        plugins.load_plugins((*plugins.plugin_sources(), *sources))
