"""Whether another distribution (or a folder on ``sys.path``) also provides ``engine``, ``agents`` or ``harness``.

The import names are generic (``agents`` is also the import name of a widely used agent SDK), and two
distributions that share one cannot live in one environment: one hides the other on ``sys.path``, or both install
into one folder and their files mix. Nothing would say so; :func:`find_clash` does, cheaply (a few file-system
look-ups and this distribution's own ``RECORD``, on every ``import harness``), and names the other distribution
only once it has found one (``importlib.metadata.packages_distributions``, which reads every installed
distribution's file list: slow, so only then).

``import harness`` prints the clash's one line on stderr (once per process tree: child processes inherit
:data:`REPORTED`); the ``arena`` command then stops with exit code 1 when the names resolve to the other one
(:func:`exit_if_unusable`), since none of its commands could work.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from harness.installation.data import DISTRIBUTION

IMPORT_NAMES = ("engine", "agents", "harness")
REPORTED = "OTHELLO_ARENA_CLASH_REPORTED"  # set once the line is printed: child processes stay quiet
ADVICE = (
    "install them in separate environments: the arena command alone with `pipx install othello-arena` "
    "(or `uv tool install othello-arena`), the library in a virtual environment of its own (docs/install.md)"
)


@dataclass(frozen=True)
class Clash:
    """An import name of this distribution that another package also provides.

    ``fatal``: ``import <name>`` gives the other package (or a file of ours was overwritten), so the program
    cannot run; otherwise ours hides the other one (which is then what is broken)."""

    name: str
    ours: Path
    other: Path
    owners: tuple[str, ...]  # the distributions the other package comes from (none: a folder nobody installed)
    fatal: bool
    mixed: bool = False  # both installed into one folder

    def line(self) -> str:
        """The one line that says what is wrong and what to do."""
        names = ", ".join(repr(owner) for owner in self.owners)
        owner = f"the distribution {names}" if self.owners else "a folder no installed distribution owns"
        if self.mixed:
            what = f"{DISTRIBUTION} and {names or 'another distribution'} both installed files into {self.other}"
        elif self.fatal:
            what = f"`import {self.name}` gives {self.other} ({owner}), not {DISTRIBUTION}'s {self.ours}"
        else:
            what = f"{DISTRIBUTION}'s {self.ours} hides {self.other} ({owner}), whose import name is also {self.name!r}"
        stop = f"{DISTRIBUTION} cannot run here" if self.fatal else "one of two packages is hidden"
        return f"{stop}: {what}; {ADVICE}"


def find_clash(
    root: Path | None = None, path: Sequence[str] | None = None, resolve: Callable[[str], Path | None] | None = None
) -> Clash | None:
    """The first clash of :data:`IMPORT_NAMES` with another package, or None.

    ``root``: the folder holding this distribution's packages (default: the one holding ``harness``);
    ``path``: the import path searched (default ``sys.path``); ``resolve``: where ``import name`` goes (default:
    where it went, or would go, in this process)."""
    root = root if root is not None else Path(__file__).resolve().parents[2]
    path = list(sys.path if path is None else path)
    for name in IMPORT_NAMES:
        found = _clash_of(name, root / name, path, resolve or _resolved)
        if found is not None:
            other, fatal, mixed = found
            return Clash(name, root / name, other, _owners(name), fatal, mixed)
    return None


def _clash_of(name: str, ours: Path, path: Sequence[str], resolve: Callable[[str], Path | None]) -> tuple[Path, bool, bool] | None:
    """(the other package, fatal, mixed) for one import name, or None."""
    resolved = resolve(name)
    if resolved is not None and resolved != ours.resolve():
        return resolved, True, False
    for candidate in _on_path(name, path):
        if candidate != ours.resolve():
            return candidate, False, False
    mixed = _mixed_folder(name, ours)
    if mixed is not None:
        return ours, mixed, True
    return None


def _resolved(name: str) -> Path | None:
    """The folder (or module file) ``import name`` gives, without importing it (or where it was imported from)."""
    module = sys.modules.get(name)
    origin = getattr(module, "__file__", None) if module is not None else None
    if origin is None:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            return None
        origin = spec.origin if spec is not None else None
    if origin is None:
        return None
    where = Path(origin).resolve()
    return where.parent if where.name == "__init__.py" else where


def _on_path(name: str, path: Sequence[str]) -> Iterable[Path]:
    """Every regular package or module called ``name`` on the import path (a folder without ``__init__.py`` never hides one)."""
    for entry in path:
        folder = Path(entry or os.getcwd())
        if (folder / name / "__init__.py").is_file():
            yield (folder / name).resolve()
        elif (folder / f"{name}.py").is_file():
            yield (folder / f"{name}.py").resolve()


def _mixed_folder(name: str, ours: Path) -> bool | None:
    """In an installed wheel: None when the folder holds exactly this distribution's files; True when its
    ``__init__.py`` is not ours (overwritten: fatal), False when it also holds another's files."""
    record = _record(ours.parent)
    if record is None:
        return None  # a clone or an editable install: the folder is the source tree
    listed = {entry: digest for entry, digest in record.items() if entry.startswith(f"{name}/")}
    init = f"{name}/__init__.py"
    if init in listed and _digest(ours / "__init__.py") != listed[init]:
        return True
    children = {entry.split("/")[1] for entry in listed}
    present = {child.name for child in ours.iterdir()} if ours.is_dir() else set()
    return False if present - children - {"__pycache__"} else None


@cache
def _record(site: Path) -> dict[str, str] | None:
    """This distribution's ``RECORD`` in ``site`` (file -> ``sha256=...``), None when it is not installed there."""
    for info in sorted(site.glob(f"{DISTRIBUTION.replace('-', '_')}-*.dist-info")):
        try:
            lines = (info / "RECORD").read_text(encoding="utf-8").splitlines()
        except OSError:
            continue
        return {fields[0]: fields[1] for fields in (line.split(",") for line in lines) if len(fields) >= 2}
    return None


def _digest(file: Path) -> str | None:
    try:
        data = file.read_bytes()
    except OSError:
        return None
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _owners(name: str) -> tuple[str, ...]:
    """The other distributions that provide ``name`` (read from every installed distribution's file list)."""
    from importlib import metadata  # here: only a clash pays for it

    try:
        owners = metadata.packages_distributions().get(name, [])
    except Exception:  # a broken distribution elsewhere must not hide the clash itself
        return ()
    return tuple(sorted({owner for owner in owners if _normal(owner) != _normal(DISTRIBUTION)}))


def _normal(name: str) -> str:
    return name.lower().replace("_", "-").replace(".", "-")


@cache
def checked() -> Clash | None:
    """The clash of this process (looked for once), printed on stderr unless a parent process already did."""
    clash = find_clash()
    if clash is not None and not os.environ.get(REPORTED):
        print(clash.line(), file=sys.stderr)
        os.environ[REPORTED] = "1"
    return clash


def exit_if_unusable() -> None:
    """For the ``arena`` command: exit with code 1 when the import names resolve to another package."""
    clash = checked()
    if clash is not None and clash.fatal:
        raise SystemExit(1)
