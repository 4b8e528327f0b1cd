"""The ``labwright`` console command and ``python -m labwright``: lean commands first.

The commands in :data:`LEAN` run from modules that read their own options (argparse) and
import neither typer nor the task agent: an instrument server (``serve``) and a simulation
(``simulate``) start in a fraction of the CLI's import time. Every other command is the typer
app of :mod:`labwright.cli` (whose ``serve`` and ``simulate`` forward to the same modules, so
each option is defined once).
"""

from __future__ import annotations

import gc
import os
import sys
from importlib import import_module

from labwright._text import INTERNAL_ERROR, bug, not_utf8

# command -> module whose ``main(argv) -> int`` runs it. A server's own errors stay
# tracebacks in its log; a person's command says a bug in one line (see run_lean).
LEAN = {"serve": "labwright.serving", "simulate": "labwright.simulating"}
ONE_LINE_BUGS = frozenset({"simulate"})
# Commands whose process ends as soon as they return, with nothing left to collect or close.
FREEZE_AT_EXIT = frozenset({"simulate"})
EXIT_BAD_INPUT = 2


def _say(markup: str) -> None:
    from rich.console import Console  # only when there is something wrong to say

    Console(stderr=True).print(markup, highlight=False, soft_wrap=True)


def run_lean(argv: list[str]) -> int | None:
    """Run ``argv`` when its command is lean and return its status; None when it is not.

    As in :func:`labwright.cli.run`: a bad input is one line (exit 2); an exception that
    escapes a command of :data:`ONE_LINE_BUGS` is a bug: one line, exit 70, the traceback
    only with ``LABWRIGHT_DEBUG=1``.
    """
    module = LEAN.get(argv[0]) if argv else None
    if module is None:
        return None
    problem = not_utf8(argv)
    if problem is not None:
        _say(f"[bold red]error:[/] {problem}")
        return EXIT_BAD_INPUT
    try:
        return _run(argv, module)
    finally:
        if argv[0] in FREEZE_AT_EXIT:
            # The process ends next: hand what it built (pydantic's validators, every module)
            # to the permanent generation, so the interpreter's teardown does not walk all of
            # it once more (~30 ms of a simulation's ~0.2 s here). The exit is the usual one.
            gc.freeze()


def _run(argv: list[str], module: str) -> int:
    try:
        return int(import_module(module).main(argv[1:]))
    except SystemExit as exc:  # one-line usage errors, --help, a failed simulation
        return exc.code if isinstance(exc.code, int) else EXIT_BAD_INPUT
    except (BrokenPipeError, KeyboardInterrupt):
        return 1
    except Exception as exc:
        if argv[0] not in ONE_LINE_BUGS or os.environ.get("LABWRIGHT_DEBUG"):
            raise
        from rich.markup import escape

        _say(f"[bold red]internal error:[/] {escape(bug(exc))}")
        return INTERNAL_ERROR


def main() -> None:  # pragma: no cover - console entry
    """The ``labwright`` console command."""
    status = run_lean(sys.argv[1:])
    if status is not None:
        sys.exit(status)
    from labwright.cli import app

    sys.exit(app())
