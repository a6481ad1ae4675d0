"""One environment spec for every command: the single parser of what ``--env``/``--envs`` name.

A spec is one of

- an id of the paper's 56 environments: ``7``;
- a layout file with a condition and optional rules:
  ``layout=boards/x.txt,condition=majority<0.7,turns=15`` (fields ``layout`` and
  ``condition`` required; ``turns`` a turn limit >= 1; ``counting`` ``per_player``
  (default) or ``total``; the condition grammar is ``engine.condition_grammar``'s);
- a TOML file (``*.toml``) with the same fields as keys (``layout`` relative to the file);
- an entry of a suite made by ``arena envs new``: ``SUITE:ENTRY`` (``runs/s1:3``).

:func:`env_key` turns a spec into its *key*: the id as an int, or a canonical text
(absolute paths, canonical condition) that :func:`make_env` rebuilds the environment
from in any process and that run manifests and plans record, so that resume, replay
and rerun find the same environment. Every error names the field and what would be right.
"""

from __future__ import annotations

import hashlib
import tomllib
from pathlib import Path
from typing import Any

from engine.condition import TURN_COUNTINGS, ConditionError
from engine.condition_grammar import parse_condition
from engine.environments import N_CONDITIONS, N_LAYOUTS, Environment
from engine.environments import make_env as make_paper_env
from engine.layout import LayoutError
from engine.layout_text import load_layout
from engine.suite import SuiteError, suite_directory, suite_env

EnvKey = int | str
FIELDS = ("layout", "condition", "turns", "counting")
N_PAPER_ENVS = N_LAYOUTS * N_CONDITIONS
SPEC_FORMS = "an id 0-55, layout=FILE,condition=COND[,turns=N][,counting=total], a .toml file with those keys, or SUITE:ENTRY"


class EnvSpecError(ValueError):
    """A spec that names no environment; the message names the field and what would be right."""


def env_key(spec: str | int, base: Path | None = None) -> EnvKey:
    """The canonical key of ``spec`` (checked: the environment it names can be built).

    ``base``: the directory relative layout paths start from (default the working directory).
    """
    key = _canonical(spec, base)
    make_env(key)
    return key


def make_env(env: EnvKey, turn_counting: str = "per_player") -> Environment:
    """The environment a key (or any spec) names; ids 0-55 as ``engine.environments.make_env``.

    ``turn_counting='total'`` gives a paper environment the reference's blitz counting.
    """
    if isinstance(env, int) and not isinstance(env, bool):
        return make_paper_env(env, turn_counting)
    key = _canonical(env, None)
    if isinstance(key, int):
        return make_paper_env(key, turn_counting)
    if "=" in key:
        return _inline_env(key)
    directory, _, entry = key.rpartition(":")
    try:
        return suite_env(directory, int(entry), key)
    except SuiteError as error:
        raise EnvSpecError(str(error)) from None


def is_paper_env(key: EnvKey) -> bool:
    """Whether ``key`` names one of the paper's 56 environments."""
    return isinstance(key, int)


def is_sealed(key: EnvKey) -> bool:
    """Whether ``key`` is a suite entry, whose condition no command may print before a run on it has finished."""
    return isinstance(key, str) and "=" not in key


def seed_word(key: EnvKey) -> int:
    """A 64-bit number for ``key`` in seed sequences: the id itself, else the first 8 bytes of its sha256."""
    if isinstance(key, int):
        return key
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")


def env_slug(key: EnvKey) -> str:
    """A short name for ``key`` in a run directory's name: the id, or ``x`` and 8 hex digits of the key's sha256."""
    return str(key) if isinstance(key, int) else f"x{seed_word(key):016x}"[:9]


def _canonical(spec: str | int, base: Path | None) -> EnvKey:
    if isinstance(spec, int) and not isinstance(spec, bool):
        return _paper_id(str(spec))
    text = str(spec).strip()
    if text.isdigit():
        return _paper_id(text)
    if "=" in text:
        return _inline_key(_split_fields(text), base or Path.cwd())
    if text.lower().endswith(".toml"):
        return _toml_key(Path(text) if base is None or Path(text).is_absolute() else base / text)
    directory, colon, entry = text.rpartition(":")
    if colon and entry.isdigit() and directory:
        try:
            return f"{suite_directory(directory if base is None else base / directory)}:{int(entry)}"
        except SuiteError as error:
            raise EnvSpecError(str(error)) from None
    raise EnvSpecError(f"environment {text!r} is not a spec: give {SPEC_FORMS}")


