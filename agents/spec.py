"""How an agent family declares the agents a spec string can name: :func:`register`, :class:`Param`.

A spec is ``name`` or ``name:key=value,key=value`` (e.g. ``minimax:depth=5``).
Decorating a factory ``factory(context, rng, **params)`` with :func:`register`
attaches its :class:`AgentEntry`; nothing is registered globally here. The
registry that knows every agent, classical and model-driven, and builds them
from specs is :mod:`harness.registry.specs`, which reads these entries from the
family modules it lists. :func:`whole_number` and :func:`check_whole_numbers` check
the whole-number settings of agents and training runs with one wording.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agents.base import Agent


class AgentSpecError(ValueError):
    """An unknown agent name, parameter or value in a spec string."""


@dataclass(frozen=True)
class Param:
    """One spec parameter: its type (int, float, bool or str), default and a help line."""

    kind: type
    default: Any
    help: str = ""
    choices: tuple[Any, ...] | None = None


@dataclass(frozen=True)
class AgentEntry:
    name: str
    factory: Callable[..., Agent]
    description: str
    params: dict[str, Param] = field(default_factory=dict)
    privileged: bool = False
    model_driven: bool = False


ENTRY_ATTRIBUTE = "agent_entry"


def register(
    name: str, description: str, params: dict[str, Param] | None = None, privileged: bool = False, model_driven: bool = False
) -> Callable[[Callable[..., Agent]], Callable[..., Agent]]:
    """Decorator: ``factory(context, rng, **params)`` becomes the agent called ``name`` (its entry is attached to it)."""

    def decorate(factory: Callable[..., Agent]) -> Callable[..., Agent]:
        entry = AgentEntry(name, factory, description, dict(params or {}), privileged, model_driven)
        setattr(factory, ENTRY_ATTRIBUTE, entry)
        return factory

    return decorate


def whole_number(name: str, value: Any, minimum: int, error: type[Exception] = ValueError, prefix: str = "") -> int:
    """``value`` if it is an int (not a bool) >= ``minimum``; else ``error`` saying ``{prefix}{name}=...: give a whole number >= ...``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise error(f"{prefix}{name}={value!r}: give a whole number >= {minimum}")
    return value


def check_whole_numbers(settings: object, minima: dict[str, int], error: type[Exception] = ValueError, prefix: str = "") -> None:
    """:func:`whole_number` on each attribute of ``settings`` that ``minima`` names, in its order."""
    for name, minimum in minima.items():
        whole_number(name, getattr(settings, name), minimum, error, prefix)


def declared_entries(namespace: dict[str, object]) -> list[AgentEntry]:
    """The entries of the factories a module defines (its ``vars()``), in definition order."""
    found = []
    for value in namespace.values():
        entry = getattr(value, ENTRY_ATTRIBUTE, None)
        if isinstance(entry, AgentEntry) and entry.factory is value and entry not in found:
            found.append(entry)
    return found
