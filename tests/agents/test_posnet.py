"""PosNet: the D4 group, Eq. 11/12 tables and their equivariance, the game kernel, training, shipped weights."""

from __future__ import annotations

import numpy as np
import pytest

from agents.base import AgentContext
from agents.heuristic.positional import PositionalAgent, positional_table
from agents.posnet.kernel import play_wpc_game
from agents.posnet.network import (
    D4_SIZE,
    N_PARAMS,
    PosNetAgent,
    compose_transforms,
    ensemble_table,
    forward,
    inverse_transform,
    layout_planes,
    posnet_table,
    shipped_population,
    symmetric_table,
    transform_grid,
    transform_layout,
    value_table,
)
from agents.posnet.train import TrainConfig, TrainConfigError, load_metadata, save_result, train_posnet
from engine.condition import Condition
from engine.environments import layouts
from engine.layout import standard_layout
from engine.layout_gen import random_layouts
from engine.rules import Rules
from harness.play.game import play_game
from harness.registry.specs import make_agent

TRANSFORMS = range(D4_SIZE)
GRID = np.arange(12).reshape(3, 4)  # non-square, all values distinct
# Non-square boards with obstacles (5-6 rows, 7-9 cols).
ODD_LAYOUTS = random_layouts(7, 3, rows=(5, 6), cols=(7, 9), obstacle_density=(0.1, 0.2))


def random_params(seed: int, count: int | None = None) -> np.ndarray:
    """Parameters with biases too (init_params starts them at 0), so no symmetry hides a bug."""
    rng = np.random.default_rng(seed)
    return rng.normal(0.0, 0.5, size=(N_PARAMS,) if count is None else (count, N_PARAMS))


# --- D4 -----------------------------------------------------------------------------------------


def test_the_eight_transforms_are_distinct_and_odd_turns_swap_the_shape():
    images = [transform_grid(GRID, t) for t in TRANSFORMS]
    assert len({image.tobytes() + bytes(image.shape) for image in images}) == D4_SIZE
    assert [image.shape for image in images] == [(3, 4), (4, 3)] * 4
    assert np.array_equal(images[0], GRID)


@pytest.mark.parametrize("transform", TRANSFORMS)
def test_inverse_undoes_each_transform(transform):
    inverse = inverse_transform(transform)
    assert np.array_equal(transform_grid(transform_grid(GRID, transform), inverse), GRID)
    assert np.array_equal(transform_grid(transform_grid(GRID, inverse), transform), GRID)
    assert compose_transforms(transform, inverse) == compose_transforms(inverse, transform) == 0


def test_composition_is_closed_and_matches_applying_in_turn():
    for outer in TRANSFORMS:
        row = [compose_transforms(outer, inner) for inner in TRANSFORMS]
        assert sorted(row) == list(TRANSFORMS)  # a Latin square: a group's table
        for inner, both in zip(TRANSFORMS, row):
            assert np.array_equal(transform_grid(transform_grid(GRID, inner), outer), transform_grid(GRID, both))


def test_transforms_act_on_leading_axes_and_reject_bad_ids():
    planes = np.stack([GRID, -GRID])
    assert np.array_equal(transform_grid(planes, 5)[1], transform_grid(-GRID, 5))
    for bad in (-1, 8, 2.0, True):
        with pytest.raises(ValueError, match="D4"):
            transform_grid(GRID, bad)


@pytest.mark.parametrize("transform", TRANSFORMS)
def test_transformed_layout_has_the_transformed_planes(transform):
    layout = ODD_LAYOUTS[0]
    moved = transform_layout(layout, transform)
    assert len(moved.obstacles) == len(layout.obstacles) and moved.cells == layout.cells
    assert np.array_equal(layout_planes(moved), transform_grid(layout_planes(layout), transform))


# --- the net and its tables ---------------------------------------------------------------------


def test_forward_shapes_obstacles_and_batches():
    layout = ODD_LAYOUTS[1]
    params = random_params(1, count=3)
    batch = forward(params, layout_planes(layout))
    assert batch.shape == (3, layout.rows, layout.cols)
    for i in range(3):
        assert np.allclose(batch[i], forward(params[i], layout_planes(layout)))
    for cell in layout.obstacles:
        assert np.all(batch[(slice(None), *cell)] == 0)
    with pytest.raises(ValueError, match=str(N_PARAMS)):
        forward(np.zeros(N_PARAMS - 1), layout_planes(layout))


def test_value_table_is_eq11():
    layout, params = ODD_LAYOUTS[0], random_params(2)
    for transform in TRANSFORMS:
        net_output = forward(params, layout_planes(transform_layout(layout, transform)))
        expected = transform_grid(net_output, inverse_transform(transform)).reshape(-1)
        assert np.allclose(value_table(params, layout, transform), expected)


@pytest.mark.parametrize("layout", ODD_LAYOUTS, ids=lambda layout: layout.name)
@pytest.mark.parametrize("transform", TRANSFORMS)
def test_symmetric_table_is_d4_equivariant(layout, transform):
    params = random_params(3)
    table = symmetric_table(params, layout).reshape(layout.shape)
    moved = transform_layout(layout, transform)
    assert np.allclose(symmetric_table(params, moved).reshape(moved.shape), transform_grid(table, transform))


