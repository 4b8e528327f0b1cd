"""``python -m labwright``: how servers are spawned, and the CLI.

``serve`` goes straight to :mod:`labwright.serving` (no typer, rich or task agent loaded);
everything else is the ``labwright`` command.
"""

import sys

if sys.argv[1:2] == ["serve"]:
    from labwright.serving import main as serve

    sys.exit(serve(sys.argv[2:]))

from labwright.cli import main

main()
