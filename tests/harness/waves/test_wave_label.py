"""W beside a model agent's name: one function for every table; the compact board of wide boards; CPU per call."""

from __future__ import annotations

from harness.bench.throughput import ENV_16, CpuShare
from harness.prompting.renderer import board_text
from harness.prompting.waves import wave_label, wave_size
from harness.runs.llm_config import LlmRunConfig
from harness.sweep.leaderboard import model_agent_name
from harness.tournaments.results import agent_label


def test_every_table_names_a_model_agent_with_its_w():
    assert wave_label("llm-policy", 16) == "llm-policy (W=16)"
    assert wave_label("llm-strategist:model=mock/reasoner") == "llm-strategist:model=mock/reasoner (W=1)"  # a spec: W=1
    assert wave_label("minimax:depth=3") == "minimax:depth=3" and wave_label("cwm", None) == "cwm"
    config = LlmRunConfig(agent="llm-strategist", model="mock/reasoner", env=0, budget=4, eval_games=0, batch=8)
    assert config.agent_label() == "llm-strategist (W=8)"
    assert wave_size("llm-policy", {}) == 1  # a run recorded before waves
    assert model_agent_name({"agent": "llm-policy", "model": "mock/x", "wave": 4}) == "llm-policy:model=mock/x,hint=ratio (W=4)"
    assert agent_label("llm-policy:model=mock/x", privileged=True) == "llm-policy:model=mock/x (W=1)*"


def test_boards_from_13_columns_are_written_without_spaces_between_cells():
    from engine import make_env
    from engine.env_spec import env_key

    rules = make_env(env_key(ENV_16)).rules
    compact = board_text(rules, rules.initial_state(), 0)
    assert compact.split("\n")[0].strip() == "abcdefghijklmnop" and compact == board_text(rules, rules.initial_state(), 0, compact=True)
    assert "X O" not in compact and ("XO" in compact or "OX" in compact)
    eight = make_env(0).rules
    assert board_text(eight, eight.initial_state(), 0).split("\n")[0].strip() == "a b c d e f g h"  # golden prompts kept


def test_cpu_share_per_call_and_one_core_rate():
    cpu = CpuShare(calls=2000, agent_s=6.0, referee_s=2.0, stub_s=None)
    assert cpu.ms_per_call(cpu.agent_s) == 3.0 and round(cpu.one_core_calls_per_second) == 333
