"""The ``labwright`` command."""

from __future__ import annotations

import json
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import typer
import yaml
from rich.console import Console
from rich.table import Table

from labwright.config import ConfigError, LabConfig, load

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Labwright: drive laboratory instruments safely.",
)
err = Console(stderr=True)
out = Console()

ConfigOpt = typer.Option(
    None,
    "--config",
    "-c",
    help="Lab file (default: $LABWRIGHT_CONFIG, ./lab.yaml, ./examples/lab.yaml).",
)


def _fail(message: str, code: int = 2) -> None:
    err.print(f"[bold red]error:[/] {message}", highlight=False)
    raise typer.Exit(code)


def _lab(path: Path | None) -> LabConfig:
    try:
        return load(path)
    except ConfigError as exc:
        _fail(str(exc))
        raise  # unreachable


def _instrument(lab: LabConfig, instrument: str | None) -> Any:
    try:
        if instrument is None:
            return lab.instruments[0]
        return lab.instrument(instrument)
    except ConfigError as exc:
        _fail(str(exc))


def _config_problem(lab: LabConfig, inst: Any, exc: Exception) -> None:
    index = next(i for i, x in enumerate(lab.instruments) if x.id == inst.id)
    _fail(f"{lab.source}: instruments[{index}] ({inst.id}): {exc}")


def _safe_load(text: str) -> Any:
    """``yaml.safe_load``, with libyaml's C parser when PyYAML has it (~10x faster).

    A document the C parser rejects is parsed again by the pure-Python parser, so the result
    and the error message are exactly those of ``yaml.safe_load``.
    """
    loader = getattr(yaml, "CSafeLoader", None)
    if loader is not None:
        try:
            return yaml.load(text, Loader=loader)  # CSafeLoader: safe subset, like safe_load
        except yaml.YAMLError:
            pass
    return yaml.safe_load(text)


