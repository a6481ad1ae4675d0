"""Unit tests of the engine's Python API: layouts, conditions, notation, rules, environments."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from engine import (
    BLACK,
    PASS,
    WHITE,
    Condition,
    ConditionError,
    IllegalMoveError,
    Layout,
    LayoutError,
    NotationError,
    Rules,
    State,
    UnknownEnvironmentError,
    format_move,
    make_env,
    parse_move,
    standard_layout,
)
from engine.env_spec import EnvSpecError
from engine.environments import all_envs

# ---------------------------------------------------------------- layouts


@pytest.mark.parametrize(("rows", "cols"), [(3, 8), (8, 3), (17, 8), (8, 17), (3, 3), (17, 17), (0, 8), (-4, 8)])
def test_layout_rejects_sizes_outside_4_to_16(rows: int, cols: int) -> None:
    with pytest.raises(LayoutError, match="4 to 16"):
        Layout(rows, cols)


@pytest.mark.parametrize(("rows", "cols"), [(4, 4), (16, 16), (4, 16), (16, 4), (5, 13)])
def test_layout_accepts_sizes_4_to_16(rows: int, cols: int) -> None:
    layout = standard_layout(rows, cols)
    assert layout.cells == rows * cols
    assert len(layout.black) == len(layout.white) == 2


def test_layout_rejects_non_integer_size() -> None:
    with pytest.raises(LayoutError):
        Layout(8.0, 8)  # type: ignore[arg-type]


@pytest.mark.parametrize("field", ["obstacles", "black", "white"])
@pytest.mark.parametrize("cell", [(8, 0), (0, 8), (-1, 0), (0, -1), (8, 8)])
def test_layout_rejects_cells_off_the_board(field: str, cell: tuple[int, int]) -> None:
    with pytest.raises(LayoutError, match="outside the 8 x 8 board"):
        Layout(8, 8, **{field: {cell}})


@pytest.mark.parametrize(
    "contents",
    [
        {"obstacles": {(3, 3)}, "black": {(3, 3)}},
        {"obstacles": {(0, 0)}, "white": {(0, 0)}},
        {"black": {(4, 4), (2, 2)}, "white": {(4, 4)}},
    ],
)
def test_layout_rejects_a_cell_with_two_contents(contents: dict) -> None:
    with pytest.raises(LayoutError, match="two contents"):
        Layout(8, 8, **contents)


def test_standard_layout_keeps_an_obstacle_on_a_centre_cell() -> None:
    layout = standard_layout(8, 8, [(3, 3)])
    assert (3, 3) in layout.obstacles
    assert layout.black == {(4, 4)}
    assert layout.white == {(3, 4), (4, 3)}


def test_standard_layout_centre_discs_on_odd_and_rectangular_boards() -> None:
    layout = standard_layout(5, 13)
    assert layout.black == {(1, 5), (2, 6)}
    assert layout.white == {(1, 6), (2, 5)}


# ---------------------------------------------------------------- conditions


@pytest.mark.parametrize("k", [0.5, "0.5", Fraction(1, 2), "1/2"])
def test_condition_rejects_k_one_half(k) -> None:
    with pytest.raises(ConditionError, match=r"0\.5"):
        Condition(k)


@pytest.mark.parametrize("k", ["abc", "", None, float("nan")])
def test_condition_rejects_non_numbers(k) -> None:
    with pytest.raises(ConditionError):
        Condition(k)


def test_condition_rejects_bad_turn_limits() -> None:
    with pytest.raises(ConditionError):
        Condition(0.8, turn_limit=0)
    with pytest.raises(ConditionError):
        Condition(0.8, turn_limit=10, turn_counting="per_game")


def test_condition_k_is_exact() -> None:
    assert Condition(1.01).k == Fraction(101, 100)
    assert Condition(0.6).k == Fraction(3, 5)
    assert Condition(-0.01).k == Fraction(-1, 100)
    assert Condition(0.6).interval == (Fraction(1, 2), Fraction(3, 5))
    assert Condition(0.2).interval == (Fraction(1, 5), Fraction(1, 2))


@pytest.mark.parametrize(
    ("k", "black", "white", "rewards"),
    [
        # K = 0.6: black wins iff 1/2 < rho < 3/5, open at both ends.
        (0.6, 30, 20, (0, 0)),  # rho = 0.6 exactly: not inside; white's 0.4 is not either
        (0.6, 29, 20, (1, -1)),  # 29/49 = 0.5918...
        (0.6, 20, 29, (-1, 1)),
        (0.6, 31, 20, (0, 0)),  # 31/51 > 0.6
        (0.6, 32, 32, (0, 0)),  # rho = 1/2 is always a draw
        (0.6, 64, 0, (0, 0)),
        # K = 1.01: any majority wins, even a wipe-out.
        (1.01, 33, 31, (1, -1)),
        (1.01, 31, 33, (-1, 1)),
        (1.01, 64, 0, (1, -1)),
        (1.01, 0, 10, (-1, 1)),
        (1.01, 32, 32, (0, 0)),
        # K = -0.01: the minority wins; rho = 0 lies in (-0.01, 0.5), so zero discs is a win.
        (-0.01, 20, 44, (1, -1)),
        (-0.01, 44, 20, (-1, 1)),
        (-0.01, 0, 10, (1, -1)),
        (-0.01, 10, 0, (-1, 1)),
        (-0.01, 32, 32, (0, 0)),
        # K = 0.4: win iff 0.4 < rho < 0.5.
        (0.4, 40, 60, (0, 0)),  # rho = 0.4 exactly
        (0.4, 41, 59, (1, -1)),
        (0.4, 59, 41, (-1, 1)),
        (0.4, 30, 70, (0, 0)),
        # K = 0.8 and 0.2 at their boundaries.
        (0.8, 48, 12, (0, 0)),  # rho = 0.8
        (0.8, 47, 12, (1, -1)),
        (0.2, 12, 48, (0, 0)),  # rho = 0.2
        (0.2, 13, 48, (1, -1)),
    ],
)
def test_condition_rewards_at_the_boundaries(k: float, black: int, white: int, rewards: tuple[int, int]) -> None:
    condition = Condition(k)
    assert condition.rewards(black, white) == rewards
    assert condition.wins(black, white) == (rewards[0] == 1)
    assert condition.wins(white, black) == (rewards[1] == 1)


def test_condition_rewards_follow_the_rule_for_every_count() -> None:
    """Exhaustively on 0..64 discs: win iff min(K, 1/2) < own/(own+opp) < max(K, 1/2)."""
    for k in ("1.01", "-0.01", "0.8", "0.6", "0.4", "0.2"):
        condition, kf = Condition(k), Fraction(k)
        low, high = min(kf, Fraction(1, 2)), max(kf, Fraction(1, 2))
        for own in range(65):
            for opp in range(65 - own):
                if own + opp:
                    assert condition.wins(own, opp) == (low < Fraction(own, own + opp) < high), (k, own, opp)


# ---------------------------------------------------------------- notation


def test_notation_round_trip_on_every_cell_of_16x16() -> None:
    layout = standard_layout(16, 16)
    for index in range(layout.cells):
        text = format_move(index, layout)
        assert parse_move(text, layout) == index
        assert parse_move(text.upper(), layout) == index
        assert parse_move(f" {text} ", layout) == index
    assert format_move(0, layout) == "a1"
    assert format_move(15, layout) == "p1"
    assert format_move(9 * 16, layout) == "a10"
    assert format_move(255, layout) == "p16"


def test_notation_of_pass() -> None:
    layout = standard_layout(8, 8)
    assert format_move(PASS, layout) == "pass"
    assert parse_move("pass", layout) == PASS
    assert parse_move(" PASS ", layout) == PASS


@pytest.mark.parametrize(
    ("text", "rows", "cols"),
    [(t, 16, 16) for t in ("z9", "a17", "q1", "", "a0")] + [(t, 8, 8) for t in ("  ", "i1", "a9", "d3x", "3d", "passe")] + [("e6", 5, 4)],
)
def test_notation_errors(text: str, rows: int, cols: int) -> None:
    with pytest.raises(NotationError):
        parse_move(text, standard_layout(rows, cols))


@pytest.mark.parametrize("index", [-2, 64, 100])
def test_format_move_rejects_indices_off_the_board(index: int) -> None:
    with pytest.raises(NotationError):
        format_move(index, standard_layout(8, 8))


def test_notation_columns_are_letters_rows_are_numbers() -> None:
    layout = standard_layout(5, 13)
    assert parse_move("m5", layout) == 4 * 13 + 12
    assert parse_move("a2", layout) == 13
    with pytest.raises(NotationError):
        parse_move("n1", layout)
    with pytest.raises(NotationError):
        parse_move("a6", layout)


# ---------------------------------------------------------------- rules


def test_opening_moves_of_the_standard_board() -> None:
    rules = Rules(standard_layout(8, 8))
    state = rules.initial_state()
    assert state.to_move == BLACK
    moves = rules.legal_moves(state)
    assert len(moves) == 4
    # Black sits on d4 and e5 (the reference environment's placement).
    assert {format_move(m, rules.layout) for m in moves} == {"e3", "f4", "c5", "d6"}
    after = rules.play(state, parse_move("e3", rules.layout))
    assert after.to_move == WHITE and rules.counts(after) == (4, 1)
    assert (after.placed_black, after.placed_white) == (1, 0)


def test_play_rejects_an_illegal_move_listing_the_legal_ones() -> None:
    rules = Rules(standard_layout(8, 8))
    state = rules.initial_state()
    for bad in (0, parse_move("d4", rules.layout), PASS):
        with pytest.raises(IllegalMoveError) as raised:
            rules.play(state, bad)
        message = str(raised.value)
        assert "legal moves" in message
        for move in rules.legal_moves(state):
            assert format_move(move, rules.layout) in message


def test_play_rejects_moves_off_the_board() -> None:
    rules = Rules(standard_layout(8, 8))
    for bad in (64, -5, 1000):
        with pytest.raises(IllegalMoveError, match="legal moves"):
            rules.play(rules.initial_state(), bad)


def test_a_forced_pass() -> None:
    """White a1 b1, black c1 on 4x4: black cannot flank anything, white can (d1)."""
    rules = Rules(Layout(4, 4, black={(0, 2)}, white={(0, 0), (0, 1)}))
    state = rules.initial_state()
    assert rules.legal_mask(state) == 0
    assert rules.legal_moves(state) == [PASS]
    assert not rules.is_over(state)
    with pytest.raises(IllegalMoveError):
        rules.play(state, 3)
    passed = rules.play(state, PASS)
    assert passed == State(state.black, state.white, WHITE, 0, 0)
    assert rules.legal_moves(passed) == [3]
    with pytest.raises(IllegalMoveError):
        rules.play(passed, PASS)  # a pass is only legal when no placement is
    wiped = rules.play(passed, 3)
    assert rules.counts(wiped) == (0, 4)
    assert (wiped.placed_black, wiped.placed_white) == (0, 1)
    assert rules.legal_moves(wiped) == []
    assert rules.is_over(wiped)


def test_a_full_board_is_over() -> None:
    cells = [(r, c) for r in range(4) for c in range(4)]
    rules = Rules(Layout(4, 4, black=set(cells[:9]), white=set(cells[9:])))
    state = rules.initial_state()
    assert rules.legal_moves(state) == []
    assert rules.is_over(state)
    with pytest.raises(IllegalMoveError, match="the game is over"):
        rules.play(state, PASS)


def test_game_over_when_neither_can_flank() -> None:
    """Discs left but no line to close: over, with empty cells on the board."""
    rules = Rules(Layout(4, 4, obstacles={(1, 1), (1, 2)}, black={(0, 0)}, white={(3, 3)}))
    state = rules.initial_state()
    assert rules.legal_moves(state) == [] and rules.is_over(state)


def test_turn_limit_forces_a_pass_then_ends_the_game() -> None:
    layout = standard_layout(8, 8)
    start = Rules(layout).initial_state()
    # Black has used its 10 placements, white 3: per player, black passes and white plays on.
    state = State(start.black, start.white, BLACK, placed_black=10, placed_white=3)
    per_player = Rules(layout, 10, "per_player")
    assert per_player.legal_moves(state) == [PASS]
    white_to_move = state._replace(to_move=WHITE)
    assert per_player.legal_moves(white_to_move) == Rules(layout).legal_moves(white_to_move) != [PASS]
    assert per_player.legal_moves(state._replace(placed_white=10)) == []
    # In total 13 >= 10 placements: over for both.
    total = Rules(layout, 10, "total")
    assert total.legal_moves(state) == []
    assert total.is_over(state)
    assert total.legal_moves(state._replace(placed_black=5, placed_white=4)) == Rules(layout).legal_moves(start)


@pytest.mark.parametrize("env_id", [42, 48, 49, 55])
def test_blitz_environments_have_a_turn_limit_of_10(env_id: int) -> None:
    rules = make_env(env_id).rules
    assert rules.turn_limit == 10
    assert rules.turn_counting == "per_player"
    assert make_env(env_id, turn_counting="total").rules.turn_counting == "total"


def _random_game(rules: Rules, rng: random.Random) -> State:
    state = rules.initial_state()
    while moves := rules.legal_moves(state):
        state = rules.play(state, rng.choice(moves))
    return state


def _can_place(layout: Layout, state: State, colour: int) -> bool:
    """Whether ``colour`` has a legal placement with no turn limit."""
    return Rules(layout).legal_mask(state._replace(to_move=colour)) != 0


@pytest.mark.parametrize("env_id", [49, 55])
def test_blitz_per_player_games_end_after_10_placements_each(env_id: int) -> None:
    env = make_env(env_id)
    rng = random.Random(env_id)
    both_full = 0
    for _ in range(30):
        state = _random_game(env.rules, rng)
        for colour in (BLACK, WHITE):
            assert state.placed(colour) <= 10
            # The game stopped because each colour used its 10 placements or had no move left.
            assert state.placed(colour) == 10 or not _can_place(env.layout, state, colour)
        both_full += state.placed_black == state.placed_white == 10
    assert both_full >= 25


@pytest.mark.parametrize("env_id", [49, 55])
def test_blitz_total_games_end_after_10_placements_in_all(env_id: int) -> None:
    env = make_env(env_id, turn_counting="total")
    rng = random.Random(env_id)
    full = 0
    for _ in range(30):
        state = _random_game(env.rules, rng)
        placed = state.placed_black + state.placed_white
        assert placed <= 10
        assert placed == 10 or not (_can_place(env.layout, state, BLACK) or _can_place(env.layout, state, WHITE))
        full += placed == 10
    assert full >= 25


def test_an_unlimited_game_runs_past_10_placements() -> None:
    env = make_env(0)
    assert env.rules.turn_limit is None
    state = _random_game(env.rules, random.Random(0))
    assert state.placed_black + state.placed_white > 20
    assert not _can_place(env.layout, state, BLACK) and not _can_place(env.layout, state, WHITE)


# ---------------------------------------------------------------- environments


@pytest.mark.parametrize(
    "bad, error",
    [(-1, UnknownEnvironmentError), (56, UnknownEnvironmentError)] + [(bad, EnvSpecError) for bad in (True, 3.0, None, "x", "3.5")],
)
def test_make_env_rejects_bad_ids(bad, error) -> None:  # an id written as text ("3") is an environment spec
    with pytest.raises(error, match="0-55"):
        make_env(bad)
    assert make_env("3").id == make_env(3).id == 3


def test_the_56_environments() -> None:
    envs = all_envs()
    assert [env.id for env in envs] == list(range(56))
    for env in envs:
        assert env.layout_index == env.id % 7 and env.condition_index == env.id // 7
        assert env.layout == envs[env.layout_index].layout
        assert env.rules.layout == env.layout
        assert not hasattr(env.rules, "condition") and not hasattr(env.rules, "k")
    ks = ("1.01", "-0.01", "0.8", "0.6", "0.4", "0.2", "1.01", "-0.01")
    assert [envs[7 * c].condition.k for c in range(8)] == [Fraction(k) for k in ks]
    assert [envs[7 * c].condition.turn_limit for c in range(8)] == [None] * 6 + [10, 10]


@pytest.mark.parametrize("cell", [(1, 2, 3), ("a", 1), 5, (True, 0)])
def test_malformed_obstacle_cells_raise_layout_error(cell):
    with pytest.raises(LayoutError, match="obstacle cell"):
        Layout(8, 8, obstacles={cell})


@pytest.mark.parametrize("limit", [True, 0, -3, 2.5, "10"])
def test_turn_limit_must_be_a_positive_int(limit):
    with pytest.raises(ValueError, match="turn_limit"):
        Condition(0.8, turn_limit=limit)
    with pytest.raises(ValueError, match="turn_limit"):
        Rules(standard_layout(8, 8), turn_limit=limit)
