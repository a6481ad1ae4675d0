"""The sandbox for generated code: candidate programs run in a worker process under bubblewrap.

A code-world-model candidate (Python source written by a model) is never imported
by the harness. A :class:`~harness.sandbox.client.SandboxWorker` starts one
worker process per candidate under bubblewrap (no network, read-only binds of
only the interpreter and this package, a private /tmp, an unprivileged uid with
no capabilities, rlimits on processes, memory and CPU time) and talks to it in
JSON lines. Every failure of the candidate (a loop, a memory bomb, garbage output,
a mutated input, a blocked system call) comes back as a classified
:class:`~harness.sandbox.failures.Failure` value, never as an exception of the
caller. Planning (MCTS on the candidate's model) runs inside the worker, next to
the candidate (``planner``), so a move costs one round trip.

May import only the standard library: the worker side (``worker``, ``guard``,
``planner``, ``protocol``) runs inside the sandbox, where nothing else is bound.
"""
