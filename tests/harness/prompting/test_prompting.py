"""Prompt rendering: K never shown, hint levels, board text, legal moves, hashing, memory and its budget."""

from __future__ import annotations

import dataclasses
import shutil

import pytest

from engine.condition import Condition
from engine.environments import make_env
from engine.layout import standard_layout
from engine.notation import format_move
from engine.protocol.observation import observe
from engine.rules import Rules
from harness.prompting.memory import EpisodeMemory, GameSummary
from harness.prompting.renderer import (
    DEFAULT_PROMPTS_DIR,
    HINT_LEVELS,
    PromptError,
    PromptRenderer,
    belief_context,
    board_text,
    estimate_tokens,
    fit_memory,
    legal_moves_text,
    move_context,
    system_context,
)

# Environments whose K is 1.01, -0.01, 0.8, 0.6 (condition indices 0, 1, 2, 3), on layouts with obstacles.
K_ENVS = {"1.01": 1, "-0.01": 12, "0.8": 17, "0.6": 26}
FORBIDDEN = ("1.01", "-0.01", "0.8", "0.6")


@pytest.fixture(scope="module")
def renderer() -> PromptRenderer:
    return PromptRenderer()


def _memory(n: int = 30) -> EpisodeMemory:
    """Games whose rho (0.438-0.484) and bin labels (0.40-0.50) contain none of the forbidden K strings."""
    rows = [(28, 36), (30, 34), (31, 33)]
    return EpisodeMemory(tuple(GameSummary(i, i % 2, *rows[i % 3], 0, (1, 0, -1)[i % 3]) for i in range(1, n + 1)))


def _all_prompts(renderer: PromptRenderer, env_id: int, hint: str, show_legal: bool) -> list[str]:
    env = make_env(env_id)
    obs = observe(env.rules, env.rules.initial_state())
    view = _memory().view(10)
    return [
        renderer.render("system", **system_context(env.rules, hint, 2000)).text,
        renderer.render("move", **move_context(obs, view, 30, 2000, show_legal=show_legal)).text,
        renderer.render("move", **move_context(obs, view, 30, 2000, answer_format="json")).text,
        renderer.render("belief", **belief_context(view, 30, 2000)).text,
    ]


@pytest.mark.parametrize("k_text", K_ENVS)
@pytest.mark.parametrize("hint", HINT_LEVELS)
def test_k_never_appears_in_a_prompt(renderer: PromptRenderer, k_text: str, hint: str) -> None:
    env = make_env(K_ENVS[k_text])
    assert f"{float(env.condition.k):g}" == k_text
    for text in _all_prompts(renderer, env.id, hint, show_legal=hint != "none"):
        for forbidden in FORBIDDEN + (env.condition.label, env.name):
            assert forbidden not in text, f"{forbidden!r} leaked into a {hint} prompt"


def test_template_sources_hold_no_k_value() -> None:
    for path in DEFAULT_PROMPTS_DIR.glob("*.j2"):
        source = path.read_text()
        for forbidden in FORBIDDEN + ("Majority", "Minority", "Blitz"):
            assert forbidden not in source, f"{forbidden!r} in {path.name}"


def test_contexts_never_carry_the_condition() -> None:
    env = make_env(17)
    context = system_context(env.rules, "family", 2000)
    assert "4/5" not in repr(context) and "0.8" not in repr(context) and "Condition" not in repr(context)


def test_hint_levels_differ_as_documented(renderer: PromptRenderer) -> None:
    rules = make_env(0).rules
    texts = {h: renderer.render("system", **system_context(rules, h, 2000)).text for h in HINT_LEVELS}
    assert len(set(texts.values())) == 3
    assert "hidden rule decides the winner from the final position" in texts["none"]
    assert "disc counts" not in texts["none"] and "rho" not in texts["none"]
    assert "depends only on the final disc counts" in texts["ratio"] and "rho" not in texts["ratio"]
    assert "rho = own / (own + opponent)" in texts["family"]
    assert "between 0.5 and a hidden threshold K" in texts["family"]
    for text in texts.values():
        assert "a1 is the top-left cell" in text and "2000 games" in text


