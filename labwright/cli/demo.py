"""``labwright demo``: a real session with the lab's MCP device servers over stdio.

Starts one ``labwright serve`` subprocess per instrument on a fresh simulated lab and connects
to each with the official MCP client. On the liquid handler it dry-runs, then executes, a
2-fold serial dilution (showing a structured error and an idempotent replay on the way); when
the lab also has a plate mover, a heater-shaker and a plate reader, it moves the plate, shakes
it at 37 C, moves it into the reader and reads absorbance: the readings halve along the row.
Until the task agent exists this sequence is scripted; every call goes over MCP.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import typer
from rich.console import Console

from device_servers.lab import LabConfig
from labwright.cli._common import ConfigOpt, lab_of, load_protocol, out
from labwright.cli._render import Progress, plate_table, readings_table, show_plan, show_report

if TYPE_CHECKING:  # the MCP client loads when the demo runs, not with every command
    from mcp.client.session import ClientSession

PROTOCOL = Path(__file__).resolve().parents[2] / "examples" / "protocols" / "serial_dilution.yaml"

DEMO_REQUEST = (
    "make a 2-fold serial dilution of dye across row A of plate_1, 100 uL final volume, "
    "then shake plate_1 at 37 C for 5 min at 600 rpm, then read absorbance at 600 nm"
)


def demo(
    config: Path | None = ConfigOpt,
    request: str = typer.Option(DEMO_REQUEST, help="The request to run."),
    devices: bool = typer.Option(
        False, "--devices", help="Instead: a scripted session with each device server."
    ),
) -> None:
    """A real request on a fresh simulated lab: plan, simulation, approval, run, report."""
    lab = lab_of(config)
    if devices:
        code = asyncio.run(run_demo(lab, out))
    else:
        code = asyncio.run(run_task_demo(lab, out, request))
    raise typer.Exit(code)


async def call(session: ClientSession, tool: str, **args: Any) -> dict[str, Any]:
    result = await session.call_tool(tool, args)
    return dict(result.structuredContent or json.loads(result.content[0].text))  # type: ignore[union-attr]


async def wait_run(
    session: ClientSession, run_id: str, console: Console, show: bool
) -> dict[str, Any]:
    """Poll run_events until the run ends; show one line per step (progress)."""
    seq, moves, total = 0, 0, "?"
    tips: list[str] = []
    while True:
        page = await call(session, "run_events", run_id=run_id, since_seq=seq, max=500)
        for ev in page["events"]:
            kind, data = ev["type"], ev["data"]
            if kind == "step_started":
                moves, tips = 0, []
                total = (await call(session, "get_run", run_id=run_id))["steps_total"]
            elif kind == "liquid_transferred":
                moves += 1
            elif kind == "tip_picked_up":
                tips.append(f"{data['rack']}:{data['spot']}")
            elif kind in ("tip_dropped", "protocol_completed"):
                continue
            elif show and kind == "step_completed":
                work = f"tips {', '.join(tips) or '-'}; {moves} aspirate/dispense"
                console.print(
                    f"  step {data['step'] + 1:>2}/{total} done  [dim]#{ev['seq']:>3}[/]  "
                    + (work if tips or moves else ""),
                    highlight=False,
                )
            elif show:
                console.print(f"  [bold]{kind}[/] #{ev['seq']}: {data}", highlight=False)
        seq = page["next_seq"]
        if page["status"] not in ("pending", "running") and not page["events"]:
            return await call(session, "get_run", run_id=run_id)
        if not page["events"]:
            await anyio.sleep(0.05)


class Act:
    """Execute commands with dry_run=false and fresh action ids; stop loudly on an error."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.n = 0

    async def __call__(self, session: ClientSession, tool: str, **args: Any) -> dict[str, Any]:
        self.n += 1
        result = await call(session, tool, **args, dry_run=False, action_id=f"demo-{self.n}")
        shown = ", ".join(f"{k}={v}" for k, v in args.items())
        if not result["ok"]:
            err = result["error"]
            self.console.print(f"  [red]{tool}({shown}) -> {err['code']}[/]: {err['detail']}")
            raise DemoFailed(f"{err['code']}: {err['fix_hint']}")
        self.console.print(f"  {tool}({shown}) [green]ok[/]", highlight=False)
        return result


class DemoFailed(Exception):
    pass


