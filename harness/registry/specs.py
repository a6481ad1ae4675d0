"""The agent registry: every agent a spec string can name, classical and model-driven, built from specs.

A spec is ``name`` or ``name:key=value,key=value`` (e.g. ``minimax:depth=5``).
The family modules in :data:`FAMILY_MODULES` declare their agents with
:func:`agents.spec.register`; :func:`registry` imports them on first use and
collects the entries, then those of plugins from outside the project (installed
entry points; see :mod:`harness.registry.plugins`). :func:`make_agent` builds
one from a spec, and bad specs get an error listing what is valid. The registry sits in the harness because it must
see both ``agents/`` and the model-driven agents of :mod:`harness.prompting`.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

import numpy as np

from agents.base import Agent, AgentContext
from agents.spec import AgentEntry, AgentSpecError, Param, declared_entries
from harness.registry import outside
from harness.registry.importing import (
    ENTRY_POINT_GROUP,
    PLUGINS_ENV,
    import_entry_point,
    import_module_named,
    import_source,
    inherited_sources,
    installed_entry_points,
)

# Modules whose agents the registry knows (one per family).
FAMILY_MODULES = (
    "agents.heuristic.simple",
    "agents.heuristic.positional",
    "agents.posnet.network",
    "agents.ntuple.agent",
    "agents.az.agent",
    "agents.search.minimax",
    "agents.search.mcts",
    "agents.adaptive_minimax.agent",
    "agents.interval.agent",
    "harness.prompting.policy_agent",
    "harness.prompting.strategist_agent",
    "harness.cwm.spec",
    "harness.envs.ppo_agent",
)

_REGISTRY: dict[str, AgentEntry] = {}
_ORIGINS: dict[str, str] = {}  # agent name -> where an agent from outside FAMILY_MODULES came from
_collected: list[str] = []  # the family modules already read
_project_only: list[bool] = []  # [True] in an agent process that serves only the project's agents
_installed: list[bool] = []  # [True] once the installed entry points and inherited plugins are in


def add_family_module(module: str) -> None:
    """Make the agents a module declares (``@agents.spec.register``) known by spec, e.g. your own agent's module.

    The module is imported now, so a name that cannot be imported fails here, and a
    spec name that is already taken is refused (the registry never replaces an agent).
    Worker processes do not inherit it: :func:`harness.registry.plugins.load_plugins` does that.
    """
    add_agents(declared_entries(vars(import_module_named(module))), module)


def add_agents(entries: list[AgentEntry], origin: str) -> None:
    """Register agents declared outside the project's families, recording ``origin`` (a module, file or entry point).

    All or nothing: a source that declares no agent, or an agent name that another
    agent has taken, is an AgentSpecError and nothing of it is registered. Adding
    the same factories again (the same module loaded twice) changes nothing.
    """
    registry()
    _add(entries, origin)


def _add(entries: list[AgentEntry], origin: str) -> None:
    if not entries:
        raise AgentSpecError(f"{_quoted(origin)} declares no agent: decorate its factory with @agents.spec.register(...)")
    for entry in entries:
        taken = _REGISTRY.get(entry.name)
        if taken is not None and taken.factory is not entry.factory:
            holder = _ORIGINS.get(entry.name, taken.factory.__module__)
            raise AgentSpecError(f"agent name {entry.name!r} (from {_quoted(origin)}) is taken by {_quoted(holder)}: choose another name")
    for entry in entries:
        if entry.name not in _REGISTRY:
            _REGISTRY[entry.name] = entry
            _ORIGINS[entry.name] = origin


def _quoted(origin: str) -> str:
    return origin if origin.startswith(ENTRY_POINT_GROUP + ":") else repr(origin)


def registry() -> dict[str, AgentEntry]:
    """All registered agents, by name.

    On first use it imports the family modules, then the modules of installed
    packages' ``othello_arena.agents`` entry points, then the plugins a parent
    process passed down (:mod:`harness.registry.importing`); a broken one is an
    AgentSpecError naming it (and the next call tries again).
    """
    for module in FAMILY_MODULES:
        if module not in _collected:
            for entry in declared_entries(vars(importlib.import_module(module))):
                _REGISTRY.setdefault(entry.name, entry)
            _collected.append(module)
    if not _installed:
        if outside.referee_side():  # the referee imports no outside code: it knows outside agents by description
            for entry, origin in outside.placeholder_entries(outside.described()):
                _add([entry], origin)
        else:
            for entry_point in installed_entry_points():
                origin, entries = import_entry_point(entry_point)
                _add(entries, origin)
            for source in inherited_sources():
                origin, entries = import_source(source)
                _add(entries, origin)
        _installed.append(True)
    return dict(_REGISTRY)


def become_agent_process() -> None:
    """This process runs agents. Where its starter said it serves only the project's agents
    (:data:`~harness.registry.outside.OUTSIDE_ENV` ``"0"``), it imports no outside code at all (no plugin, no
    installed entry point): an outside agent's code then cannot reach a project agent's process. Otherwise it imports
    them (the placeholders of a referee's registry, if it had any, are dropped first)."""
    project_only = os.environ.get(outside.OUTSIDE_ENV) == "0"
    outside.become_agent()
    placeholders = [name for name, entry in _REGISTRY.items() if entry.factory.__module__ == outside.__name__]
    for name in placeholders:
        del _REGISTRY[name]
        _ORIGINS.pop(name, None)
    _project_only[:] = [project_only]
    if project_only:
        os.environ.pop(PLUGINS_ENV, None)
        _installed[:] = [True]
    elif placeholders or not _ORIGINS:
        _installed.clear()


def project_agents_only() -> bool:
    """Whether this agent process serves only the project's agents (:func:`become_agent_process`): it loads no plugin."""
    return bool(_project_only and _project_only[0])


def is_outside(spec: str) -> bool:
    """Whether the spec names an agent from outside the project (a plugin's, an installed package's)."""
    return parse_spec(spec)[0].name in agent_origins()


def add_described(descriptions: list[dict[str, Any]]) -> None:
    """In a referee's process: make the outside agents an agent process described known by spec (placeholders)."""
    registry()
    for entry, origin in outside.placeholder_entries(descriptions):
        if entry.name not in _REGISTRY:
            _add([entry], origin)


def agent_origins() -> dict[str, str]:
    """Where each agent from outside the project's families came from: module name, file path or entry point."""
    registry()
    return dict(_ORIGINS)


def parse_spec(spec: str) -> tuple[AgentEntry, dict[str, Any]]:
    """The entry and the full parameter values (defaults filled in) of a spec string."""
    entry, values, _ = _parse(spec)
    return entry, values


def _parse(spec: str) -> tuple[AgentEntry, dict[str, Any], set[str]]:
    """Entry, full parameter values, and the names of the parameters the spec writes out."""
    entries = registry()
    name, _, arguments = spec.strip().partition(":")
    if name not in entries:
        raise AgentSpecError(f"unknown agent {name!r}; valid agents: {', '.join(sorted(entries))} (`arena agents` lists them)")
    entry = entries[name]
    values = {key: param.default for key, param in entry.params.items()}
    given: set[str] = set()
    for item in filter(None, (part.strip() for part in arguments.split(","))):
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep and key in entry.params:
            raise AgentSpecError(f"agent {name!r}: parameter {key!r} needs a value, e.g. {key}=<{entry.params[key].kind.__name__}>")
        if not sep or key not in entry.params:
            valid = ", ".join(f"{k}=<{p.kind.__name__}>" for k, p in entry.params.items()) or "none"
            raise AgentSpecError(f"agent {name!r} has no parameter {item!r}; valid parameters: {valid}")
        values[key] = _convert(name, key, raw.strip(), entry.params[key])
        given.add(key)
    return entry, values, given


def _convert(agent: str, key: str, raw: str, param: Param) -> Any:
    try:
        if param.kind is bool:
            if raw.lower() not in ("true", "false", "1", "0", "yes", "no"):
                raise ValueError(raw)
            value: Any = raw.lower() in ("true", "1", "yes")
        else:
            value = param.kind(raw)
    except ValueError:
        raise AgentSpecError(f"{agent}:{key}={raw!r} is not a valid {param.kind.__name__}") from None
    if param.choices is not None and value not in param.choices:
        raise AgentSpecError(f"{agent}:{key}={raw!r}: choose one of {', '.join(map(str, param.choices))}")
    return value


def make_agent(spec: str, context: AgentContext, rng: np.random.Generator) -> Agent:
    """A new agent from a spec string such as ``minimax:depth=5``."""
    entry, values = parse_spec(spec)
    agent = entry.factory(context, rng, **values)
    agent.name = canonical_spec(spec)
    return agent


def canonical_spec(spec: str) -> str:
    """The spec with the parameters it writes out (normalised values, declared order).

    Parameters left at their defaults without being written are omitted, so
    ``minimax:depth=5`` stays ``minimax:depth=5`` in every table even though 5 is
    the default, and ``minimax`` stays ``minimax``.
    """
    entry, values, given = _parse(spec)
    shown = [f"{k}={_show(v)}" for k, v in values.items() if k in given]
    return entry.name + (":" + ",".join(shown) if shown else "")


def _show(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)
