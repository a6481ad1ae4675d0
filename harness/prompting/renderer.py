"""Rendering the prompts a model sees: jinja2 templates under ``prompts/``, hashed into every call.

The prose lives in the templates (``system.j2``, ``move.j2``, ``belief.j2`` and the include ``memory.j2``); this
module only gathers the data they show: the public rules, the board, the legal moves and the episode memory (its
data types live in :mod:`harness.prompting.memory` and are re-exported here). Nothing here reads the threshold K:
contexts are built from :class:`~engine.rules.Rules` and observations, which hold no condition.

Templates are found by :func:`harness.installation.data.prompts_dir`: the repository's ``prompts/`` in a clone, the
copy the build puts into the wheel (``harness/_data/prompts``) in an installed package.

Token budget: :func:`estimate_tokens` is the cheap estimate ``ceil(len(text) / 4)`` (about four characters per token
for English and digits; no tokenizer needed, the same on every machine). :func:`fit_memory` uses it to shrink the
table of recent games until the rendered memory fits; the summary by rho bin is always kept.

Speed (a model agent renders a prompt for every move): compiled templates are cached by jinja (re-read only when a
file changes), template hashes are cached while the files' modification times and sizes stay the same, an
:class:`EpisodeMemory` keeps its rho-bin counts up to date as games are added, and
:meth:`PromptRenderer.render_reusing` renders a template with an included template's text given ready-made, e.g. the
episode memory, which changes only when a game ends (:func:`memory_block` fits and renders it once). The text is
byte-for-byte what :meth:`PromptRenderer.render` gives, so cache keys do not change.
"""

from __future__ import annotations

import functools
import hashlib
import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from jinja2 import meta

from engine.layout import Layout
from engine.notation import COLUMN_LETTERS, format_move
from engine.protocol.observation import Observation
from engine.rules import Rules
from engine.state import COLOUR_NAMES, State
from harness.installation import data as installation
from harness.prompting.memory import DEFAULT_BINS, DEFAULT_MAX_RECENT, EpisodeMemory, MemoryView

DEFAULT_PROMPTS_DIR = installation.prompts_dir()
TEMPLATE_SUFFIX = ".j2"
HASH_CHARS = 16
HINT_LEVELS = ("none", "ratio", "family")
ANSWER_FORMATS = ("line", "json", "tool")  # tool: the move as a play_move function call

# Symbols of the board a model sees: from the mover's point of view, not black/white.
SYMBOLS = {"own": "X", "opp": "O", "obstacle": "#", "empty": "."}
# The context variable through which render_reusing hands ready-made parts to the stand-in templates.
PARTS_VARIABLE = "__prompt_parts__"


class PromptError(ValueError):
    """A template that is missing, or a context that does not fit it."""


@dataclass(frozen=True)
class RenderedPrompt:
    """The exact text sent to a model, the template it came from and that template's hash."""

    text: str
    template: str
    template_hash: str


