"""Result tables at 80 columns never cut a name that identifies an agent, an environment or a model to '…'
(issue 16): `match`, `tournament`, `demo`'s comparison table and `run`'s report, rendered at 80 columns."""

from __future__ import annotations

from rich.console import Console
from typer.testing import CliRunner

from engine import make_env
from harness.cli.console import fitting_table
from harness.cli.demo import OPPONENTS, comparison_table
from harness.cli.main import app
from tests.harness.cli.cli_args import options

LONG_A, LONG_B = "mcts:n=2,c=1.0", "minimax:depth=1"


def _no_name_cut(output: str, names) -> None:
    assert "…" not in output, output
    flat = output.replace("\n", "")
    for name in names:
        assert name in output or name in flat, f"{name!r} is not whole in:\n{output}"


def test_match_and_tournament_tables_keep_every_agent_name(monkeypatch, tmp_path):
    monkeypatch.setenv("COLUMNS", "80")
    result = CliRunner().invoke(
        app, ["match", LONG_A, LONG_B, "--env", "0", "--games", "2", "--jobs", "1", "--in-process", "--out", str(tmp_path / "m")]
    )
    assert result.exit_code == 0, result.output
    _no_name_cut(result.output, [LONG_A, LONG_B])
    result = CliRunner().invoke(
        app,
        [
            "tournament",
            *options(
                agents=["llm-policy:model=mock/first-legal", LONG_A],
                vs=LONG_B,
                envs="0,3",
                games="1",
                jobs="1",
                in_process=True,
                out=tmp_path / "t",
            ),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "#1 = " in result.output  # too wide for 80 columns whole: short labels and a legend
    _no_name_cut(result.output, ["llm-policy:model=mock/first-legal", LONG_A, LONG_B])


def test_demo_comparison_table_keeps_every_agent_name():
    console = Console(width=80, record=True, file=open("/dev/null", "w"))  # noqa: SIM115 (closed with the console)
    rate = {"count": 1}
    metrics = {"evaluation": {o: {"win": rate, "draw": rate, "games": 4} for o in OPPONENTS}}
    label = "llm-strategist:model=mock/reasoner,batch=50 (a long model name)"
    table, legend = fitting_table(lambda name: comparison_table(make_env(14), label, metrics, {}, name), [label, *OPPONENTS], console)
    console.print(table)
    for line in legend:
        console.print(line, soft_wrap=True)
    _no_name_cut(console.export_text(), [label, *OPPONENTS])
    console.file.close()


def test_run_report_keeps_the_agent_and_model_names(monkeypatch, tmp_path):
    monkeypatch.setenv("COLUMNS", "80")
    result = CliRunner().invoke(
        app,
        [
            "run",
            "--model",
            "mock/first-legal",
            "--env",
            "3",
            "--budget",
            "1",
            "--eval-games",
            "1",
            "--opponents",
            "mcts:n=2,c=1.0",
            "--checkpoints",
            "",
            "--out",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 0, result.output
    _no_name_cut(result.output, ["llm-policy", "mock/first-legal", "mcts:n=2,c=1.0"])
