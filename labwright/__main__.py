"""``python -m labwright``: how servers are spawned, and the CLI.

The lean commands (``serve``, ``simulate``: :mod:`labwright.entry`) run without loading
typer or the task agent; everything else is the ``labwright`` command.
"""

import sys

from labwright.entry import run_lean

status = run_lean(sys.argv[1:])
if status is not None:
    sys.exit(status)

from labwright.cli import main  # noqa: E402  (only for the commands that are not lean)

main()