def test_unknown_hint_level_is_rejected() -> None:
    with pytest.raises(PromptError, match="none, ratio, family"):
        system_context(make_env(0).rules, "everything", 2000)


def test_turn_limit_and_obstacles_are_public_rules(renderer: PromptRenderer) -> None:
    blitz = renderer.render("system", **system_context(make_env(43).rules, "none", 100)).text  # 10 turns, no corners
    assert "each player places at most 10 discs" in blitz and "4 cells are obstacles" in blitz
    plain = renderer.render("system", **system_context(make_env(0).rules, "none", 100)).text
    assert "Turn limit" not in plain and "no obstacle cells" in plain


def test_board_text_marks_coordinates_and_obstacles() -> None:
    layout = standard_layout(6, 6, [(0, 0), (5, 2)], "test")
    rules = Rules(layout)
    state = rules.initial_state()
    black_view = board_text(rules, state, colour=0).splitlines()
    assert black_view[0].split() == list("abcdef")
    assert black_view[1].split()[:2] == ["1", "#"]  # a1 = row 0, col 0: top-left
    assert black_view[6].split()[0] == "6" and black_view[6].split()[3] == "#"  # c6 = (5, 2)
    row3 = black_view[3].split()[1:]  # row 3 = index 2: black (2,2), white (2,3) in the standard start
    white_view = board_text(rules, state, colour=1).splitlines()
    assert row3[2:4] == ["X", "O"] and white_view[3].split()[1:][2:4] == ["O", "X"]


def test_legal_moves_shown_or_hidden(renderer: PromptRenderer) -> None:
    env = make_env(0)
    obs = observe(env.rules, env.rules.initial_state())
    listing = legal_moves_text(env.rules, obs.state)
    assert listing == ", ".join(format_move(m, env.layout) for m in obs.legal_moves) == "e3, f4, c5, d6"
    view = EpisodeMemory().view()
    shown = renderer.render("move", **move_context(obs, view, 0, 10)).text
    hidden = renderer.render("move", **move_context(obs, view, 0, 10, show_legal=False)).text
    assert "Your legal moves: e3, f4, c5, d6" in shown and "up to you" not in shown
    assert "c4" not in hidden and "finding a legal move is up to you" in hidden
    assert "Discs: you 2, opponent 2, empty cells 60." in shown and "No games finished yet." in shown
    assert shown.rstrip().endswith("(column letter, then row number).") and "MOVE: d3" in shown
    assert '{"move": "d3"}' in renderer.render("move", **move_context(obs, view, 0, 10, answer_format="json")).text


def test_feedback_is_shown_when_given(renderer: PromptRenderer) -> None:
    env = make_env(0)
    obs = observe(env.rules, env.rules.initial_state())
    text = renderer.render("move", **move_context(obs, EpisodeMemory().view(), 0, 10, feedback="a1 is not legal")).text
    assert "Your previous answer was not accepted: a1 is not legal" in text


def test_template_hash_covers_includes(tmp_path) -> None:
    prompts = tmp_path / "prompts"
    shutil.copytree(DEFAULT_PROMPTS_DIR, prompts)
    renderer = PromptRenderer(prompts)
    before = renderer.template_hashes()
    assert before == PromptRenderer().template_hashes() and all(len(h) == 16 for h in before.values())
    view = _memory().view(5)
    assert renderer.render("belief", **belief_context(view, 1, 2)).template_hash == before["belief.j2"]
    (prompts / "memory.j2").write_text((prompts / "memory.j2").read_text() + "\n")
    after = PromptRenderer(prompts).template_hashes()
    assert after["system.j2"] == before["system.j2"]
    for name in ("memory.j2", "move.j2", "belief.j2"):  # move and belief include memory
        assert after[name] != before[name]
    assert renderer.template_hash("move") == after["move.j2"]  # the same renderer sees the edit


