"""Failures of generated code as values: a kind, a message, the candidate's traceback (capped).

Every way a candidate program can fail is one :class:`FailureKind`; the sandbox
returns a :class:`Failure` inside a :class:`Result` and never raises for it, so a
run counts sandbox failures by kind like the model failures of the LLM agents.
*Fatal* kinds leave the worker in an unknown state: it is stopped, and the next
call starts a fresh one (the restart is counted).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

TRACEBACK_CHARS = 4000


class FailureKind(str, Enum):
    """How a candidate failed."""

    TIMEOUT = "timeout"  # the wall clock of a call, or the CPU-time limit (SIGXCPU)
    MEMORY = "memory"  # MemoryError under the address-space limit
    CRASH = "crash"  # an exception in the candidate (or no such function, or a syntax error)
    BAD_OUTPUT = "bad_output"  # a result that is not JSON, too large, or too much printed
    MUTATION = "mutation"  # apply_action changed the state it was given
    FORBIDDEN = "forbidden"  # a blocked operation: a process, a socket, a write outside /tmp...
    WORKER_DIED = "worker_died"  # the worker exited or was killed without answering

    def __str__(self) -> str:
        return self.value


FATAL_KINDS = frozenset({FailureKind.TIMEOUT, FailureKind.MEMORY, FailureKind.FORBIDDEN, FailureKind.WORKER_DIED})


@dataclass(frozen=True)
class Failure:
    """One classified failure: its kind, what happened, and the candidate's traceback if there was one."""

    kind: FailureKind
    message: str
    traceback: str = ""

    @property
    def fatal(self) -> bool:
        """Whether the worker was (or must be) stopped: the next call starts a fresh one."""
        return self.kind in FATAL_KINDS

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "message": self.message, "traceback": self.traceback}

    @classmethod
    def from_json(cls, fields: dict[str, Any]) -> Failure:
        return cls(
            FailureKind(fields["kind"]),
            str(fields.get("message", ""))[:TRACEBACK_CHARS],
            str(fields.get("traceback", ""))[-TRACEBACK_CHARS:],
        )

    def __str__(self) -> str:
        return f"{self.kind}: {self.message}"


class CandidateFailed(RuntimeError):
    """Raised by :meth:`Result.unwrap` for a failed call; carries the :class:`Failure`."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(str(failure))
        self.failure = failure


@dataclass(frozen=True)
class Result:
    """The answer to one call: a JSON value, or a :class:`Failure`."""

    value: Any = None
    failure: Failure | None = None

    @property
    def ok(self) -> bool:
        return self.failure is None

    def unwrap(self) -> Any:
        """The value; :class:`CandidateFailed` for a failure."""
        if self.failure is not None:
            raise CandidateFailed(self.failure)
        return self.value


class SandboxUnavailable(RuntimeError):
    """Bubblewrap is missing or cannot run here, and unsandboxed execution was not asked for."""