class PromptRenderer:
    """Renders the templates of one prompts directory with StrictUndefined (a missing variable raises)."""

    def __init__(self, prompts_dir: Path | str | None = None) -> None:
        self.prompts_dir = Path(prompts_dir) if prompts_dir is not None else DEFAULT_PROMPTS_DIR
        if not self.prompts_dir.is_dir():
            raise PromptError(installation.missing_prompts_message(self.prompts_dir, given=prompts_dir is not None))
        self.env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(str(self.prompts_dir)),
            undefined=jinja2.StrictUndefined,
            autoescape=False,
            trim_blocks=True,
            lstrip_blocks=True,
            keep_trailing_newline=False,
        )
        self._references: dict[str, tuple[str, ...]] = {}  # source sha -> templates it includes
        self._hashes: dict[str, tuple[tuple[tuple[str, int, int], ...], str]] = {}  # name -> (file stamps, hash)
        self._reusing_envs: dict[frozenset[str], jinja2.Environment] = {}

    def names(self) -> list[str]:
        """All template names in the directory, sorted."""
        return sorted(self.env.list_templates(extensions=[TEMPLATE_SUFFIX.lstrip(".")]))

    def render(self, name: str, **context: Any) -> RenderedPrompt:
        """Render template ``name`` (``move`` or ``move.j2``); PromptError on a missing template or variable."""
        name = _template_name(name)
        text = self._render(self.env, name, context)
        return RenderedPrompt(text=text.strip() + "\n", template=name, template_hash=self.template_hash(name))

    def render_part(self, name: str, **context: Any) -> str:
        """The raw output of template ``name`` (not stripped): what ``{% include name %}`` inserts with this context."""
        return self._render(self.env, _template_name(name), context)

    def render_reusing(self, name: str, parts: Mapping[str, str], **context: Any) -> RenderedPrompt:
        """:meth:`render`, with the included templates named in ``parts`` not rendered but replaced by the given text.

        ``parts`` maps an included template (``memory`` or ``memory.j2``) to its
        :meth:`render_part` output for this same context; the result is then the
        same text as :meth:`render` gives, at the cost of the outer template only.
        The hash is that of the real templates.
        """
        name = _template_name(name)
        given = {_template_name(part): text for part, text in parts.items()}
        env = self._reusing_env(frozenset(given))
        text = self._render(env, name, {**context, PARTS_VARIABLE: given})
        return RenderedPrompt(text=text.strip() + "\n", template=name, template_hash=self.template_hash(name))

    def _render(self, env: jinja2.Environment, name: str, context: Mapping[str, Any]) -> str:
        try:
            return env.get_template(name).render(**context)
        except jinja2.TemplateNotFound as error:
            raise PromptError(f"no template {error.name!r} in {self.prompts_dir}; have: {', '.join(self.names())}") from error
        except jinja2.UndefinedError as error:
            raise PromptError(f"template {name!r}: {error.message} (pass it in the render context)") from error

    def _reusing_env(self, names: frozenset[str]) -> jinja2.Environment:
        """An environment like ``self.env`` whose templates ``names`` print their given text instead."""
        env = self._reusing_envs.get(names)
        if env is None:
            env = self.env.overlay(loader=_StandInLoader(self.env.loader, names))  # type: ignore[arg-type]
            self._reusing_envs[names] = env
        return env

    def template_hash(self, name: str) -> str:
        """sha256 (first 16 hex chars) of the template's source and the sources of all it includes."""
        name = _template_name(name)
        cached = self._hashes.get(name)
        if cached is not None and cached[0] == self._stamps(dep for dep, _, _ in cached[0]):
            return cached[1]
        closure = self._closure(name)
        stamps = self._stamps(closure)  # before reading: an edit while hashing shows as a changed stamp next time
        digest = hashlib.sha256()
        for dependency in closure:
            digest.update(dependency.encode() + b"\0" + self._source(dependency).encode() + b"\0")
        value = digest.hexdigest()[:HASH_CHARS]
        self._hashes[name] = (stamps, value)
        return value

    def _stamps(self, names: Iterable[str]) -> tuple[tuple[str, int, int], ...]:
        """(name, mtime in ns, size) of each template file; (name, -1, -1) when it cannot be read."""
        stamps = []
        for name in names:
            try:
                stat = os.stat(self.prompts_dir / name)
                stamps.append((name, stat.st_mtime_ns, stat.st_size))
            except OSError:
                stamps.append((name, -1, -1))
        return tuple(stamps)

    def template_hashes(self) -> dict[str, str]:
        """Hash of every template in the directory (for the run manifest)."""
        return {name: self.template_hash(name) for name in self.names()}

    def _source(self, name: str) -> str:
        try:
            return self.env.loader.get_source(self.env, name)[0]  # type: ignore[union-attr]
        except jinja2.TemplateNotFound as error:
            raise PromptError(f"no template {name!r} in {self.prompts_dir}; have: {', '.join(self.names())}") from error

    def _closure(self, root: str) -> list[str]:
        """``root`` then every template it includes, transitively, each once, in a stable order."""
        order, pending = [], [root]
        while pending:
            name = pending.pop(0)
            if name in order:
                continue
            order.append(name)
            pending.extend(self._referenced(name))
        return order

    def _referenced(self, name: str) -> tuple[str, ...]:
        source = self._source(name)
        key = hashlib.sha256(source.encode()).hexdigest()
        if key not in self._references:
            found = meta.find_referenced_templates(self.env.parse(source))
            if None in (found := list(found)):
                raise PromptError(f"template {name!r} includes a computed name; includes must be literal for hashing")
            self._references[key] = tuple(sorted(found))  # type: ignore[arg-type]
        return self._references[key]


