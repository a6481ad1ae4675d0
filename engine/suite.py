"""Held-out suites: generated environments whose conditions are sealed, so no model can have memorized them.

``new_suite`` draws, from one seed, ``count`` layouts (``engine.layout_gen``: sides in
``sizes``, obstacle density in ``density``) and for each a condition: a family chosen
uniformly from ``families`` (``engine.condition_grammar.FAMILIES``), then K uniform on
the family's continuous draw range, to 1/1000, never one of the paper's K values; a
blitz family adds a turn limit of 6-15 placements per player. It gives two texts:

- the **public** file (:data:`PUBLIC_FILE`): the suite's name and, per entry, its
  layout (size, obstacle cells; the four centre discs), its turn limit (a rule the
  agents see) and a *commitment*: sha256 over a 128-bit salt, the entry and its
  condition's text. It holds no K and no family;
- the **sealed** file (:data:`SEALED_FILE`): the seed, the settings, the sha256 of the
  public file, and per entry the condition's text, its family and the salt.

The same arguments give the same bytes. Anyone holding the seed can remake the sealed
file, so a real held-out suite takes a seed nobody else knows (``arena envs new``
draws one when none is given). :func:`suite_env` is the one reader of a sealed
condition: it checks the commitment (and the public file's digest) before it
returns the environment, so a replay of a run on a suite re-checks them.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from engine.condition import Condition
from engine.condition_grammar import FAMILIES, PAPER_KS, condition_spec, parse_condition
from engine.environments import Environment
from engine.layout import Layout, LayoutError, standard_layout
from engine.layout_gen import random_layout

SCHEMA = 1
PUBLIC_FILE = "public.json"
SEALED_FILE = "sealed.json"
DEFAULT_SIZES = (6, 16)
DEFAULT_DENSITY = (0.1, 0.25)
BLITZ_TURNS = (6, 15)
SALT_BYTES = 16
K_STEP = 1000  # K is drawn to 1/1000


class SuiteError(ValueError):
    """A suite that cannot be read or made: a missing file, a broken commitment, a bad setting."""


@dataclass(frozen=True)
class PublicEntry:
    """What anyone may see of one suite environment: its layout, its turn limit and the commitment."""

    entry: int
    layout: Layout
    turn_limit: int | None
    commitment: str


@dataclass(frozen=True)
class SuiteSettings:
    """The arguments of ``arena envs new`` (all but the output directory)."""

    count: int
    seed: int
    sizes: tuple[int, int] = DEFAULT_SIZES
    density: tuple[float, float] = DEFAULT_DENSITY
    families: tuple[str, ...] = tuple(FAMILIES)
    name: str = "suite"


def new_suite(settings: SuiteSettings) -> tuple[str, str]:
    """(public text, sealed text) of the suite ``settings`` describe; SuiteError on a bad setting."""
    _check(settings)
    layout_seed, condition_seed = np.random.SeedSequence(settings.seed).spawn(2)
    layout_rng, condition_rng = np.random.default_rng(layout_seed), np.random.default_rng(condition_seed)
    public, sealed = [], []
    for entry in range(settings.count):
        layout = random_layout(layout_rng, rows=settings.sizes, cols=settings.sizes, obstacle_density=settings.density)
        family = settings.families[int(condition_rng.integers(len(settings.families)))]
        condition = _draw_condition(condition_rng, family)
        salt = condition_rng.bytes(SALT_BYTES).hex()
        text = condition_spec(condition)
        public.append(
            {
                "entry": entry,
                "name": f"{settings.name} #{entry} ({layout.rows}x{layout.cols})",
                "rows": layout.rows,
                "cols": layout.cols,
                "obstacles": [list(cell) for cell in sorted(layout.obstacles)],
                "turn_limit": condition.turn_limit,
                "turn_counting": condition.turn_counting,
                "commitment": digest(salt, entry, text, condition.turn_limit),
            }
        )
        sealed.append({"entry": entry, "condition": text, "family": family, "salt": salt})
    public_text = _dump(
        {
            "schema_version": SCHEMA,
            "suite": settings.name,
            "count": settings.count,
            "start": "the four centre discs",
            "commitment": "sha256(salt \\n entry \\n condition \\n turns)",
            "environments": public,
        }
    )
    sealed_text = _dump(
        {
            "schema_version": SCHEMA,
            "suite": settings.name,
            "seed": settings.seed,
            "sizes": list(settings.sizes),
            "density": list(settings.density),
            "families": list(settings.families),
            "public_sha256": hashlib.sha256(public_text.encode()).hexdigest(),
            "environments": sealed,
        }
    )
    return public_text, sealed_text


def write_suite(settings: SuiteSettings, out: Path) -> tuple[Path, Path]:
    """Write the suite's two files into ``out`` (made if missing); SuiteError if either file exists already."""
    public_text, sealed_text = new_suite(settings)
    paths = (Path(out) / PUBLIC_FILE, Path(out) / SEALED_FILE)
    if any(path.exists() for path in paths):
        raise SuiteError(f"--out {out}: a suite is there already ({PUBLIC_FILE}/{SEALED_FILE}); give a new directory")
    Path(out).mkdir(parents=True, exist_ok=True)
    for path, text in zip(paths, (public_text, sealed_text), strict=True):
        path.write_text(text, encoding="utf-8")
    return paths