def _cache_dir() -> Path:
    """Derived data that is safe to delete (deck geometry): $XDG_CACHE_HOME/labwright."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "labwright"


def load_protocol(path: Path) -> dict[str, Any]:
    """A protocol file (YAML or JSON) as a dict."""
    try:
        data = _safe_load(path.read_text())
    except OSError as exc:
        _fail(f"{path}: cannot read: {exc.strerror or exc}")
    except yaml.YAMLError as exc:
        _fail(f"{path}: not valid YAML or JSON: {exc}")
    if not isinstance(data, dict):
        _fail(f"{path}: a protocol is a mapping {{name, steps: [{{command, args}}]}}")
    return data


@app.command()
def serve(
    instrument: str = typer.Argument(..., help="Instrument id from the lab file."),
    config: Path | None = ConfigOpt,
    transport: str = typer.Option("stdio", help="stdio or http."),
    host: str = typer.Option("127.0.0.1", help="HTTP bind address."),
    port: int = typer.Option(8765, help="HTTP port."),
    token: str | None = typer.Option(
        None, envvar="LABWRIGHT_TOKEN", help="Bearer token required over HTTP."
    ),
    allow_origin: list[str] = typer.Option([], help="Extra allowed Origin (HTTP)."),
) -> None:
    """Serve one instrument as an MCP server (stdio by default)."""
    from device_servers.errors import ConfigurationError
    from device_servers.transport import serve_http, serve_stdio
    from policies import PolicyError

    lab = _lab(config)
    inst = _instrument(lab, instrument)
    try:
        if transport == "stdio":
            import asyncio

            asyncio.run(serve_stdio(inst, lab.db_path, lab.world_path))
        elif transport == "http":
            serve_http(
                inst,
                lab.db_path,
                lab.world_path,
                host=host,
                port=port,
                token=token,
                allowed_origins=allow_origin,
            )
        else:
            _fail(f"--transport must be stdio or http, not {transport!r}")
    except (ConfigurationError, PolicyError) as exc:
        _config_problem(lab, inst, exc)
    except KeyboardInterrupt:
        pass


@app.command()
def check(config: Path | None = ConfigOpt) -> None:
    """Validate the lab file completely (decks, labware, liquids, policies)."""
    from device_servers.errors import ConfigurationError
    from device_servers.factory import make_driver
    from policies import PolicyError, build_engine

    lab = _lab(config)
    for inst in lab.instruments:
        try:
            driver = make_driver(inst, None)
            driver.initial_twin()
            build_engine(
                inst.kind, inst.policy.rules_file, inst.policy.rules, inst.policy.protected_labware
            )
        except (ConfigurationError, PolicyError) as exc:
            _config_problem(lab, inst, exc)
        out.print(
            f"[green]ok[/] {inst.id} ({inst.kind}, {'simulated' if inst.simulated else 'hardware'})"
        )


@app.command()
def simulate(
    protocol: Path = typer.Argument(..., help="Protocol file (YAML or JSON)."),
    config: Path | None = ConfigOpt,
    instrument: str | None = typer.Option(None, help="Instrument id (default: the protocol's)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON report."),
) -> None:
    """Simulate a protocol on the twin of the configured lab (nothing moves, no server)."""
    from pydantic import ValidationError

    from device_servers.contract import Protocol
    from device_servers.errors import Code, ConfigurationError, DeviceError, pydantic_detail
    from device_servers.factory import make_driver
    from policies import PolicyError, PolicyRequest, Verdict, build_engine

    started = time.perf_counter()
    lab = _lab(config)
    data = load_protocol(protocol)
    inst = _instrument(lab, instrument or data.get("instrument"))
    try:
        driver = make_driver(inst, None, cache_dir=_cache_dir())
        twin = driver.initial_twin()
        policy = build_engine(
            inst.kind, inst.policy.rules_file, inst.policy.rules, inst.policy.protected_labware
        )
    except (ConfigurationError, PolicyError) as exc:
        _config_problem(lab, inst, exc)
    try:
        proto = Protocol.model_validate(data)
    except ValidationError as exc:
        _fail(f"{protocol}: {pydantic_detail(exc)}")
    sim_start = time.perf_counter()
    counts: Counter[str] = Counter()
    moved: Counter[str] = Counter()
    warnings: list[str] = []
    report: dict[str, Any] = {"protocol": proto.name, "instrument": inst.id, "simulated": True}
    report["warnings"] = warnings
    try:
        for i, step in enumerate(proto.steps):
            model = driver.commands.get(step.command)
            if model is None:
                raise DeviceError(
                    Code.INVALID_ARGUMENT,
                    f"step {i}: unknown command "  # type: ignore[arg-type]
                    f"{step.command!r}",
                    f"use one of {sorted(driver.commands)}",
                )
            try:
                cmd = model.model_validate(step.args)
            except ValidationError as exc:
                raise DeviceError(
                    Code.INVALID_ARGUMENT,
                    f"step {i}: {pydantic_detail(exc)}",  # type: ignore[arg-type]
                    "fix the step's arguments",
                ) from exc
            decision = policy.evaluate(
                PolicyRequest.for_command(inst.id, step.command, cmd, driver.labware_of(cmd))
            )
            if decision.verdict is Verdict.DENY:
                raise DeviceError(
                    Code.POLICY_DENIED, f"step {i}: {decision.reason}", decision.fix_hint
                )
            if decision.verdict is Verdict.REQUIRE_APPROVAL:
                warnings.append(f"step {i} needs a person's approval: {decision.reason}")
            try:
                _, events = twin.run(cmd)
            except DeviceError as exc:
                exc.detail = f"step {i} ({step.command}): {exc.detail}"
                raise
            for ev in events:
                counts[ev["type"]] += 1
                if ev["type"] == "liquid_transferred" and ev["data"]["op"] == "dispense":
                    for liquid, vol in ev["data"]["liquids"].items():
                        moved[liquid] += vol
    except DeviceError as exc:
        report.update(ok=False, error=exc.to_payload())
    else:
        report.update(
            ok=True,
            steps=len(proto.steps),
            events=dict(counts),
            dispensed_ul={k: round(v, 3) for k, v in moved.items()},
        )
    report["simulate_ms"] = round((time.perf_counter() - sim_start) * 1000, 3)
    report["total_ms"] = round((time.perf_counter() - started) * 1000, 3)
    if as_json:
        print(json.dumps(report))
    elif report["ok"]:
        out.print(
            f"[green]simulation ok[/] {proto.name} on {inst.id}: {report['steps']} steps, "
            f"{counts['tip_picked_up']} tips, {counts['liquid_transferred']} liquid moves, "
            f"{report['simulate_ms']} ms (simulated: nothing moved)"
        )
        for liquid, vol in sorted(moved.items()):
            out.print(f"  dispensed {liquid}: {vol:.1f} uL")
        for warning in warnings:
            out.print(f"  [yellow]warning:[/] {warning}", highlight=False)
    else:
        e = report["error"]
        err.print(
            f"[bold red]simulation failed[/] {e['code']}: {e['detail']}\n  fix: {e['fix_hint']}",
            highlight=False,
        )
    if not report["ok"]:
        raise typer.Exit(1)


@app.command("approve-action")
def approve_action(
    instrument: str = typer.Argument(...),
    action_id: str = typer.Argument(...),
    by: str = typer.Option(os.environ.get("USER", "operator"), help="Who approves."),
    config: Path | None = ConfigOpt,
) -> None:
    """A person approves one pending action (by its action_id) of an instrument."""
    from state_store import Approvals, connect

    lab = _lab(config)
    _instrument(lab, instrument)
    approvals = Approvals(connect(lab.db_path))
    try:
        req = approvals.grant(instrument, action_id, by)
    except KeyError:
        pending = approvals.pending(instrument)
        listing = ", ".join(p["action_id"] for p in pending) or "none"
        _fail(f"no approval request for {instrument}/{action_id} (pending: {listing})")
    out.print(
        f"[green]approved[/] {instrument}/{action_id}: {req['command']} "
        f"{req['args']} — {req['reason']} (by {by})"
    )


@app.command()
def approvals(config: Path | None = ConfigOpt) -> None:
    """List actions waiting for a person's approval."""
    from state_store import Approvals, connect

    lab = _lab(config)
    table = Table("instrument", "action_id", "command", "reason")
    for p in Approvals(connect(lab.db_path)).pending():
        table.add_row(p["instrument"], p["action_id"], p["command"], p["reason"])
    out.print(table)


