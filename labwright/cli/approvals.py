"""A person's decisions at an instrument: approvals (shown whole), approve-action, reset-estop."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape
from rich.table import Table

from labwright.cli._common import ConfigOpt, fail, instrument_of, lab_of, out

PersonTokenOpt = typer.Option(
    None,
    "--token",
    envvar="LABWRIGHT_PERSON_TOKEN",
    help="Your person token (default: you at this terminal, the local operator).",
)


def approve_action(
    instrument: str = typer.Argument(...),
    action_id: str = typer.Argument(...),
    token: str | None = PersonTokenOpt,
    args_hash: str | None = typer.Option(
        None, "--hash", help="The args hash you were shown (refused if the request differs)."
    ),
    refuse: bool = typer.Option(False, "--refuse", help="Refuse it instead of approving."),
    note: str | None = typer.Option(None, "--note", help="Why (kept in the audit log)."),
    config: Path | None = ConfigOpt,
) -> None:
    """A person approves (or refuses) one pending action of an instrument, as shown whole by
    `labwright approvals`."""
    from labwright.identity import cli_person, people_for
    from state_store import ApprovalError, Approvals, connect
    from state_store.people import PeopleError

    lab = lab_of(config)
    instrument_of(lab, instrument)
    conn = connect(lab.db_path)
    approvals = Approvals(conn)
    try:
        person = cli_person(people_for(lab, conn), token)
        if refuse:
            rec = approvals.refuse(instrument, action_id, person, note)
        else:
            rec = approvals.grant(instrument, action_id, person, args_hash)
    except (ApprovalError, PeopleError) as exc:
        pending = ", ".join(p.action_id for p in approvals.pending(instrument)) or "none"
        fail(f"{exc} (pending on {instrument}: {pending})")
    verb = "refused" if refuse else "approved"
    out.print(
        f"[green]{verb}[/] {instrument}/{action_id}: {escape(rec.command)} "
        f"{escape(json.dumps(rec.args, sort_keys=True))} (args {rec.args_hash[:12]}) "
        f"by {escape(person.label)}",
        highlight=False,
    )


def reset_estop(
    instrument: str = typer.Argument(...),
    token: str | None = PersonTokenOpt,
    config: Path | None = ConfigOpt,
) -> None:
    """A person at the instrument resets its latched e-stop (while no run is serving it).

    The reset is approved by the one who runs this (the holder of ``--token``, else the local
    operator; recorded as theirs); the instrument stays stale until it is read back, which a
    resumed run does before anything moves.
    """
    import asyncio

    from device_servers.errors import DeviceError
    from device_servers.factory import open_runtime
    from labwright.identity import cli_person, people_for
    from state_store import Approvals, connect
    from state_store.people import PeopleError

    lab = lab_of(config)
    inst = instrument_of(lab, instrument)
    if inst.url:
        fail(f"{instrument} is served at {inst.url}: reset its e-stop there")
    try:
        person = cli_person(people_for(lab), token).require("approve")
    except PeopleError as exc:
        fail(str(exc))
    by = person.label
    action_id = f"person/{person.name}/reset-estop/{time.strftime('%Y%m%dT%H%M%S')}"

    async def reset() -> dict[str, Any]:
        async with open_runtime(inst, lab.db_path, lab.world_path) as rt:
            if not rt.estop:
                return {"estop": False, "was": "not latched"}
            try:
                return await rt.reset_estop({"action_id": action_id})
            except DeviceError as exc:
                if exc.code != "APPROVAL_REQUIRED":
                    raise
            Approvals(connect(lab.db_path)).grant(instrument, action_id, person)
            return await rt.reset_estop({"action_id": action_id})

    try:
        result = asyncio.run(reset())
    except DeviceError as exc:
        fail(f"{exc.code}: {exc.detail}")
    if result.get("was") == "not latched":
        out.print(f"{instrument}: the e-stop is not latched", highlight=False)
        return
    out.print(
        f"[green]e-stop reset[/] on {instrument} by {by}; {result.get('stale')}",
        highlight=False,
    )


def approvals(
    config: Path | None = ConfigOpt,
    as_json: bool = typer.Option(False, "--json", help="Every field of each request, as JSON."),
) -> None:
    """Actions waiting for a person, shown whole: the command, its exact arguments and their
    hash, the state it was asked in, who asked, when and why."""
    from datetime import datetime

    from state_store import Approvals, connect

    lab = lab_of(config)
    pending = Approvals(connect(lab.db_path)).pending()
    if as_json:
        print(json.dumps([p.as_dict() for p in pending], indent=2, default=str))
        return
    table = Table(
        "instrument", "action_id", "command", "arguments", "args hash", "asked in",
        "asked by", "asked at", "reason", title="waiting for a person",
    )  # fmt: skip
    for p in pending:
        table.add_row(
            escape(p.instrument),
            escape(p.action_id),
            escape(p.command),
            escape(json.dumps(p.args, sort_keys=True)),
            p.args_hash[:12],
            escape(json.dumps({k: v for k, v in p.state.items() if k != "policy"})),
            escape(p.requested_by or "?"),
            datetime.fromtimestamp(p.requested_at).strftime("%Y-%m-%d %H:%M:%S"),
            escape(p.reason or ""),
        )
    out.print(table)
