"""How agent processes start: forked from a clean server process that has already imported the arena.

A spawned agent process is a fresh interpreter that imports the command's main
module (``arena``: the whole CLI), the agent's modules (torch for PPO) and loads
the numba kernels' compiled code before its first move: 1-3.5 s per process,
paid by every pair of ``arena bench paper``. Here agent processes come from a
*forkserver* instead: a fresh interpreter started once per parent process (it is
not a fork of the parent, so nothing of the referee's memory — K, the ledger, the
opponents — is in it), which imports :data:`PRELOAD` once and forks each agent
process from that state. What the child knows is still only what its job and
its command line carry (:func:`~harness.referee.agent_process.agent_main`): the
parent's environment variables at the moment of the start are sent with the job
and replace the server's (:func:`environment` / :func:`adopt_environment`), as
a spawned child would have inherited them.

A process that was itself forked (``os.fork``: mutmut's test runs, the ``fork``
start method) may have inherited its parent's server, which only the parent can
use: it starts agent processes by ``spawn`` instead.
"""

from __future__ import annotations

import multiprocessing
import os
from typing import Any

# "__main__": the parent's main module, imported once in the server so that no child re-imports it;
# harness.referee.warm: the arena's modules, torch when installed, and the kernels' compiled code.
PRELOAD = ("__main__", "harness.referee.warm")
_forked = False


def _note_fork() -> None:
    global _forked
    _forked = True


os.register_at_fork(after_in_child=_note_fork)


def agent_context() -> Any:
    """The multiprocessing context agent processes start from (a forkserver with :data:`PRELOAD`; spawn in a fork)."""
    if _forked:
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(PRELOAD))  # read when the server starts: the first process of this parent
    return context


def environment() -> dict[str, str]:
    """The environment variables a child should start with: this process's, now."""
    return dict(os.environ)


def adopt_environment(variables: dict[str, str]) -> None:
    """In the child: replace the server's environment variables with the parent's (see the module's docstring)."""
    os.environ.clear()
    os.environ.update(variables)
