"""``labwright lab up | down | status``: the lab's instrument servers as background processes."""

from __future__ import annotations

import time
from pathlib import Path

import typer

from labwright.cli._common import ConfigOpt, err, lab_of, out
from state_store.lab_servers import uptime_s

lab_app = typer.Typer(no_args_is_help=True, help="The lab's long-lived instrument servers.")


def _show(outcomes: list, verb: str) -> int:  # type: ignore[type-arg]
    failed = 0
    for o in outcomes:
        where = f" pid {o.record.pid} {o.record.url}" if o.record is not None else ""
        line = f"{o.instrument:<10} {o.what}{where}"
        if o.detail:
            line += f": {o.detail}"
        if o.what == "failed":
            failed += 1
            err.print(f"[bold red]error:[/] {line}", highlight=False)
        else:
            out.print(line, highlight=False)
    if not outcomes:
        out.print(f"nothing to {verb}")
    return failed


@lab_app.command("up")
def up(config: Path | None = ConfigOpt) -> None:
    """Start every local instrument's server in the background (127.0.0.1, a generated
    token, logs in the state directory); `run` and `resume` attach to them."""
    from labwright.lab_up import up as start

    lab = lab_of(config)
    if _show(start(lab), "start"):
        raise typer.Exit(1)
    out.print(f"logs: {lab.state_path / 'lab-servers'}", highlight=False)


@lab_app.command("down")
def down(config: Path | None = ConfigOpt) -> None:
    """Stop the lab's background servers."""
    from labwright.lab_up import down as stop

    _show(stop(lab_of(config)), "stop")


@lab_app.command("status")
def status(config: Path | None = ConfigOpt) -> None:
    """Each instrument's background server: up, down, stale (an older lab file) or not started."""
    from labwright.lab_up import status as how

    lab = lab_of(config)
    for o in how(lab):
        rec = o.record
        line = f"{o.instrument:<10} {o.what}"
        if rec is not None:
            line += f"  pid {rec.pid}  {rec.url}"
            if o.what == "up":
                line += f"  up {time.strftime('%H:%M:%S', time.gmtime(uptime_s(rec)))}"
        if o.detail:
            line += f"  ({o.detail})"
        out.print(line, highlight=False)
    out.print(f"logs: {lab.state_path / 'lab-servers'}", highlight=False)
