"""Playing under the protocol: the budgeted arena, privileged simulator grants, the one game loop.

The only part of the harness that holds an environment's condition (K): the arena
and the evaluation grants keep it private and use it to score finished games
or, for privileged agents, through a recorded simulator. May import: ``engine``.
"""
