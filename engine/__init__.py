"""Othello on arbitrary layouts with a hidden winning threshold: the pure game."""

from engine.condition import Condition, ConditionError
from engine.env_spec import EnvKey, EnvSpecError, make_env
from engine.environments import Environment, UnknownEnvironmentError, all_envs
from engine.layout import Layout, LayoutError, standard_layout
from engine.notation import NotationError, format_move, parse_move
from engine.rules import IllegalMoveError, Rules
from engine.state import BLACK, PASS, WHITE, State

__all__ = [
    "BLACK",
    "PASS",
    "WHITE",
    "Condition",
    "ConditionError",
    "EnvKey",
    "EnvSpecError",
    "Environment",
    "IllegalMoveError",
    "Layout",
    "LayoutError",
    "NotationError",
    "Rules",
    "State",
    "UnknownEnvironmentError",
    "all_envs",
    "format_move",
    "make_env",
    "parse_move",
    "standard_layout",
]