def _template_name(name: str) -> str:
    return name if name.endswith(TEMPLATE_SUFFIX) else name + TEMPLATE_SUFFIX


class _StandInLoader(jinja2.BaseLoader):
    """The real templates, except that each of ``names`` is a stand-in printing its text from the render context.

    An include inserts the included template's output as it is, so a stand-in that
    prints :meth:`PromptRenderer.render_part`'s output gives the same text.
    """

    def __init__(self, base: jinja2.BaseLoader, names: frozenset[str]) -> None:
        self.base, self.names = base, names

    def get_source(self, environment: jinja2.Environment, template: str) -> tuple[str, str | None, Callable[[], bool] | None]:
        if template in self.names:
            return "{{ " + PARTS_VARIABLE + "[" + repr(template) + "] }}", None, lambda: True
        return self.base.get_source(environment, template)

    def list_templates(self) -> list[str]:
        return self.base.list_templates()


def estimate_tokens(text: str) -> int:
    """Cheap token estimate: ceil(len(text) / 4)."""
    return math.ceil(len(text) / 4)


def fit_memory(
    memory: EpisodeMemory,
    max_tokens: int,
    renderer: PromptRenderer | None = None,
    max_recent: int = DEFAULT_MAX_RECENT,
    bins: int = DEFAULT_BINS,
) -> MemoryView:
    """The largest view (up to ``max_recent`` recent games) whose rendered ``memory.j2`` fits ``max_tokens``.

    The summary is always kept: if even the view with no recent games exceeds
    the budget, that view is returned (the caller sees it via estimate_tokens).
    """
    return memory_block(memory, max_tokens, renderer, max_recent, bins).view


@dataclass(frozen=True)
class MemoryBlock:
    """A fitted memory view and its rendered ``memory.j2`` (raw: what an include of it inserts)."""

    view: MemoryView
    text: str


def memory_block(
    memory: EpisodeMemory,
    max_tokens: int,
    renderer: PromptRenderer | None = None,
    max_recent: int = DEFAULT_MAX_RECENT,
    bins: int = DEFAULT_BINS,
) -> MemoryBlock:
    """:func:`fit_memory`'s view with its rendered text, for :meth:`PromptRenderer.render_reusing`.

    The memory changes only when a game ends: an agent renders the block once per
    game and reuses it for every move of the game.
    """
    renderer = renderer or PromptRenderer()
    low, high = 0, min(max_recent, len(memory.games))
    best: MemoryBlock | None = None
    while low <= high:  # rendered size grows with the number of rows: binary search
        middle = (low + high) // 2
        view = memory.view(middle, bins)
        text = renderer.render_part("memory", memory=view)
        if estimate_tokens(text.strip() + "\n") <= max_tokens:
            best, low = MemoryBlock(view, text), middle + 1
        else:
            high = middle - 1
    if best is None:  # not even the summary fits: it is kept all the same
        view = memory.view(0, bins)
        best = MemoryBlock(view, renderer.render_part("memory", memory=view))
    return best


# --- board and rules --------------------------------------------------------------------------


COMPACT_BOARD_COLS = 13  # boards this wide or wider are written without spaces between cells


def board_text(rules: Rules, state: State, colour: int, compact: bool | None = None) -> str:
    """The board from ``colour``'s side: X own, O opponent, # obstacle, . empty; letters on top, numbers left.

    Cells are separated by spaces (one token a cell), except on boards of :data:`COMPACT_BOARD_COLS` columns or
    more, whose rows are written without them: a 16x16 board is 69 tokens instead of 299, 23% of a move's
    prompt (``python -m harness.bench.prompts``). ``compact`` forces one encoding or the other."""
    compact = rules.layout.cols >= COMPACT_BOARD_COLS if compact is None else compact
    header, prefixes, obstacles = _board_frame(rules.layout, compact)
    own, opp = state.discs(colour), state.discs(1 - colour)
    symbols = (
        SYMBOLS["empty"],
        SYMBOLS["own"],
        SYMBOLS["opp"],
        SYMBOLS["own"],
        SYMBOLS["obstacle"],
        SYMBOLS["obstacle"],
        SYMBOLS["obstacle"],
        SYMBOLS["obstacle"],
    )
    cols = rules.layout.cols
    lines = [header]
    for r, prefix in enumerate(prefixes):
        first = r * cols
        cells = [symbols[(own >> i & 1) | (opp >> i & 1) << 1 | (obstacles >> i & 1) << 2] for i in range(first, first + cols)]
        lines.append(prefix + ("" if compact else " ").join(cells))
    return "\n".join(lines)


