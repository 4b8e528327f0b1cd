"""Instrument commands: serve, check, simulate, approve-action, reset-estop, approvals, world,
audit."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import typer
from rich.markup import escape
from rich.table import Table

from labwright.cli._common import (
    ConfigOpt,
    config_problem,
    fail,
    lab_of,
    out,
)


def serve(ctx: typer.Context) -> None:
    """Serve one instrument as an MCP server (stdio by default); `labwright serve --help`
    lists its options."""
    from labwright import serving

    _forward(serving.main, ctx)


def check(config: Path | None = ConfigOpt) -> None:
    """Validate the lab file completely (decks, labware, liquids, policies, backend classes)."""
    from device_servers.errors import ConfigurationError
    from device_servers.factory import make_driver, make_policy
    from policies import PolicyError

    lab = lab_of(config)
    for inst in lab.instruments:
        try:
            driver = make_driver(inst, None)
            driver.adapter.check_backend()
            driver.initial_twin()
            make_policy(inst)
        except (ConfigurationError, PolicyError) as exc:
            config_problem(lab, inst, exc)
        out.print(
            f"[green]ok[/] {inst.id} ({inst.kind}, {'simulated' if inst.simulated else 'hardware'})"
        )


def simulate(ctx: typer.Context) -> None:
    """Simulate a protocol on the twin of the configured lab (nothing moves, no server);
    `labwright simulate --help` lists its options."""
    from labwright import simulating

    _forward(simulating.main, ctx)


def _forward(main: Callable[[list[str]], int], ctx: typer.Context) -> NoReturn:
    """Run a lean command's ``main`` (:mod:`labwright.entry`) on this command's arguments,
    ``--help`` included."""
    try:
        status = main(list(ctx.args))
    except SystemExit as exc:  # its one-line usage errors and --help
        status = exc.code if isinstance(exc.code, int) else 2
    raise typer.Exit(status)


def world(
    config: Path | None = ConfigOpt,
    labware: str | None = typer.Option(None, help="Only this labware."),
) -> None:
    """Show the simulated world (ground truth): non-empty wells and tips left."""
    from device_servers.sim.world import SimWorld

    lab = lab_of(config)
    if not lab.world_path.exists():
        fail(f"no simulated world yet at {lab.world_path}: serve an instrument first")
    w = SimWorld(lab.world_path)
    rows = w.conn.execute("SELECT DISTINCT labware FROM wells ORDER BY labware").fetchall()
    for row in rows:
        if labware and row["labware"] != labware:
            continue
        filled = {k: v for k, v in w.wells(row["labware"]).items() if v["volume_ul"] > 0}
        out.print(
            f"[bold]{row['labware']}[/]: "
            + (", ".join(f"{k}={v['volume_ul']:.1f}" for k, v in filled.items()) or "empty")
        )
    racks = w.conn.execute("SELECT rack, SUM(present) AS n FROM tips GROUP BY rack").fetchall()
    for rack in racks:
        if not labware or rack["rack"] == labware:
            out.print(f"[bold]{rack['rack']}[/]: {rack['n']} tips")


def audit(
    run: str = typer.Argument(
        ..., help="Task run id, or an instrument id (what its server executed and decided)."
    ),
    verify: bool = typer.Option(
        False, "--verify", help="Check the hash chain and its anchor; exit 1 if broken."
    ),
    config: Path | None = ConfigOpt,
) -> None:
    """Show a run's audit trail (tool calls and decisions); --verify checks the hash chain
    against its anchor outside the database and prints the anchored head."""
    import sqlite3
    from datetime import datetime

    from state_store import AuditLog, TaskRuns, VerifyReport

    def when(ts: Any) -> str:
        try:
            return datetime.fromtimestamp(float(ts)).strftime("%Y-%m-%d %H:%M:%S")
        except (TypeError, ValueError, OverflowError, OSError):
            return escape(str(ts))

    lab = lab_of(config)
    from labwright.records import has_records, task_db

    if not has_records(lab):
        fail(f"unknown run {run!r}: no state database at {lab.db_path}")
    report: VerifyReport | None = None
    try:
        conn = task_db(lab)
        log = AuditLog(conn)
        entries = log.entries(run)
        if not entries and TaskRuns(conn).get(run) is None:
            fail(f"unknown run {run!r}: no task run and no audit entries with that id")
        if verify:
            report = log.verify(run)
    except sqlite3.DatabaseError as exc:
        fail(f"cannot read the audit log in {lab.db_path}: {exc}")
    table = Table("seq", "time", "agent", "tool", "decision note", "result", title=escape(run))
    for e in entries:
        table.add_row(
            str(e.seq),
            when(e.ts),
            escape(str(e.agent)),
            escape(str(e.tool)),
            escape(str(e.decision_note or "")),
            escape(e.outcome),
        )
    out.print(table)
    if report is None:
        return
    anchor = report.anchor
    if anchor is not None:
        head = anchor.last_hash or "none"
        out.print(
            f"anchor: {escape(str(anchor.path))}: seq {anchor.last_seq}, head {head}",
            highlight=False,
            soft_wrap=True,
        )
        if anchor.adopted_at is not None:
            out.print(f"  anchored from seq {anchor.adopted_at} on (the log is older than it)")
    if report.ok:
        out.print(f"[green]audit chain intact ({report.entries} entries)[/]")
        if report.checked != report.entries:
            out.print(f"  the lab's whole chain was checked: {report.checked} entries")
        return
    out.print(f"[bold red]audit chain broken:[/] {len(report.problems)} problem(s)")
    for p in report.problems:
        mark = " [bold](this run)[/]" if p.run_id == run else ""
        out.print(f"  seq {p.seq} {escape(p.kind)}: {escape(p.detail)}{mark}", highlight=False)
    raise typer.Exit(1)
