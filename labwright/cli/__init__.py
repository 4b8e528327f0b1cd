"""The ``labwright`` command: the root imports its leaves and registers their commands.

- ``instrument``: serve, check, simulate, approve-action, approvals, world, audit
- ``task``: run, approve, reject, resume, runs, show, events (the task agent)
- ``evaluate``: eval; ``demo``: demo; ``people``: people add/list/rotate/remove
- ``lab``: lab up/down/status (long-lived instrument servers)
- ``web``: the HTTP API and the approval page

No leaf imports this module; what they share is in ``_common`` (options, failing, lab
loading) and ``_render`` (tables and progress lines).
"""

from __future__ import annotations

import sys

import typer

from labwright.cli import demo as _demo
from labwright.cli import evaluate as _evaluate
from labwright.cli import instrument as _instrument
from labwright.cli import lab as _lab
from labwright.cli import people as _people
from labwright.cli import task as _task
from labwright.cli import web as _web

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Labwright: drive laboratory instruments safely.",
)

app.command()(_instrument.serve)
app.command()(_instrument.check)
app.command()(_instrument.simulate)
app.command("approve-action")(_instrument.approve_action)
app.command("reset-estop")(_instrument.reset_estop)
app.command()(_instrument.approvals)
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


def main() -> None:  # pragma: no cover - console entry
    try:
        app()
    except BrokenPipeError:
        sys.exit(1)
