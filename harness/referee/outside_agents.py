"""The referee's side of agents from outside the project: their code is described in an agent process, never run here.

:func:`use_plugins` takes the ``--plugin`` sources of a command: it checks that
each names an existing ``.py`` file or a findable module (without running it),
passes them to the agent processes started from now on, and, in a referee's
process (:func:`harness.registry.outside.referee_side`), has an agent process
import them (and the installed packages' entry points) and describe what they
declare (:func:`describe_main`); the referee's registry then knows those agents
by description (placeholders, never privileged). Outside a referee's process
(the library used in-process, a tournament's ``--in-process``) the sources are
imported here, as before.
"""

from __future__ import annotations

import json
import multiprocessing
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from agents.spec import AgentSpecError
from harness.referee.isolation import check_outside_allowed, start_agent
from harness.registry import outside
from harness.registry.importing import installed_entry_points, is_file_source, pass_to_children, source_key
from harness.registry.plugins import load_plugins, plugin_sources
from harness.registry.specs import add_described, agent_origins, become_agent_process, registry

DESCRIBE_SECONDS = 120.0


def describe_main(connection: Any, sources: tuple[str, ...]) -> None:
    """In an agent process: import the plugins (and the installed entry points), send what they declare."""
    outside.become_agent()
    try:
        load_plugins(sources)
        reply: dict[str, Any] = {"agents": outside.describe_entries(registry(), agent_origins())}
    except AgentSpecError as error:
        reply = {"error": str(error)}
    except Exception as error:  # noqa: BLE001 - a plugin may raise anything; the referee reports it
        reply = {"error": f"{type(error).__name__}: {error}"}
    connection.send_bytes(json.dumps(reply, default=str).encode())
    connection.close()


def _checked(source: str) -> str:
    key = source_key(source)
    if is_file_source(key):
        path = Path(key)
        if not path.is_file():
            problem = "is not a file" if path.exists() else "does not exist"
            raise AgentSpecError(
                f"plugin file {key!r} {problem}: give the path of a .py file that declares agents, or a dotted module name"
            )
        if path.suffix != ".py":
            raise AgentSpecError(f"plugin file {key!r} is not a .py file: give a Python source file or a dotted module name")
    return key


def describe(sources: tuple[str, ...]) -> list[dict[str, Any]]:
    """What an agent process says the sources (and the installed entry points) declare; AgentSpecError on failure."""
    connection, process = start_agent(describe_main, (sources,), network=False, outside=True, context=multiprocessing.get_context("spawn"))
    try:
        if not connection.poll(DESCRIBE_SECONDS):
            raise AgentSpecError(f"the plugins {', '.join(sources) or '(installed)'} were not described within {DESCRIBE_SECONDS:g} s")
        reply = json.loads(connection.recv_bytes(1 << 22))
    except (EOFError, OSError, ValueError) as error:
        raise AgentSpecError(
            f"the process importing the plugins ended without describing them ({type(error).__name__}); see its stderr above"
        ) from None
    finally:
        connection.close()
        process.join(10)
    if not isinstance(reply, dict) or ("error" not in reply and not isinstance(reply.get("agents"), list)):
        raise AgentSpecError("the process importing the plugins answered something that is not a description")
    if "error" in reply:
        raise AgentSpecError(str(reply["error"])[:2000])
    return list(reply["agents"])


def use_plugins(sources: Iterable[str], in_process: bool = False) -> list[str]:
    """Make the ``--plugin`` sources' agents known (see the module docstring); the option words that reproduce them.

    ``in_process``: the command runs its agents in this process (``--in-process``, UNENFORCED), which therefore
    imports them."""
    keys = [_checked(source) for source in sources]
    if in_process:
        become_agent_process()
    if not outside.referee_side():
        load_plugins(keys)
    else:
        passed = plugin_sources()
        pass_to_children([*passed, *(key for key in keys if key not in passed)])
        if plugin_sources() or installed_entry_points():
            check_outside_allowed()  # before anything starts: a one-line refusal where the walls cannot stand
            descriptions = describe(plugin_sources())
            add_described(descriptions)
            outside.pass_described(descriptions)
    return [word for key in keys for word in ("--plugin", key)]