def digest(salt: str, entry: int, condition: str, turn_limit: int | None) -> str:
    """The commitment: sha256 (hex) over the salt, the entry, the condition's text and the turn limit."""
    return hashlib.sha256(f"{salt}\n{entry}\n{condition}\n{turn_limit}".encode()).hexdigest()


def suite_directory(path: str | Path) -> Path:
    """The suite directory ``path`` names (the directory, or its public file); SuiteError if it has no public file."""
    given = Path(path)
    directory = given.parent if given.name == PUBLIC_FILE else given
    if not (directory / PUBLIC_FILE).is_file():
        raise SuiteError(f"suite {str(path)!r}: no {PUBLIC_FILE} there; give a directory made by `arena envs new --out DIR`")
    return directory.resolve()


def read_public(path: str | Path) -> tuple[str, list[PublicEntry]]:
    """The suite's name and its public entries (no conditions)."""
    data = _load(suite_directory(path) / PUBLIC_FILE)
    entries = []
    for item in data.get("environments", []):
        layout = standard_layout(item["rows"], item["cols"], [tuple(c) for c in item["obstacles"]], item["name"])
        entries.append(PublicEntry(item["entry"], layout, item["turn_limit"], item["commitment"]))
    return str(data.get("suite", "")), entries


def suite_env(path: str | Path, entry: int, key: str = "") -> Environment:
    """Entry ``entry`` of the suite with its sealed condition, once the commitments check out.

    The environment's title is the public name only (never the condition); its id is
    ``key``. SuiteError on an unknown entry, a missing sealed file or a broken commitment.
    """
    directory = suite_directory(path)
    _, entries = read_public(directory)
    if not 0 <= entry < len(entries):
        raise SuiteError(f"suite {directory}: no entry {entry}; its entries are 0-{len(entries) - 1}")
    public = entries[entry]
    sealed = _sealed(directory)
    secret = next((item for item in sealed["environments"] if item.get("entry") == entry), None)
    if secret is None:
        raise SuiteError(f"suite {directory}: {SEALED_FILE} has no entry {entry}")
    expected = digest(secret["salt"], entry, secret["condition"], public.turn_limit)
    if not hmac.compare_digest(expected, public.commitment):
        raise SuiteError(
            f"suite {directory}: entry {entry}'s sealed condition does not match its commitment "
            f"in {PUBLIC_FILE} (a file was changed after `arena envs new`)"
        )
    condition = parse_condition(secret["condition"], public.turn_limit)
    return Environment(key or f"{directory}:{entry}", public.layout, condition, title=public.layout.name)


def reveal(path: str | Path) -> dict[int, str]:
    """Entry -> condition text with its turn limit, from the sealed file (for reports once a run has finished)."""
    directory = suite_directory(path)
    return {entry: _with_turns(suite_env(directory, entry).condition) for entry in range(len(read_public(directory)[1]))}


def _with_turns(condition: Condition) -> str:
    return condition.label + (f", {condition.turn_limit} turns" if condition.turn_limit else "")


def _sealed(directory: Path) -> dict[str, Any]:
    sealed = _load(directory / SEALED_FILE)
    public_sha = hashlib.sha256((directory / PUBLIC_FILE).read_bytes()).hexdigest()
    if sealed.get("public_sha256") != public_sha:
        raise SuiteError(f"suite {directory}: {PUBLIC_FILE} is not the file {SEALED_FILE} was made with (its sha256 differs)")
    return sealed


def _load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SuiteError(f"suite file {path} is missing") from None
    except (OSError, ValueError) as error:
        raise SuiteError(f"suite file {path} cannot be read: {error}") from None
    if not isinstance(data, dict) or data.get("schema_version") != SCHEMA:
        raise SuiteError(f"suite file {path}: not a suite file of schema_version {SCHEMA}")
    return data


def _check(settings: SuiteSettings) -> None:
    if isinstance(settings.count, bool) or not isinstance(settings.count, int) or settings.count < 1:
        raise SuiteError(f"--count {settings.count!r}: give 1 or more environments")
    if isinstance(settings.seed, bool) or not isinstance(settings.seed, int) or settings.seed < 0:
        raise SuiteError(f"--seed {settings.seed!r}: give a whole number 0 or more")
    unknown = [f for f in settings.families if f not in FAMILIES]
    if unknown or not settings.families:
        raise SuiteError(f"--families {','.join(settings.families)!r}: choose from {', '.join(FAMILIES)}")
    try:
        random_layout(np.random.default_rng(0), rows=settings.sizes, cols=settings.sizes, obstacle_density=settings.density)
    except (ValueError, LayoutError) as error:
        raise SuiteError(f"--sizes {settings.sizes} / --density {settings.density}: {error}") from None


def _draw_condition(rng: np.random.Generator, family_name: str) -> Condition:
    family = FAMILIES[family_name]
    low, high = int(family.draw_low * K_STEP), int(family.draw_high * K_STEP)
    while True:
        k = Fraction(int(rng.integers(low, high, endpoint=True)), K_STEP)
        if k not in PAPER_KS:
            break
    turns = int(rng.integers(BLITZ_TURNS[0], BLITZ_TURNS[1], endpoint=True)) if family.blitz else None
    return Condition(k, turns)


def _dump(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=1) + "\n"
