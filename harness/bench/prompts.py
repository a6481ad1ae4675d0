"""Prompt tokens per move by board size, and what the board's encoding costs in them.

For each board (an open 6x6, the standard 8x8 of env 0, the 12x10 of env 4, an open 16x16)
:func:`prompt_rows` gives llm-policy's mean prompt tokens per move over a full run (2,000
adaptation games: :func:`harness.runs.estimate.estimate_run`, the estimate of ``arena run
--dry-run``, prompts rendered for the positions of random games and counted by the tokenizer of
the price model, gpt-4o-mini, offline), and the tokens of the board itself at the start position
(litellm's ``token_counter`` for :data:`TOKENIZER_MODEL`): spaced (cells separated by spaces,
column letters on top, row numbers on the left) and compact (no spaces between cells), with the
share of a move's prompt the spaced board would take.
The prompts use the spaced board below :data:`~harness.prompting.renderer.COMPACT_BOARD_COLS`
columns and the compact one from there on (the 16x16 here).

Run ``python -m harness.bench.prompts`` (about a minute: four full-run estimates); it prints a
markdown table.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from engine import EnvKey, make_env
from engine.env_spec import env_key
from harness.bench.throughput import ENV_16, FULL_BUDGET, PRICE_MODEL, _full_run_estimate
from harness.models.client import import_litellm
from harness.prompting.renderer import board_text

BOARD_6 = Path(__file__).resolve().parent / "data" / "board6x6.txt"
ENV_6 = f"layout={BOARD_6},condition=majority<0.7"
BOARDS: tuple[tuple[str, EnvKey], ...] = (("6x6", ENV_6), ("8x8 (env 0)", 0), ("12x10 (env 4)", 4), ("16x16", ENV_16))
TOKENIZER_MODEL = "gpt-4o-mini"


@dataclass(frozen=True)
class PromptRow:
    """One board: its cells, mean prompt tokens per move over a full run, and its board's tokens in two encodings."""

    board: str
    cells: int
    tokens_per_move: float  # the dry-run estimate's mean over a full run's adaptation moves
    board_tokens: int  # spaced, by the tokenizer
    compact_board_tokens: int  # no spaces between cells, by the tokenizer

    @property
    def board_share(self) -> float:
        return self.board_tokens / self.tokens_per_move if self.tokens_per_move else float("nan")


def prompt_rows() -> list[PromptRow]:
    """One row per board of :data:`BOARDS` (module docstring)."""
    litellm = import_litellm()
    rows = []
    for label, spec in BOARDS:
        key = env_key(str(spec))
        env = make_env(key)
        estimate = _full_run_estimate("llm-policy", key, 50, PRICE_MODEL)
        move = next(k for k in estimate.kinds if k.kind == "move (adaptation)")
        rules = env.rules
        start = rules.initial_state()
        rows.append(
            PromptRow(
                label,
                rules.layout.playable_mask.bit_count(),
                move.prompt_tokens_per_call,
                litellm.token_counter(model=TOKENIZER_MODEL, text=board_text(rules, start, 0, compact=False)),
                litellm.token_counter(model=TOKENIZER_MODEL, text=board_text(rules, start, 0, compact=True)),
            )
        )
    return rows


def markdown(rows: list[PromptRow]) -> str:
    lines = [
        f"| board | cells | prompt tokens per move (full run of {FULL_BUDGET:,} games) | spaced board tokens | "
        "spaced board's share | compact board tokens |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    lines += [
        f"| {r.board} | {r.cells} | {r.tokens_per_move:,.0f} | {r.board_tokens} | {r.board_share:.0%} | {r.compact_board_tokens} |"
        for r in rows
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown(prompt_rows()))
