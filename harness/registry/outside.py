"""Agents from outside the project (plugins, installed entry points) as the referee's processes know them: by description.

The referee's processes (the ``arena`` command's main process and the workers
that score games: :func:`become_referee`, inherited through
:data:`REFEREE_ENV`) never import code a user names. An agent process imports
the plugins and sends back what they declare (:func:`describe_entries`: names,
descriptions, parameters, origins); the referee's registry then holds a
*placeholder* per outside agent (:func:`placeholder_entries`): enough to parse and
check a spec, never privileged, and impossible to build there (its factory raises
:class:`OutsideAgentHere`). The descriptions travel to the referee's own workers
in :data:`DESCRIBED_ENV`. Agent processes (:func:`become_agent`) import the real
code, as every process did before.
"""

from __future__ import annotations

import json
import os
from typing import Any

from agents.spec import AgentEntry, AgentSpecError, Param

REFEREE_ENV = "OTHELLO_ARENA_REFEREE"  # "1": this process and the workers it starts import no outside agent's code
DESCRIBED_ENV = "OTHELLO_ARENA_OUTSIDE_AGENTS"  # JSON list: the outside agents an agent process described
KINDS: dict[str, type] = {"int": int, "float": float, "str": str, "bool": bool}
OUTSIDE_ENV = "OTHELLO_ARENA_OUTSIDE"  # "0": this agent process serves only the project's agents (imports no outside code)
MAX_TEXT = 2000


class OutsideAgentHere(AgentSpecError):
    """An outside agent was to be built in a referee's process: it is built only in agent processes."""


def referee_side() -> bool:
    """Whether this process is one of the referee's (it imports no outside code)."""
    return os.environ.get(REFEREE_ENV) == "1"


def become_referee() -> None:
    """From now on this process and the processes it starts import no outside code (the ``arena`` command's start)."""
    os.environ[REFEREE_ENV] = "1"


def become_agent() -> None:
    """This process runs agents: it imports plugins and entry points (an agent process's start, or ``--in-process``)."""
    os.environ.pop(REFEREE_ENV, None)
    os.environ.pop(DESCRIBED_ENV, None)
    os.environ.pop(OUTSIDE_ENV, None)


def describe_entries(entries: dict[str, AgentEntry], origins: dict[str, str]) -> list[dict[str, Any]]:
    """What an agent process tells the referee about the outside agents it loaded (JSON)."""
    return [_describe(entries[name], origin) for name, origin in sorted(origins.items()) if name in entries]


def _describe(entry: AgentEntry, origin: str) -> dict[str, Any]:
    params = {
        key: {"kind": param.kind.__name__, "default": param.default, "help": param.help, "choices": param.choices}
        for key, param in entry.params.items()
    }
    return {"name": entry.name, "description": entry.description, "origin": origin, "params": params, "model_driven": entry.model_driven}


def placeholder_entries(descriptions: object) -> list[tuple[AgentEntry, str]]:
    """The referee's entries for described outside agents, each with its origin; a malformed description is an
    AgentSpecError (the description comes from an agent process: it is checked, never trusted)."""
    if not isinstance(descriptions, list):
        raise AgentSpecError("the outside agents' description is not a list")
    return [_placeholder(item) for item in descriptions]


def _placeholder(item: object) -> tuple[AgentEntry, str]:
    if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not isinstance(item.get("params"), dict):
        raise AgentSpecError(f"an outside agent's description is malformed: {str(item)[:200]}")
    name, origin = item["name"][:200], str(item.get("origin", "?"))[:MAX_TEXT]
    params = {str(key): _param(name, str(key), value) for key, value in item["params"].items()}
    factory = _refusing_factory(name, origin)
    description = str(item.get("description", ""))[:MAX_TEXT]
    return AgentEntry(name, factory, description, params, privileged=False, model_driven=bool(item.get("model_driven"))), origin


def _param(agent: str, key: str, value: object) -> Param:
    kind = KINDS.get(value.get("kind", "")) if isinstance(value, dict) else None
    if not isinstance(value, dict) or kind is None:
        raise AgentSpecError(f"outside agent {agent!r}: parameter {key!r} is not an int, float, str or bool parameter")
    default, choices = value.get("default"), value.get("choices")
    return Param(kind, default, str(value.get("help", ""))[:MAX_TEXT], tuple(choices) if isinstance(choices, list) else None)


def _refusing_factory(name: str, origin: str) -> Any:
    def refuse(*_args: Any, **_kwargs: Any) -> Any:
        raise OutsideAgentHere(
            f"agent {name!r} (from {origin}) is built only in agent processes, never in the referee's; "
            "this command cannot run it here (a tournament's --in-process runs every agent in one process, UNENFORCED)"
        )

    refuse.__module__ = "harness.registry.outside"
    refuse.__qualname__ = f"outside agent {name}"
    return refuse


def described() -> list[dict[str, Any]]:
    """The descriptions this process inherited (:data:`DESCRIBED_ENV`), none when unset."""
    text = os.environ.get(DESCRIBED_ENV, "")
    if not text:
        return []
    loaded = json.loads(text)
    return loaded if isinstance(loaded, list) else []


def pass_described(descriptions: list[dict[str, Any]]) -> None:
    """Record the descriptions for the referee's workers started from now on."""
    os.environ[DESCRIBED_ENV] = json.dumps(descriptions)