def test_strict_undefined_catches_a_missing_variable(renderer: PromptRenderer) -> None:
    context = system_context(make_env(0).rules, "none", 10)
    del context["budget"]
    with pytest.raises(PromptError, match="budget"):
        renderer.render("system", **context)
    with pytest.raises(PromptError, match="no template"):
        renderer.render("nonexistent")


def test_rho_bins_add_up() -> None:
    memory = EpisodeMemory(
        tuple(
            GameSummary(i, 0, own, 64 - own, 0, reward)
            for i, (own, reward) in enumerate([(0, -1), (64, 1), (32, 0), (38, 1), (6, -1), (57, 0)], start=1)
        )
    )
    bins = memory.rho_bins(10)
    assert len(bins) == 10 and sum(b.games for b in bins) == 6
    assert (bins[0].losses, bins[9].wins, bins[5].draws, bins[8].draws, bins[5].wins) == (2, 1, 1, 1, 1)  # rho 1.0: last bin
    assert sum(b.wins for b in bins) == memory.totals()[0] == 2
    assert sum(b.games for b in memory.rho_bins(3)) == 6


def test_memory_is_immutable_and_recent_is_ordered() -> None:
    memory = _memory(5)
    longer = memory.add(GameSummary(6, 0, 40, 24, 0, 1))
    assert len(memory.games) == 5 and len(longer.games) == 6
    assert [g.index for g in longer.recent(3)] == [4, 5, 6] and memory.recent(0) == ()
    with pytest.raises(dataclasses.FrozenInstanceError):
        memory.games = ()  # type: ignore[misc]


class _FirstMove:
    """The first legal move: a deterministic policy for a real game record."""

    def act(self, observation) -> int:
        return observation.legal_moves[0]


def test_summary_from_a_game_record() -> None:
    from harness.play.game import play_game
    from harness.prompting.memory import summaries

    env = make_env(5)  # 6x8 with 8 obstacles: 40 playable cells
    record = play_game(env.rules, env.condition, _FirstMove(), _FirstMove())
    memory = summaries([(record, 0), (record, 1)], env.layout)
    black, white = memory.games
    assert (black.index, black.own, black.opp, white.own, white.opp) == (1, record.black, record.white, record.white, record.black)
    assert black.own + black.opp + black.empty == 40 and black.reward == record.rewards[0] == -white.reward
    assert black.rho_value == pytest.approx(record.rho_black)


def test_fit_memory_respects_the_budget_and_keeps_the_summary(renderer: PromptRenderer) -> None:
    memory = _memory(200)
    full = renderer.render("memory", memory=memory.view(20)).text
    for budget in (50, 150, 300):
        view = fit_memory(memory, budget, renderer)
        text = renderer.render("memory", memory=view).text
        summary_only = renderer.render("memory", memory=memory.view(0)).text
        assert "All 200 finished games" in text and "0.40-0.50 | 200" in text
        if estimate_tokens(summary_only) <= budget:
            assert estimate_tokens(text) <= budget
        assert len(view.recent) + view.omitted == 200
    assert fit_memory(memory, 10**6, renderer).recent == memory.recent(20)
    assert renderer.render("memory", memory=fit_memory(memory, 10**6, renderer)).text == full
    tiny = fit_memory(memory, 1, renderer)
    assert tiny.recent == () and tiny.games == 200  # the summary is kept even over budget
    grows = [len(fit_memory(memory, b, renderer).recent) for b in (100, 200, 400)]
    assert grows == sorted(grows) and grows[0] < grows[-1]


def test_estimate_tokens() -> None:
    assert estimate_tokens("") == 0 and estimate_tokens("abcd") == 1 and estimate_tokens("abcde") == 2


def test_game_summary_validation() -> None:
    with pytest.raises(ValueError, match="reward"):
        GameSummary(1, 0, 10, 10, 0, 2)
    assert GameSummary(1, 1, 0, 0, 5, 0).rho == 0
    assert Condition("0.8").wins(GameSummary(1, 0, 45, 19, 0, 1).own, 19)  # 0.703 inside (0.5, 0.8)
