"""The evaluation harness: observations, policies, games, the budgeted arena, matches and statistics."""