@functools.lru_cache(maxsize=64)
def _board_frame(layout: Layout, compact: bool = False) -> tuple[str, tuple[str, ...], int]:
    """The header line (column letters, spaced unless ``compact``), each row's label and the obstacle bitmask of a layout."""
    width = len(str(layout.rows))
    header = " " * (width + 1) + ("" if compact else " ").join(COLUMN_LETTERS[: layout.cols])
    return header, tuple(f"{r + 1:>{width}} " for r in range(layout.rows)), layout.mask(layout.obstacles)


def legal_moves_text(rules: Rules, state: State) -> str:
    """The mover's legal moves in notation, comma-separated (``pass``; ``none`` once the game is over)."""
    return _moves_text(rules.legal_moves(state), rules.layout)


def _moves_text(moves: Sequence[int], layout: Layout) -> str:
    if not moves:
        return "none (the game is over)"
    return ", ".join(format_move(m, layout) for m in moves)


def system_context(rules: Rules, hint_level: str, budget: int) -> dict[str, Any]:
    """Context of ``system.j2``: the public rules (never K), the hint level and the game budget."""
    if hint_level not in HINT_LEVELS:
        raise PromptError(f"hint level {hint_level!r}: choose one of {', '.join(HINT_LEVELS)}")
    layout = rules.layout
    public_rules = {
        "rows": layout.rows,
        "cols": layout.cols,
        "last_col": COLUMN_LETTERS[layout.cols - 1],
        "obstacles": len(layout.obstacles),
        "turn_limit": rules.turn_limit,
        "turn_counting": rules.turn_counting,
    }
    return {"rules": public_rules, "hint_level": hint_level, "budget": budget}


def move_context(
    obs: Observation,
    memory: MemoryView,
    games_played: int,
    budget: int,
    show_legal: bool = True,
    answer_format: str = "line",
    feedback: str | None = None,
    wave_game: dict[str, int] | None = None,
) -> dict[str, Any]:
    """Context of ``move.j2`` for one observation; ``show_legal=False`` hides the legal moves; ``wave_game``:
    ``{number, size}`` of an adaptation game in a wave of several (None otherwise)."""
    if answer_format not in ANSWER_FORMATS:
        raise PromptError(f"answer format {answer_format!r}: choose one of {', '.join(ANSWER_FORMATS)}")
    state, layout = obs.state, obs.rules.layout
    own, opp = state.discs(obs.colour).bit_count(), state.discs(1 - obs.colour).bit_count()
    return {
        "memory": memory,
        "games_played": games_played,
        "budget_remaining": budget - games_played,
        "colour": COLOUR_NAMES[obs.colour],
        "opponent_colour": COLOUR_NAMES[1 - obs.colour],
        "symbols": SYMBOLS,
        "board": board_text(obs.rules, state, obs.colour),
        "own": own,
        "opp": opp,
        "empty": layout.playable_mask.bit_count() - own - opp,
        "legal_moves": _moves_text(obs.legal_moves, layout) if show_legal else None,  # the observation's: not computed again
        "answer_format": answer_format,
        "feedback": feedback,
        "wave_game": wave_game,
    }


def belief_context(memory: MemoryView, games_played: int, budget: int) -> dict[str, Any]:
    """Context of ``belief.j2``."""
    from engine.protocol.belief import BELIEF_SCHEMA_VERSION  # local: beliefs does not need the renderer

    return {"memory": memory, "games_played": games_played, "budget": budget, "schema_version": BELIEF_SCHEMA_VERSION}


__all__: Sequence[str] = (
    "ANSWER_FORMATS",
    "DEFAULT_PROMPTS_DIR",
    "HINT_LEVELS",
    "SYMBOLS",
    "MemoryBlock",
    "PromptError",
    "PromptRenderer",
    "RenderedPrompt",
    "belief_context",
    "board_text",
    "estimate_tokens",
    "fit_memory",
    "legal_moves_text",
    "memory_block",
    "move_context",
    "system_context",
)
