"""What Inspect loads through the ``inspect_ai`` entry point: the task, registered by its decorator."""

from arena_inspect.task import budgeted

__all__ = ["budgeted"]
