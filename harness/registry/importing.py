"""Importing agent modules from outside the project: a dotted module name, a ``.py`` file, an installed entry point.

Each function returns the agents a module declares (``@agents.spec.register``) with
the origin the registry records for them: the module name, the file's absolute
path, or ``othello_arena.agents:NAME=VALUE`` for an entry point. Whatever goes
wrong (a missing file, a syntax error, an exception raised while importing) is an
:class:`~agents.spec.AgentSpecError` naming the source and the error, never a
traceback. The registry (:mod:`harness.registry.specs`) imports installed entry
points and inherited plugins when it is first built; :mod:`harness.registry.plugins`
loads the ones a user names.

A process that loaded plugins passes their sources to the processes it spawns in the
environment variable :data:`PLUGINS_ENV` (a JSON list), which a spawned worker's
registry reads when it is first built, so a plugin agent is known there too.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import importlib.util
import json
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from agents.spec import AgentEntry, AgentSpecError, declared_entries
from harness.registry.outside import referee_side

ENTRY_POINT_GROUP = "othello_arena.agents"
PLUGINS_ENV = "OTHELLO_ARENA_PLUGINS"
_FILE_MODULE_PREFIX = "othello_arena_plugin_"


def is_file_source(source: str) -> bool:
    """Whether a plugin source names a file (ends in ``.py``, has a path separator, or is one) rather than a module."""
    return source.endswith(".py") or "/" in source or os.sep in source or Path(source).is_file()


def source_key(source: str | Path) -> str:
    """The source as recorded: a file's absolute path, or the module name without surrounding spaces."""
    text = str(source).strip()
    if not text:
        raise AgentSpecError("--plugin needs a value: a dotted module name (mypkg.agents) or the path of a .py file")
    return str(Path(text).expanduser().resolve()) if is_file_source(text) else text


def import_source(source: str) -> tuple[str, list[AgentEntry]]:
    """The origin and the declared agents of a plugin source (a file path or a dotted module name)."""
    key = source_key(source)
    module = import_file(Path(key)) if is_file_source(key) else import_module_named(key, "plugin module")
    return key, declared_entries(vars(module))


def refuse_in_referee(what: str) -> None:
    """Outside code is never imported in a referee's process (:mod:`harness.registry.outside`): AgentSpecError."""
    if referee_side():
        raise AgentSpecError(f"{what} would be imported in a referee's process; only agent processes import outside code")


def import_file(path: Path) -> ModuleType:
    """The module of a ``.py`` file, imported under a name unique to its absolute path (reused if imported already).

    The name is the same in every process, so a spawned worker that loads the same
    file gets the same module name.
    """
    path = path.expanduser().resolve()
    refuse_in_referee(f"plugin file {str(path)!r}")
    if not path.is_file():
        problem = "is not a file" if path.exists() else "does not exist"
        raise AgentSpecError(
            f"plugin file {str(path)!r} {problem}: give the path of a .py file "
            "that declares agents with @agents.spec.register, or a dotted module name"
        )
    if path.suffix != ".py":
        raise AgentSpecError(f"plugin file {str(path)!r} is not a .py file: give a Python source file or a dotted module name")
    name = file_module_name(path)
    existing = sys.modules.get(name)
    if existing is not None and getattr(existing, "__file__", None) == str(path):
        return existing
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise AgentSpecError(f"plugin file {str(path)!r} cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # before executing, so its classes pickle and dataclasses resolve their module
    try:
        spec.loader.exec_module(module)
    except BaseException as error:
        del sys.modules[name]
        if not isinstance(error, Exception):
            raise
        raise AgentSpecError(f"plugin file {str(path)!r} failed to import: {_describe(error)}") from None
    return module


def file_module_name(path: Path) -> str:
    """``othello_arena_plugin_<stem>_<hash of the absolute path>``: unique per file, stable across processes."""
    stem = re.sub(r"\W", "_", path.stem)
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:10]
    return f"{_FILE_MODULE_PREFIX}{stem}_{digest}"


def import_module_named(name: str, what: str = "agent module") -> ModuleType:
    """An importable module by dotted name; a missing one or one that raises is an AgentSpecError naming it."""
    refuse_in_referee(f"{what} {name!r}")
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as missing:
        if missing.name is not None and name != missing.name and not name.startswith(missing.name + "."):
            raise AgentSpecError(f"{what} {name!r} failed to import: {_describe(missing)}") from None
        raise AgentSpecError(
            f"cannot import {what} {name!r} ({missing}): give an importable module name, "
            "with its folder on sys.path (PYTHONPATH), or the path of a .py file"
        ) from None
    except Exception as error:  # noqa: BLE001 - a plugin may raise anything while importing
        raise AgentSpecError(f"{what} {name!r} failed to import: {_describe(error)}") from None


def installed_entry_points() -> list[importlib.metadata.EntryPoint]:
    """The entry points of the ``othello_arena.agents`` group of the installed distributions (each once)."""
    seen: dict[tuple[str, str], importlib.metadata.EntryPoint] = {}
    for entry_point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        seen.setdefault((entry_point.name, entry_point.value), entry_point)
    return list(seen.values())


def entry_point_origin(entry_point: importlib.metadata.EntryPoint) -> str:
    """``othello_arena.agents:NAME=VALUE``, as manifests record it."""
    return f"{ENTRY_POINT_GROUP}:{entry_point.name}={entry_point.value}"


def import_entry_point(entry_point: importlib.metadata.EntryPoint) -> tuple[str, list[AgentEntry]]:
    """The origin and the declared agents of an entry point naming a module (or one decorated factory)."""
    origin = entry_point_origin(entry_point)
    refuse_in_referee(f"entry point {origin}")
    try:
        loaded = entry_point.load()
    except Exception as error:  # noqa: BLE001 - an installed plugin may raise anything while importing
        raise AgentSpecError(
            f"entry point {origin} (an installed plugin) failed to load: {_describe(error)}; fix or uninstall the package that declares it"
        ) from None
    namespace = vars(loaded) if isinstance(loaded, ModuleType) else {entry_point.name: loaded}
    return origin, declared_entries(namespace)


def inherited_sources() -> list[str]:
    """The plugin sources a parent process passed down in :data:`PLUGINS_ENV` (none when it is unset)."""
    text = os.environ.get(PLUGINS_ENV, "").strip()
    if not text:
        return []
    try:
        sources = json.loads(text)
    except json.JSONDecodeError:
        sources = None
    if not isinstance(sources, list) or not all(isinstance(s, str) for s in sources):
        raise AgentSpecError(
            f"environment variable {PLUGINS_ENV}={text!r} is not a JSON list of plugin sources: "
            f'write e.g. ["mypkg.agents", "/path/to/agent.py"], or unset it'
        )
    return sources


def pass_to_children(sources: Sequence[str]) -> None:
    """Record ``sources`` in :data:`PLUGINS_ENV`, so processes spawned from now on load them too."""
    os.environ[PLUGINS_ENV] = json.dumps(list(sources))


def _describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"
