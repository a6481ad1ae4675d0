"""Command lines for the CLI tests (not a test module): options from keywords, so that a long command reads as one line.

``options(envs="0", agents=["a", "b"], in_process=True, out=path)`` is
``["--envs", "0", "--agents", "a", "--agents", "b", "--in-process", "--out", str(path)]``.
"""

from __future__ import annotations

from pathlib import Path

MODEL = "openai/stub-model"  # what `arena run` asks the stub server on 127.0.0.1 for


def options(**named: object) -> list[str]:
    """``--name value`` for each keyword, in order (``checkpoint_games`` gives ``--checkpoint-games``).

    A list or tuple repeats the option once per item; ``True`` gives the bare flag.
    """
    argv: list[str] = []
    for name, value in named.items():
        flag = "--" + name.replace("_", "-")
        if value is True:
            argv.append(flag)
            continue
        for item in value if isinstance(value, list | tuple) else (value,):
            argv += [flag, str(item)]
    return argv


def stub_run_args(api_base: str, out: Path, *extra: str, budget: str, eval_games: str) -> list[str]:
    """``arena run`` of :data:`MODEL` at ``api_base`` on environment 26 without checkpoints, into ``out``; ``extra`` last."""
    return [
        "run",
        *options(model=MODEL, api_base=api_base, env="26", budget=budget, eval_games=eval_games, checkpoints="", out=out),
        *extra,
    ]
