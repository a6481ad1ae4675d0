"""The referee's side of one agent's life: start its process, answer its games, run its evaluations.

:class:`AgentSession` starts the agent process (behind the walls,
:mod:`harness.referee.walls`, where they stand; else forked from a clean server
process, :mod:`harness.referee.launch`: either way it inherits nothing of this
one but what :class:`AgentJob` and the environment variables carry), answers
its adaptation messages through a :class:`~harness.referee.referee.Referee`, and
runs evaluation games here, with the opponent on the referee's side and the
agent's frozen copy answering over the pipe::

    with AgentSession(env, job) as session:
        adapted = session.adapt(checkpoint_due, run_checkpoint)
        final = session.evaluate(lambda agent: run_match(env, lambda rng: agent, ...))
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from engine.environments import Environment
from engine.protocol.arena import Ledger, PrivilegedUsage
from engine.protocol.policy import Policy
from harness.referee.agent_process import AgentJob, agent_main
from harness.referee.isolation import start_agent
from harness.referee.launch import agent_context, environment
from harness.referee.referee import Referee, RemotePolicy
from harness.referee.wire import AgentProcessGone, ProtocolViolation, Wire
from harness.registry.specs import is_outside

T = TypeVar("T")
JOIN_SECONDS = 10.0
_GONE = "the agent process exited with code {code} before it finished adapting (a crash, os._exit, or killed; see its stderr above)"


@dataclass(frozen=True)
class Adapted:
    """How adaptation ended, as the agent process reported it (untrusted: the referee's ledger is the count)."""

    error: str | None
    seconds: float
    extras: dict[str, Any] = field(default_factory=dict)


def finish(wire: Wire, process: Any) -> None:
    """Tell an agent process to finish, wait for it (ended by force after :data:`JOIN_SECONDS`), close the pipe."""
    try:
        wire.send("finish")
    except (BrokenPipeError, OSError):
        pass
    process.join(JOIN_SECONDS)
    if process.is_alive():
        process.kill()
        process.join()
    wire.close()


def receive(wire: Wire, process: Any, gone: str) -> dict[str, Any]:
    """The agent process's next message; when it has died, ``AgentProcessGone`` saying ``gone`` and its exit code."""
    try:
        return wire.recv()
    except AgentProcessGone:
        process.join(JOIN_SECONDS)
        raise AgentProcessGone(gone.format(code=process.exitcode)) from None


class AgentSession:
    """One agent process and its referee."""

    def __init__(self, env: Environment, job: AgentJob, ledger: Ledger | None = None, writable: tuple[str, ...] = ()) -> None:
        """``writable``: host folders made for the agent to write in (a shared PPO training), for the project's agents."""
        if (job.privileged_condition is not None) and job.privileged_condition != env.condition:
            raise ValueError("a privileged agent's job must carry its environment's own condition")
        self.referee = Referee(env, job.budget, ledger)
        self._name = job.agent
        ours, self._process = start_agent(
            agent_main,
            (job,),
            network=False,
            outside=is_outside(job.agent),
            context=agent_context(),
            unwalled_args=(job, environment()),
            writable=writable,
        )
        self._wire = Wire(ours)  # only the agent process holds the other end: its exit ends our reads

    def adapt(self, checkpoint_due: Callable[[int], bool], run_checkpoint: Callable[[Policy, int], None]) -> Adapted:
        """Answer adaptation messages until the agent process says it has finished adapting."""
        while True:
            message = self._recv()
            op = message["op"]
            if op == "adapted":
                return self._adapted(message)
            if op == "progress":
                played = self.referee.games_played  # the ledger, not the agent's word, is the count
                if checkpoint_due(played):
                    run_checkpoint(self._frozen_agent(), played)
                self._wire.send("resume")
            else:
                self._wire.send(**self.referee.answer(message))

    def evaluate(self, run: Callable[[Policy], T]) -> T:
        """``run(agent)`` with a frozen copy of the adapted agent answering its moves."""
        result = run(self._frozen_agent())
        self._wire.send("resume")
        return result

    def _recv(self) -> dict[str, Any]:
        return receive(self._wire, self._process, _GONE)

    def _frozen_agent(self) -> Policy:
        self._wire.send("snapshot")
        reply = self._wire.recv("ready", "act_error")
        if reply["op"] == "act_error":
            raise ProtocolViolation(f"the agent process could not play: {reply.get('error')}")
        return RemotePolicy(self._wire, self._name)

    def _adapted(self, message: dict[str, Any]) -> Adapted:
        usage = message.get("usage")
        if usage is not None:
            self.referee.record_privileged(PrivilegedUsage.model_validate(usage))
        error = message.get("error")
        seconds = message.get("seconds")
        extras = message.get("extras")
        return Adapted(
            error=str(error) if error is not None else None,
            seconds=float(seconds) if isinstance(seconds, (int, float)) else 0.0,
            extras=extras if isinstance(extras, dict) else {},
        )

    def close(self) -> None:
        """Tell the agent process to finish and wait for it (ended by force after a few seconds)."""
        finish(self._wire, self._process)

    def __enter__(self) -> AgentSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
