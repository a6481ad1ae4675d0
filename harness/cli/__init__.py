"""The ``arena`` command (typer): one module per subcommand, ``main`` wires them together.

The top of the harness: may import everything below it, and nothing imports it.
"""

from harness.installation.names import exit_if_unusable

exit_if_unusable()  # before any command's imports: when `agents` or `engine` is another package, one line, exit code 1