def test_symmetric_table_of_a_symmetric_board_is_symmetric_and_zero_on_obstacles():
    layout = standard_layout(8, 8, {(0, 0), (7, 7), (0, 7), (7, 0)})
    grid = symmetric_table(random_params(4), layout).reshape(8, 8)
    assert np.allclose(grid, grid.T) and np.allclose(grid, grid[::-1, ::-1])
    assert grid[0, 0] == grid[7, 7] == 0


def test_ensemble_table_is_in_range_and_zero_on_obstacles():
    layout = ODD_LAYOUTS[2]
    table = ensemble_table(random_params(5, count=6), layout)
    obstacles = [layout.index(cell) for cell in layout.obstacles]
    assert table.shape == (layout.cells,)
    assert np.all(table[obstacles] == 0)
    assert -1 <= table.min() and table.max() <= 1


# --- the game kernel against the Python agent ---------------------------------------------------


@pytest.mark.parametrize("layout", [*layouts(), *ODD_LAYOUTS], ids=lambda layout: layout.name)
def test_kernel_game_matches_positional_agents_in_the_engine(layout):
    rng = np.random.default_rng(layout.cells)
    black_table, white_table = rng.normal(size=layout.cells), rng.normal(size=layout.cells)  # no ties
    rules = Rules(layout)
    black, white = (PositionalAgent(AgentContext(rules), np.random.default_rng(i)) for i in range(2))
    black.table, white.table = black_table, white_table

    record = play_game(rules, Condition("1.5"), black, white)
    game = play_wpc_game(layout, black_table, white_table)

    assert game.moves == record.moves
    assert (game.black, game.white) == (record.black, record.white)


def test_kernel_breaks_ties_by_lowest_index():
    layout = layouts()[0]
    game = play_wpc_game(layout, np.zeros(64), np.zeros(64))
    rules = Rules(layout)
    assert game.moves[0] == min(rules.legal_moves(rules.initial_state()))
    assert game.black + game.white <= 64


# --- training -----------------------------------------------------------------------------------


def test_tiny_training_is_deterministic_and_plays_the_stated_games(monkeypatch, tmp_path):
    import agents.posnet.train as posnet_train

    played = []
    real = posnet_train.disc_counts
    monkeypatch.setattr(posnet_train, "disc_counts", lambda *args: played.append(1) or real(*args))
    config = TrainConfig(population=8, generations=3, layouts=3, sigma=0.05, seed=11)
    seen = []
    first = train_posnet(config, on_generation=lambda generation, population: seen.append(generation))
    second = train_posnet(config)

    assert len(played) == 2 * first.games and first.games == 8 // 2 * 2 * 3 == config.games
    assert seen == [1, 2, 3]
    assert first.population.shape == (8, N_PARAMS)
    assert np.array_equal(first.population, second.population)
    assert not np.array_equal(first.population, train_posnet(TrainConfig(8, 3, 3, 0.05, seed=12)).population)

    path = save_result(first, tmp_path / "run.npz")
    metadata = load_metadata(path)
    assert {k: metadata[k] for k in ("population_size", "generations", "layouts", "seed", "games")} == {
        "population_size": 8,
        "generations": 3,
        "layouts": 3,
        "seed": 11,
        "games": 24,
    }
    assert metadata["sigma"] == 0.05 and metadata["elapsed_seconds"] >= 0


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("population", 7, "even"),
        ("population", 0, ">= 2"),
        ("generations", -1, ">= 0"),
        ("layouts", 0, ">= 1"),
        ("sigma", -0.1, "sigma"),
        ("sigma", float("nan"), "sigma"),
        ("seed", -1, "seed"),
    ],
)
def test_bad_training_settings_are_refused(field, value, message):
    with pytest.raises(TrainConfigError, match=message):
        TrainConfig(**{field: value})


# --- the shipped weights and the agent ----------------------------------------------------------


def test_shipped_population_loads():
    population = shipped_population()
    assert population.ndim == 2 and population.shape[1] == N_PARAMS and population.shape[0] >= 2
    assert np.all(np.isfinite(population))


@pytest.mark.parametrize("layout", layouts(), ids=lambda layout: layout.name)
def test_posnet_table_is_cached_read_only_in_range_and_zero_on_obstacles(layout):
    table = posnet_table(layout)
    assert table is posnet_table(layout) and not table.flags.writeable
    assert table.shape == (layout.cells,) and -1 <= table.min() and table.max() <= 1
    assert all(table[layout.index(cell)] == 0 for cell in layout.obstacles)


def test_shipped_table_on_8x8_values_corners_most_and_penalises_c_and_x_squares():
    grid = posnet_table(layouts()[0]).reshape(8, 8)
    corner, c_square, x_square, other_edge = grid[0, 0], grid[0, 1], grid[1, 1], grid[0, 2:6]
    assert corner == grid.max()
    assert x_square < 0 and x_square == grid[1:7, 1:7].min()  # the worst cell of the inner 6 x 6
    assert c_square < other_edge.min()  # the worst cell of the edge


def test_posnet_agent_is_a_positional_agent_with_the_posnet_table():
    rules = Rules(layouts()[4])
    agent = make_agent("posnet", AgentContext(rules), np.random.default_rng(0))
    assert isinstance(agent, PosNetAgent) and isinstance(agent, PositionalAgent)
    assert agent.name == "posnet"
    assert np.array_equal(agent.table, posnet_table(rules.layout))
    assert not np.array_equal(agent.table, positional_table(rules.layout))