async def connect(
    stack: contextlib.AsyncExitStack, lab: LabConfig, instrument: str, env: dict[str, str]
) -> ClientSession:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "labwright", "serve", instrument, "--config", str(lab.source)],
        env=env,
    )
    read, write = await stack.enter_async_context(stdio_client(params))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    return session


async def run_demo(lab: LabConfig, console: Console) -> int:
    state_dir = Path(tempfile.mkdtemp(prefix="labwright-demo-"))
    env = {**os.environ, "LABWRIGHT_STATE_DIR": str(state_dir)}
    by_kind = {getattr(i, "kind", ""): i.id for i in reversed(lab.instruments)}
    lh = by_kind["liquid_handler"]
    console.rule(f"Labwright demo — {lab.lab} over MCP stdio (simulated lab)")
    console.print(f"state in {state_dir}", highlight=False)
    async with contextlib.AsyncExitStack() as stack:
        sessions: dict[str, ClientSession] = {}
        for inst in lab.instruments:
            sessions[inst.id] = await connect(stack, lab, inst.id, env)
            tools = await sessions[inst.id].list_tools()
            console.print(
                f"[bold]{inst.id}[/] ({getattr(inst, 'kind', '?')}): "
                f"{', '.join(t.name for t in tools.tools)}",
                highlight=False,
            )
        try:
            ok = await liquid_handling(sessions[lh], console)
            lab_kinds = {"plate_mover", "heater_shaker", "plate_reader"}
            if ok and lab_kinds <= by_kind.keys():
                await across_the_lab(sessions, by_kind, console)
        except DemoFailed as exc:
            console.print(f"[red]demo stopped:[/] {exc}")
            return 1
    return 0 if ok else 1


async def liquid_handling(session: ClientSession, console: Console) -> bool:
    protocol = load_protocol(PROTOCOL)
    console.rule("1. dry run: the whole dilution on the liquid handler's twin")
    started = await call(session, "start_run", protocol=protocol, dry_run=True)
    info = await wait_run(session, started["run_id"], console, show=False)
    console.print(
        f"dry run {info['run_id']}: {info['status']}, {info['steps_done']}/"
        f"{info['steps_total']} steps, simulated={info['simulated']}"
    )
    if info["status"] != "completed":
        console.print(f"[red]dry run failed:[/] {info['error']}")
        return False

    console.rule("2. a mistake is caught before anything moves")
    bad = await call(session, "aspirate", labware="plate_1", wells=["A1"], volume_ul=50)
    console.print_json(data=bad["error"])

    console.rule("3. execute (run_key makes it idempotent)")
    started = await call(
        session, "start_run", protocol=protocol, dry_run=False, run_key="demo-dilution-1"
    )
    info = await wait_run(session, started["run_id"], console, show=True)
    console.print(
        f"run {info['run_id']}: [bold]{info['status']}[/], {info['steps_done']}/"
        f"{info['steps_total']} steps, simulated={info['simulated']}"
    )
    again = await call(
        session, "start_run", protocol=protocol, dry_run=False, run_key="demo-dilution-1"
    )
    console.print(
        f"same run_key again -> same run {again['run_id']} (existing={again.get('existing')}),"
        " nothing executed twice"
    )

    console.rule("4. one action, asked twice with the same action_id")
    args = {"rack": "tips_2", "dry_run": False, "action_id": "demo-pick-1"}
    first = await call(session, "pick_up_tips", **args)
    second = await call(session, "pick_up_tips", **args)
    console.print(
        f"first: ok={first['ok']} replayed={first.get('replayed')}; second: "
        f"ok={second['ok']} replayed={second.get('replayed')}; tips left in "
        f"tips_2: {second['state']['labware']['tips_2']['tips_remaining']}"
    )
    await call(session, "drop_tips", dry_run=False, action_id="demo-drop-1")

    check = await call(session, "read_back")
    console.print(
        f"read_back: {len(check['deviations'])} deviations between the twin (belief) and "
        "the instrument (the simulated world)"
    )
    state = check["state"]
    console.print(plate_table(state, "plate_1", "A"))
    for rack in ("tips_1", "tips_2"):
        console.print(f"{rack}: {state['labware'][rack]['tips_remaining']} tips left")
    return info["status"] == "completed"


