"""The ``arena`` command (typer): one module per subcommand, ``main`` wires them together.

The top of the harness: may import everything below it, and nothing imports it.
"""