@app.command()
def world(
    config: Path | None = ConfigOpt,
    labware: str | None = typer.Option(None, help="Only this labware."),
) -> None:
    """Show the simulated world (ground truth): non-empty wells and tips left."""
    from device_servers.sim.world import SimWorld

    lab = _lab(config)
    if not lab.world_path.exists():
        _fail(f"no simulated world yet at {lab.world_path}: serve an instrument first")
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


DEMO_REQUEST = (
    "make a 2-fold serial dilution of dye across row A of plate_1, 100 uL final volume, "
    "then shake plate_1 at 37 C for 5 min at 600 rpm, then read absorbance at 600 nm"
)


@app.command()
def demo(
    config: Path | None = ConfigOpt,
    request: str = typer.Option(DEMO_REQUEST, help="The request to run."),
    devices: bool = typer.Option(
        False, "--devices", help="Instead: a scripted session with each device server."
    ),
) -> None:
    """A real request on a fresh simulated lab: plan, simulation, approval, run, report."""
    import asyncio

    from labwright.demo import run_demo, run_task_demo

    lab = _lab(config)
    if devices:
        code = asyncio.run(run_demo(lab, out))
    else:
        code = asyncio.run(run_task_demo(lab, out, request))
    raise typer.Exit(code)


@app.command()
def audit(
    run: str = typer.Argument(..., help="Task run id."),
    verify: bool = typer.Option(False, "--verify", help="Check the hash chain; exit 1 if broken."),
    config: Path | None = ConfigOpt,
) -> None:
    """Show a run's audit trail (tool calls and decisions); --verify checks the hash chain."""
    import sqlite3
    from datetime import datetime

    from rich.markup import escape

    from state_store import AuditLog, TaskRuns, VerifyReport, connect

    def when(ts: Any) -> str:
        try:
            return datetime.fromtimestamp(float(ts)).strftime("%Y-%m-%d %H:%M:%S")
        except (TypeError, ValueError, OverflowError, OSError):
            return escape(str(ts))

    lab = _lab(config)
    if not lab.db_path.exists():
        _fail(f"unknown run {run!r}: no state database at {lab.db_path}")
    report: VerifyReport | None = None
    try:
        conn = connect(lab.db_path)
        log = AuditLog(conn)
        entries = log.entries(run)
        if not entries and TaskRuns(conn).get(run) is None:
            _fail(f"unknown run {run!r}: no task run and no audit entries with that id")
        if verify:
            report = log.verify(run)
    except sqlite3.DatabaseError as exc:
        _fail(f"cannot read the audit log in {lab.db_path}: {exc}")
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


def main() -> None:  # pragma: no cover - console entry
    try:
        app()
    except BrokenPipeError:
        sys.exit(1)


# The task agent's commands (run, approve, reject, resume, runs, show, events) and
# ``labwright eval`` (evaluation suites) register themselves on ``app``; they live in their
# own modules to keep this one readable.
from labwright import eval_cli as _eval_cli  # noqa: E402, F401
from labwright import people_cli as _people_cli  # noqa: E402, F401
from labwright import task_cli as _task_cli  # noqa: E402, F401

if __name__ == "__main__":  # pragma: no cover
    # Run the importable module's app, on which every command is registered.
    from labwright import cli as _cli

    _cli.main()
