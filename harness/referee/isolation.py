"""How agent processes start: behind the walls (:mod:`harness.referee.walls`), or, without bubblewrap, as plain
processes, and then only when no outside code is involved or the user said ``--unsandboxed-agents``.

Every place that starts an agent process (:class:`~harness.referee.session.AgentSession`,
:class:`~harness.referee.seats.Seat`, :class:`~harness.referee.model_session.ModelSession`,
the outside agents' describer) calls :func:`start_agent`. :func:`agent_isolation`
says how this process's agent processes run, for manifests and reports: ``walled``,
or ``not isolated`` (the project's own agents only), or ``UNENFORCED`` (agents from
plugins or installed packages outside the walls).
"""

from __future__ import annotations

import importlib.machinery
import json
import os
import sys
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from agents.spec import AgentSpecError
from harness.referee.agent_view import INSIDE
from harness.referee.walls import start_unwalled, start_walled, walls_problem
from harness.registry.importing import installed_entry_points, is_file_source
from harness.registry.outside import described
from harness.registry.plugins import plugin_sources

UNSANDBOXED_ENV = "OTHELLO_ARENA_UNSANDBOXED_AGENTS"  # "1": the user said --unsandboxed-agents (workers inherit it)


class WallsMissing(AgentSpecError):
    """Agents from outside the project would run outside the walls, and the user did not allow it."""


def allow_unsandboxed_agents() -> None:
    """``--unsandboxed-agents``: agent processes start as plain processes, outside the walls, even where they could
    stand (agents from plugins among them: the run is marked UNENFORCED)."""
    os.environ[UNSANDBOXED_ENV] = "1"


def outside_code() -> bool:
    """Whether agent processes of this run load code from outside the project (plugins, installed entry points)."""
    return bool(plugin_sources()) or bool(described()) or bool(installed_entry_points())


def agent_isolation() -> dict[str, Any]:
    """How agent processes run here: ``{"mode": "walled" | "not isolated" | "UNENFORCED", "reason": ...}``."""
    problem = walls_problem() if os.environ.get(UNSANDBOXED_ENV) != "1" else "--unsandboxed-agents"
    if problem is None:
        return {"mode": "walled", "reason": None}
    return {"mode": "UNENFORCED" if outside_code() else "not isolated", "reason": problem}


