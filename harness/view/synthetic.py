"""A synthetic ``arena run`` directory of any size (2,000 games and 100,000 model calls for ``arena bench view``).

Written with the project's own :class:`~harness.records.transcript.TranscriptWriter` (hash chains, manifest seal):
random legal self-play games from the engine, and for each ply a model call whose prompt shows the board as the
move template does, a reply and a verdict; a few re-asks with an illegal reply, so every verdict kind shows.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from engine.environments import make_env
from engine.notation import format_move
from engine.rules import Rules
from engine.state import BLACK, PASS, State
from harness.play.decisions import FailureCounts
from harness.records.entries import CallEntry, GameEntry, RunManifest
from harness.records.transcript import TranscriptWriter
from harness.view.boards import board_of

SYSTEM_PROMPT = (
    "You are playing a series of Othello games on a non-standard board, one move at a time. Your goal is to win "
    "as many games as possible, which first means finding out how a game is won. (synthetic run for "
    "arena bench view)\n"
) * 8


def write_synthetic_run(run_dir: str | Path, games: int = 2000, calls: int = 100_000, env_id: int = 3, seed: int = 0) -> Path:
    """Write a finished-looking run of ``games`` adaptation games and about ``calls`` model calls to ``run_dir``."""
    run_dir = Path(run_dir)
    env = make_env(env_id)
    rules, rng = env.rules, np.random.default_rng(seed)
    per_game = max(1, calls // max(1, games))
    call_index = 0
    with TranscriptWriter(run_dir) as writer:
        writer.write_manifest(
            RunManifest(
                run_id=run_dir.name,
                config={"agent": "llm-policy", "model": "synthetic/bench", "env": env_id, "budget": games, "eval_games": 0},
                seeds={"run": seed},
            )
        )
        for game_index in range(games):
            moves, states = _random_game(rules, rng)
            plies = [ply for ply, move in enumerate(moves) if move != PASS][:per_game]
            for number in range(per_game):
                ply = plies[number % len(plies)]
                retry = number >= len(plies)
                writer.append_call(_call(rules, states[ply], moves[ply], call_index, game_index, ply, retry))
                call_index += 1
            black, white = rules.counts(states[-1])
            rewards = env.condition.rewards(black, white)
            writer.append_game(
                GameEntry(
                    game_index=game_index,
                    phase="adapt",
                    layout=env.layout.name,
                    black="llm-policy",
                    white="llm-policy",
                    opponent="self",
                    agent_colour="both",
                    moves=tuple(moves),
                    black_discs=black,
                    white_discs=white,
                    rewards=(int(rewards[0]), int(rewards[1])),
                    failures=FailureCounts(),
                    seed=seed,
                )
            )
    return run_dir


def _random_game(rules: Rules, rng: np.random.Generator) -> tuple[list[int], list[State]]:
    state = rules.initial_state()
    moves, states = [], [state]
    while legal := rules.legal_moves(state):
        move = legal[int(rng.integers(len(legal)))]
        state = rules.play(state, move)
        moves.append(move)
        states.append(state)
    return moves, states


def _call(rules: Rules, state: State, move: int, call_index: int, game_index: int, ply: int, retry: bool) -> CallEntry:
    board = board_of(rules, state)
    cols = rules.layout.cols
    you, them = ("X", "O") if state.to_move == BLACK else ("O", "X")
    grid = "\n".join(f"{row + 1} " + " ".join(board.cells[row * cols : (row + 1) * cols]) for row in range(rules.layout.rows))
    legal = ", ".join(format_move(m, rules.layout) for m in board.legal)
    prompt = (
        f"Game {game_index}, ply {ply}. You play {board.to_move} ({you}); your opponent plays {them}.\n"
        f"  {' '.join(chr(97 + c) for c in range(cols))}\n{grid}\nDiscs: black {board.black}, white {board.white}.\n"
        f"Your legal moves: {legal}\nEnd your reply with a final line of the form\nMOVE: d3\n"
    )
    shown = format_move(move, rules.layout)
    reply = "MOVE: z9" if retry else f"I take {shown}.\nMOVE: {shown}"
    return CallEntry(
        call_index=call_index,
        game_index=game_index,
        phase="adapt",
        ply=ply,
        attempt=1 if retry else 0,
        messages=[{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": prompt}],
        reply=reply,
        finish_reason="stop",
        parsed_move=None if retry else shown,
        verdict="unparsed" if retry else "legal",
        failure_kind="parse_error" if retry else None,
        reason="z9 is not a cell of this board" if retry else None,
        tokens_in=len(prompt) // 4 + 120,
        tokens_out=len(reply) // 4,
        latency_s=0.4 + (call_index % 17) / 10,
    )
