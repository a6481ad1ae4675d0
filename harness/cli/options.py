"""Parsers of the arguments several commands share: env ids, env ranges, the ENV | --layout pair, --plugin,
and agent specs (:func:`parse_specs`, the one grammar of ``--opponents``, ``--agents``, ``--vs`` and ``match A B``).

Every problem a user can cause is raised as ``typer.BadParameter`` (or as the engine's
own error types), which ``harness.cli.main`` turns into a one-line ``error: ...``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from agents.spec import AgentSpecError
from engine import Layout, Rules, make_env
from engine.environments import N_CONDITIONS, N_LAYOUTS, Environment
from engine.layout_text import load_layout
from harness.registry.importing import source_key
from harness.registry.plugins import load_plugins
from harness.registry.specs import parse_spec

N_ENVS = N_LAYOUTS * N_CONDITIONS

# Parameters several commands take, as typer ``Annotated`` types.
EnvArgument = Annotated[str | None, typer.Argument(metavar="ENV", help="Environment id, 0-55.", show_default=False)]
LayoutOption = Annotated[
    Path | None, typer.Option("--layout", metavar="FILE", help="A layout text file instead of an environment.")
]
PluginOption = Annotated[list[str] | None, typer.Option(
    "--plugin", metavar="MODULE_OR_FILE", show_default=False,
    help="Your own agents: a dotted module name or a .py file that declares them with @agents.spec.register "
         "(repeatable; loaded before the specs are read, and in every worker process).",
)]
_RANGE_ITEM = re.compile(r"^(\d+)(?:-(\d+))?$")
_PARAMETER_ITEM = re.compile(r"^[A-Za-z_][\w-]*\s*=")  # key=value: continues the spec before it
SPEC_GRAMMAR = ("one spec per flag, the flag repeats (--opponents random --opponents mcts:n=30,c=1.0); "
                "a spec's parameters follow its colon, separated by commas")


def use_plugins(plugins: list[str] | None) -> list[str]:
    """Load the ``--plugin`` sources before any spec is read; returns the option words that reproduce them.

    Files appear with their absolute paths in the words, so a recorded command works
    from any directory.
    A missing file, an import error or a taken agent name is an AgentSpecError naming
    the plugin, which the CLI prints as one ``error:`` line.
    """
    load_plugins(plugins or ())
    return [word for source in plugins or () for word in ("--plugin", source_key(source))]


def parse_env_id(text: str) -> int:
    """An environment id (``"4"``) as an int; an unknown one raises with the valid range."""
    cleaned = text.strip()
    if not cleaned.isdigit():
        raise typer.BadParameter(f"ENV must be an environment id 0-{N_ENVS - 1}, got {text!r}")
    env_id = int(cleaned)
    make_env(env_id)  # raises UnknownEnvironmentError with the valid ids
    return env_id


def parse_env_range(text: str) -> list[int]:
    """Env ids from ``0-6``, ``0,3,5``, ``0-2,9`` or ``all``: ascending ranges, ids 0-55, no repeats.

    The ids keep the order they are written in; a repeated id is kept once.
    """
    if text.strip().lower() == "all":
        return list(range(N_ENVS))
    ids: list[int] = []
    items = [item.strip() for item in text.split(",")]
    if not text.strip() or any(not item for item in items):
        raise typer.BadParameter(
            f"env range {text!r} is empty or has an empty item: write e.g. 0-6, 0,3,5 or all"
        )
    for item in items:
        match = _RANGE_ITEM.match(item)
        if not match:
            raise typer.BadParameter(
                f"env range item {item!r} is not an id or a range: write e.g. 0-6, 0,3,5 or all"
            )
        first = int(match.group(1))
        last = int(match.group(2)) if match.group(2) is not None else first
        if last < first:
            raise typer.BadParameter(f"env range {item!r} runs backwards: write {last}-{first}")
        if last >= N_ENVS:
            raise typer.BadParameter(f"env range {item!r} goes past the last id: ids are 0-{N_ENVS - 1}")
        ids.extend(i for i in range(first, last + 1) if i not in ids)
    return ids


def read_layout_file(path: Path) -> Layout:
    """The layout in a text file (``engine.layout_text`` format); LayoutError naming the path otherwise."""
    return load_layout(path)


@dataclass(frozen=True)
class Target:
    """What a command works on: a benchmark environment, or a layout file (no turn limit)."""

    rules: Rules
    title: str
    env: Environment | None = None

    @property
    def layout(self) -> Layout:
        return self.rules.layout


def resolve_target(env_text: str | None, layout_path: Path | None) -> Target:
    """The rules for ``ENV`` or ``--layout FILE`` (exactly one of them)."""
    if env_text is not None and layout_path is not None:
        raise typer.BadParameter("give either ENV or --layout FILE, not both")
    if env_text is None and layout_path is None:
        raise typer.BadParameter("give an environment id (ENV, 0-55) or --layout FILE")
    if layout_path is not None:
        layout = read_layout_file(layout_path)
        name = layout.name or layout_path.name
        return Target(Rules(layout), f"{name} ({layout.describe()}, no turn limit)")
    env = make_env(parse_env_id(env_text))
    limit = env.condition.turn_limit
    limit_text = f", turn limit {turn_limit_text(env)}" if limit else ""
    return Target(env.rules, f"env {env.id}: {env.name} ({env.layout.describe()}{limit_text})", env)


def turn_limit_text(env: Environment) -> str:
    """``10 per player`` / ``10 in total`` / ``none``."""
    if not env.condition.turn_limit:
        return "none"
    return f"{env.condition.turn_limit} {_counting_words(env.condition.turn_counting)}"


def _counting_words(counting: str) -> str:
    return "per player" if counting == "per_player" else "in total"


def parse_specs(values: str | list[str] | tuple[str, ...] | None, option: str) -> list[str]:
    """The agent specs of a repeatable spec option (``--opponents``, ``--agents``, ``--vs``), each one checked.

    One spec per flag value; the flag repeats. Commas inside a spec never split it:
    ``mcts:n=30,c=1.0`` is one spec, as an item of the form ``key=value`` always
    continues the spec before it. For backward compatibility one value may still hold
    several specs where that is unambiguous: ``random,greedy,mcts:n=30,c=1.0`` is three
    specs, and a value with ``;`` is split on ``;`` only (``mcts:n=30,c=1.0;random``).
    Every spec is parsed against the registry (load ``--plugin`` sources first); an
    error names the option, the spec and the parameter.
    """
    words = [values] if isinstance(values, str) else list(values or ())
    specs = [spec for word in words for spec in _split_value(word, option)]
    if not specs:
        raise typer.BadParameter(f"{option}: no agent specs given ({SPEC_GRAMMAR})")
    for spec in specs:
        check_spec(spec, option)
    return specs


def check_spec(spec: str, where: str) -> str:
    """``spec`` itself if the registry can build it; otherwise BadParameter naming ``where``, the spec and the problem."""
    try:
        parse_spec(spec)
    except AgentSpecError as error:
        raise typer.BadParameter(f"{where} {spec!r}: {error}") from None
    return spec


def _split_value(word: str, option: str) -> list[str]:
    if ";" in word:
        items = [item.strip() for item in word.split(";")]
        if not all(items):
            raise typer.BadParameter(f"{option} {word!r} has an empty item ({SPEC_GRAMMAR})")
        return items
    specs: list[str] = []
    for item in (part.strip() for part in word.split(",")):
        if not item:
            raise typer.BadParameter(f"{option} {word!r} has an empty item ({SPEC_GRAMMAR})")
        if _PARAMETER_ITEM.match(item):
            if not specs:
                raise typer.BadParameter(f"{option} {word!r}: parameter {item!r} has no agent before it: "
                                         f"write e.g. mcts:{item}")
            specs[-1] += ("," if ":" in specs[-1] else ":") + item
        else:
            specs.append(item)
    return specs


def refuse_newer_schema(path: Path, readable: int) -> None:
    """BadParameter when the JSON file at ``path`` carries a ``schema_version`` newer than ``readable``.

    A run directory written by a newer arena is refused in one line rather than read
    wrongly; a missing or unreadable file is left to the command that reads it.
    """
    try:
        version = json.loads(path.read_text(encoding="utf-8")).get("schema_version")
    except (OSError, ValueError, AttributeError):
        return
    if isinstance(version, int) and version > readable:
        raise typer.BadParameter(f"{path}: schema_version {version} is newer than this arena reads ({readable}): "
                                 "the run was written by a newer version of arena; upgrade it to read the run")