async def across_the_lab(
    sessions: dict[str, ClientSession], by_kind: dict[str, str], console: Console
) -> None:
    arm, hs, reader = (by_kind["plate_mover"], by_kind["heater_shaker"], by_kind["plate_reader"])
    act = Act(console)
    console.rule(f"5. move plate_1 to the heater-shaker, shake at 37 C ({hs})")
    await act(sessions[arm], "move_plate", plate="plate_1", to_location=f"{hs}:holder")
    seen = await call(sessions[hs], "read_back")  # its twin learns what arrived
    console.print(f"  {hs} read_back: plate on the holder = {seen['state'].get('plate')}")
    shake = {
        "name": "shake-37C",
        "steps": [
            {"command": "lock_plate"},
            {"command": "set_temperature", "args": {"celsius": 37}},
            {"command": "wait_for_temperature"},
            {"command": "shake", "args": {"rpm": 600, "duration_s": 300}},
            {"command": "stop"},
            {"command": "unlock_plate"},
        ],
    }
    started = await call(
        sessions[hs], "start_run", protocol=shake, dry_run=False, run_key="demo-shake"
    )
    if not started["ok"]:
        err = started["error"]
        raise DemoFailed(f"{err['code']}: {err['detail']} (fix: {err['fix_hint']})")
    info = await wait_run(sessions[hs], started["run_id"], console, show=True)
    if info["status"] != "completed":
        raise DemoFailed(f"shaking run {info['status']}: {info['error']}")

    console.rule(f"6. into the plate reader ({reader}) and read absorbance at 600 nm")
    await act(sessions[reader], "open_drawer")
    await act(sessions[arm], "move_plate", plate="plate_1", to_location=f"{reader}:drawer")
    await act(sessions[reader], "close_drawer")
    wells = [f"A{c}" for c in range(1, 13)]
    read = await act(
        sessions[reader],
        "read_absorbance",
        plate="plate_1",
        wavelength_nm=600,
        wells=[*wells, "H12"],
    )
    console.print(readings_table(read["measurements"][0], wells, blank_well="H12"))


async def run_task_demo(lab: LabConfig, console: Console, request: str) -> int:
    """The task agent end to end on a fresh simulated lab, approved on the operator's behalf."""
    from agents.task.planning.rules import RulePlanner
    from agents.task.runner import TaskRunner
    from device_servers.sim.world import SimWorld
    from state_store import AuditLog

    state_dir = Path(tempfile.mkdtemp(prefix="labwright-demo-"))
    os.environ["LABWRIGHT_STATE_DIR"] = str(state_dir)
    assert lab.source is not None
    console.rule(f"Labwright — {lab.lab}: {len(lab.instruments)} simulated instruments")
    console.print(f"state in {state_dir}", highlight=False)
    console.print(f"[bold]request:[/] {request}", highlight=False)
    runner = TaskRunner(
        list(lab.instruments),
        lab.source,
        lab.db_path,
        RulePlanner(),
        env={"LABWRIGHT_STATE_DIR": str(state_dir)},
        progress=Progress(console),
    )
    async with runner:
        outcome = await runner.start(request)
        if outcome.interrupt is None or outcome.interrupt.get("kind") != "approval":
            if outcome.report:
                show_report(console, outcome.report)
            return 1
        show_plan(console, outcome.interrupt)
        console.rule("approval")
        console.print(
            "approved on the operator's behalf for this demo "
            "(`labwright run` asks at the terminal; `--detach` leaves it for `labwright approve`)"
        )
        console.rule("run")
        outcome = await runner.resume(outcome.run_id, {"decision": "approve", "by": "demo"})
        if outcome.waiting:
            console.print(f"[red]the run stopped for a person:[/] {outcome.interrupt}")
            return 1
        assert outcome.report is not None
        show_report(console, outcome.report)
        console.rule("ground truth and records")
        world = SimWorld(lab.world_path)
        wells = world.wells("plate_1")
        console.print(
            "simulated world, plate_1 row A (uL): "
            + ", ".join(f"A{c} {wells[f'A{c}']['volume_ul']:.0f}" for c in range(1, 13)),
            highlight=False,
        )
        console.print(f"plate_1 is now at {world.location_of('plate_1')}", highlight=False)
        verdict = AuditLog(runner.conn).verify(outcome.run_id)
        console.print(
            f"audit log: {AuditLog(runner.conn).count(outcome.run_id)} entries for "
            f"{outcome.run_id}, chain {'intact' if verdict.ok else 'BROKEN'} "
            f"(`labwright audit {outcome.run_id} --verify`)",
            highlight=False,
        )
    return 0 if outcome.status == "done" else 1