def plugin_view(sources: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What agent processes must see of the plugins: files to bind, folders to put first on ``sys.path``.

    A file plugin is bound with the ``.py`` files beside it (its helper modules; nothing else of its folder: no
    subfolder, no data file, no run directory), its folder first on the path, as a script's is; a module plugin's
    top-level package (found on this process's ``sys.path`` without running it), with its parent folder on the path.
    A module installed in the virtual environment needs neither."""
    binds: list[str] = []
    paths: list[str] = []
    prefix = os.path.realpath(sys.prefix)
    for source in sources:
        if is_file_source(source):
            folder = Path(os.path.realpath(source)).parent
            binds += sorted(str(path) for path in folder.glob("*.py") if path.is_file())
            paths.append(str(folder))
            continue
        spec = importlib.machinery.PathFinder.find_spec(source.split(".")[0], sys.path)
        if spec is None or spec.origin in (None, "namespace") and not spec.submodule_search_locations:
            continue
        locations = list(spec.submodule_search_locations or [])
        place = os.path.realpath(locations[0] if locations else str(spec.origin))
        if not place.startswith(prefix + os.sep):
            binds.append(place)
            paths.append(str(Path(place).parent))
    return tuple(dict.fromkeys(binds)), tuple(dict.fromkeys(paths))


def _shown(path: str) -> str:
    """A host file as the agent process must find it: at its own place, or (a relative path: the process's working
    directory is its private /tmp) at that path under /tmp."""
    if os.path.isabs(path):
        return os.path.realpath(path)
    return f"{os.path.realpath(path)}{INSIDE}{os.path.normpath(os.path.join('/tmp', path))}"


def check_outside_allowed(problem: str | None = None) -> None:
    """WallsMissing when outside code would run outside the walls and the user did not say ``--unsandboxed-agents``."""
    problem = problem or walls_problem()
    if problem is not None and outside_code() and os.environ.get(UNSANDBOXED_ENV) != "1":
        raise WallsMissing(
            f"agent processes cannot start behind the sandbox's walls here ({problem}), and agents from plugins or "
            "installed packages run only behind them: install bubblewrap and run as root, or say --unsandboxed-agents "
            "to run them as plain processes (the run is then marked UNENFORCED)"
        )


def start_agent(
    target: Callable[..., Any],
    args: tuple[Any, ...],
    *,
    network: bool,
    outside: bool,
    context: Any,
    unwalled_args: tuple[Any, ...] | None = None,
    files: tuple[str, ...] = (),
    writable: tuple[str, ...] = (),
    outside_walls: str | None = None,
) -> tuple[Connection, Any]:
    """``target(connection, *args)`` in a new agent process: behind the walls where they stand (``outside``: it runs
    agents from outside the project, and sees and imports the plugins; else it imports no outside code); else a plain
    process of ``context`` (with ``unwalled_args`` when given), refused when outside code is involved and the user did
    not say ``--unsandboxed-agents``. ``files``: host files it must read (a scripted model's replies), bound
    read-only; ``writable``: host folders made for it to write in (a shared PPO training); ``outside_walls``: why
    this process must start outside the walls (a project agent that starts a sandbox of its own)."""
    problem = outside_walls or (walls_problem() if os.environ.get(UNSANDBOXED_ENV) != "1" else "--unsandboxed-agents")
    if problem is None:
        binds, paths = plugin_view(plugin_sources()) if outside else ((), ())
        readable = tuple(_shown(path) for path in files if os.path.isfile(path))
        folders = tuple(os.path.realpath(folder) for folder in writable)
        return start_walled(target, args, network=network, outside=outside, binds=binds + readable, paths=paths, writable=folders)
    check_outside_allowed(problem)
    return start_unwalled(target, unwalled_args if unwalled_args is not None else args, context)


REFEREE_RECORD = "referee.json"  # in a run directory: how its agent processes ran and what the referee refused them


def write_referee_record(run_dir: Path, privileged: Any, isolation: dict[str, Any] | None = None) -> None:
    """Record, in the run directory, how the agent processes ran (``isolation``; default: as this process starts
    them) and every privileged request the referee refused (``privileged``: the ledger's
    :class:`~engine.protocol.arena.PrivilegedUsage`)."""
    processes = isolation or agent_isolation()
    record = {"agent_processes": processes, "refused_requests": list(privileged.refused), "grants": list(privileged.grants)}
    temporary = run_dir / f".{REFEREE_RECORD}.tmp"
    temporary.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    os.replace(temporary, run_dir / REFEREE_RECORD)


def read_referee_record(run_dir: Path) -> dict[str, Any]:
    """What :func:`write_referee_record` wrote (empty when nothing was: an in-process run, an older run)."""
    try:
        record = json.loads((run_dir / REFEREE_RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def isolation_lines(record: dict[str, Any]) -> list[str]:
    """A report's lines on the agent processes' walls and the refused requests (none when walled and none refused)."""
    lines = []
    processes = record.get("agent_processes") or {}
    mode = processes.get("mode")
    if mode == "walled":
        lines.append("Agent process: behind the sandbox's walls (its own PID namespace and uid; no run directory, no referee in view).")
    elif mode == "UNENFORCED":
        lines.append(f"UNENFORCED: agents from plugins ran outside the walls ({processes.get('reason')}); they could reach K.")
    elif mode == "not isolated":
        lines.append(f"Agent processes ran outside the walls ({processes.get('reason')}): the project's own agents only.")
    refused = record.get("refused_requests") or []
    if refused:
        reasons = ", ".join(repr(str(reason)[:80]) for reason in refused[:5])
        lines.append(f"REFUSED PRIVILEGED REQUESTS: {len(refused)} (reasons: {reasons}); none was granted.")
    return lines
