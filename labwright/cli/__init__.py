"""The ``labwright`` command: the root imports its leaves and registers their commands.

- ``instrument``: serve, check, simulate, world, audit
- ``approvals``: approvals, approve-action, reset-estop (a person's decisions at an instrument)
- ``task``: run, approve, reject, resume, runs, show, events (the task agent)
- ``evaluate``: eval; ``demo``: demo; ``people``: people add/list/rotate/remove
- ``lab``: lab up/down/status (long-lived instrument servers)
- ``web``: the HTTP API and the approval page

No leaf imports this module; what they share is in ``_common`` (options, failing, lab
loading) and ``_render`` (tables and progress lines).
"""

from __future__ import annotations

import os
import sys

import typer

from labwright._text import INTERNAL_ERROR, bug, not_utf8
from labwright.cli import approvals as _approvals
from labwright.cli import demo as _demo
from labwright.cli import evaluate as _evaluate
from labwright.cli import instrument as _instrument
from labwright.cli import lab as _lab
from labwright.cli import people as _people
from labwright.cli import task as _task
from labwright.cli import web as _web

__all__ = ["INTERNAL_ERROR", "app", "main", "run"]

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Labwright: drive laboratory instruments safely.",
)

# serve's options are read by labwright.serving (argparse), which `python -m labwright serve`
# reaches without loading the CLI: this command hands it every argument, --help included.
app.command(
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    add_help_option=False,
)(_instrument.serve)
app.command()(_instrument.check)
# So are simulate's, by labwright.simulating (what `labwright simulate` runs without the CLI).
app.command(
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
    add_help_option=False,
)(_instrument.simulate)
app.command("approve-action")(_approvals.approve_action)
app.command("reset-estop")(_approvals.reset_estop)
app.command()(_approvals.approvals)
app.command()(_instrument.world)
app.command()(_demo.demo)
app.command()(_instrument.audit)
app.command()(_task.run)
app.command()(_task.approve)
app.command()(_task.reject)
app.command()(_task.resume)
app.command()(_task.runs)
app.command()(_task.show)
app.command()(_task.events)
app.command("eval")(_evaluate.eval_)
app.command()(_web.web)
app.add_typer(_people.people_app, name="people")
app.add_typer(_lab.lab_app, name="lab")


def run(argv: list[str] | None = None) -> int:
    """The ``labwright`` command on ``argv``; returns the exit status.

    Every bad input is one line on stderr (exit 2): usage errors as click phrases them,
    without the usage block; arguments that are not UTF-8. An exception that escapes a
    command is a bug: one line, exit 70, the traceback only with ``LABWRIGHT_DEBUG=1``.
    """
    from labwright.cli._common import err, error_line, printable

    argv = sys.argv[1:] if argv is None else argv
    problem = not_utf8(argv)
    if problem is not None:
        error_line(problem)
        return 2
    try:
        status = typer.main.get_command(app).main(
            args=argv, prog_name="labwright", standalone_mode=False
        )
    except typer.Abort:
        err.print("[bold red]aborted[/]", highlight=False)
        return 130
    except (BrokenPipeError, KeyboardInterrupt):
        return 1
    except typer.exceptions.TyperException as exc:  # click's usage errors (typer vendors click)
        if type(exc).__name__ != "NoArgsIsHelpError":  # that one has printed the help
            error_line(exc.format_message())  # type: ignore[attr-defined]
        return int(getattr(exc, "exit_code", 2))
    except Exception as exc:
        if os.environ.get("LABWRIGHT_DEBUG"):
            raise
        err.print(
            f"[bold red]internal error:[/] {printable(bug(exc))}", highlight=False, soft_wrap=True
        )
        return INTERNAL_ERROR
    return status if isinstance(status, int) else 0


def main() -> None:  # pragma: no cover - console entry
    sys.exit(run())