def _paper_id(text: str) -> int:
    env_id = int(text)
    if not 0 <= env_id < N_PAPER_ENVS:
        raise EnvSpecError(
            f"unknown environment id {env_id}: valid ids are 0-{N_PAPER_ENVS - 1} (`arena envs` lists "
            f"them; other environments: {SPEC_FORMS})"
        )
    return env_id


def _split_fields(text: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    for item in (part.strip() for part in text.split(",")):
        name, equals, value = item.partition("=")
        name = name.strip().lower()
        if not equals or not name:
            raise EnvSpecError(f"environment spec {text!r}: item {item!r} is not field=value (fields: {', '.join(FIELDS)})")
        if name in fields:
            raise EnvSpecError(f"environment spec {text!r}: field {name!r} is given twice")
        fields[name] = value.strip()
    return fields


def _toml_key(path: Path) -> EnvKey:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise EnvSpecError(f"environment file {str(path)!r} does not exist") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise EnvSpecError(f"environment file {str(path)!r} is not readable TOML: {error}") from None
    fields = {str(name).lower(): _toml_value(path, str(name), value) for name, value in data.items()}
    return _inline_key(fields, path.resolve().parent, f"environment file {str(path)!r}")


def _toml_value(path: Path, name: str, value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise EnvSpecError(f"environment file {str(path)!r}: {name} = {value!r} must be a string or an integer")
    return str(value)


def _inline_key(fields: dict[str, str], base: Path, where: str = "") -> str:
    """The canonical ``layout=ABS,condition=C[,turns=N][,counting=total]`` of checked fields."""
    where = where or f"environment spec {','.join(f'{k}={v}' for k, v in fields.items())!r}"
    unknown = [name for name in fields if name not in FIELDS]
    if unknown:
        raise EnvSpecError(f"{where}: unknown field {unknown[0]!r}; the fields are {', '.join(FIELDS)}")
    for required in ("layout", "condition"):
        if not fields.get(required):
            raise EnvSpecError(f"{where}: field {required!r} is missing (e.g. layout=boards/x.txt,condition=majority<0.7,turns=15)")
    turns = _turns(fields.get("turns"), where)
    counting = fields.get("counting", "per_player")
    if counting not in TURN_COUNTINGS:
        raise EnvSpecError(f"{where}: counting={counting!r}: choose {' or '.join(TURN_COUNTINGS)}")
    layout_path = Path(fields["layout"]).expanduser()
    layout_path = (layout_path if layout_path.is_absolute() else base / layout_path).resolve()
    try:
        load_layout(layout_path)
        condition = parse_condition(fields["condition"], turns, counting)
    except LayoutError as error:
        raise EnvSpecError(f"{where}: layout={fields['layout']}: {error}") from None
    except ConditionError as error:
        raise EnvSpecError(f"{where}: {error}") from None
    parts = [f"layout={layout_path}", f"condition={condition.label}"]
    parts += [f"turns={turns}"] * (turns is not None) + [f"counting={counting}"] * (counting != "per_player")
    return ",".join(parts)


def _turns(text: str | None, where: str) -> int | None:
    if text is None:
        return None
    if not text.strip().isdigit() or int(text) < 1:
        raise EnvSpecError(f"{where}: turns={text!r}: give a turn limit of 1 or more placements per player (or leave turns out for none)")
    return int(text)


def _inline_env(key: str) -> Environment:
    fields = _split_fields(key)
    turns = _turns(fields.get("turns"), key)
    condition = parse_condition(fields["condition"], turns, fields.get("counting", "per_player"))
    layout = load_layout(fields["layout"])
    name = layout.name or Path(fields["layout"]).name
    limit = f", {turns} turns" if turns else ""
    return Environment(key, layout, condition, title=f"{name} / {condition.label}{limit}")
