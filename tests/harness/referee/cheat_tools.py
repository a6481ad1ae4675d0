"""What every cheating test agent uses: a search for the condition among live objects, the call stack, a report file."""

from __future__ import annotations

import json
import os
import sys
import uuid
from typing import Any

from engine.condition import Condition
from engine.environments import Environment


def conditions_reachable(roots: list[Any], limit: int = 200_000) -> list[str]:
    """Every Condition (or Environment) reachable from ``roots`` through attributes, dicts and sequences."""
    found, seen, stack = [], set(), list(roots)
    while stack and len(seen) < limit:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, (str, bytes, int, float, type(None))):
            continue
        seen.add(id(obj))
        if isinstance(obj, (Condition, Environment)):
            found.append(repr(obj))
            continue
        if isinstance(obj, dict):
            stack.extend(obj.values())
        elif isinstance(obj, (list, tuple, set, frozenset)):
            stack.extend(obj)
        if hasattr(obj, "__dict__") and not isinstance(obj, type) and type(obj).__module__ not in ("builtins",):
            attributes = getattr(obj, "__dict__", None)  # some objects' __dict__ is not a dict
            if isinstance(attributes, dict):
                stack.extend(attributes.values())
        for slot in getattr(type(obj), "__slots__", ()):
            stack.append(getattr(obj, slot, None))
    return found


def stack_locals(with_globals: bool = True) -> list[Any]:
    """The values of every frame up the call stack (locals last, so a search popping from the end meets them first)."""
    frame, local_values, global_values = sys._getframe(1), [], []
    while frame is not None:
        local_values.extend(frame.f_locals.values())
        if with_globals:
            global_values.extend(frame.f_globals.values())
        frame = frame.f_back
    return global_values + local_values


def process_tag() -> str:
    """This process's pid and a random part: pids repeat across sandboxes (each has its own PID namespace)."""
    return f"{os.getpid()}-{_TAG}"


_TAG = uuid.uuid4().hex[:12]


def report(name: str, findings: dict[str, Any]) -> None:
    if directory := os.environ.get("CHEAT_REPORT") or os.environ.get("ARENA_AGENT_WRITABLE"):
        with open(os.path.join(directory, f"{name}-{process_tag()}.json"), "w", encoding="utf-8") as out:
            json.dump(findings, out, sort_keys=True)
