"""``labwright demo``: a real session with the liquid-handler MCP server over stdio.

Starts ``labwright serve`` as a subprocess on a fresh simulated lab, connects with the official
MCP client, dry-runs then executes the serial-dilution protocol, and prints the events, a
structured error, an idempotent replay and the final deck state.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from rich.console import Console
from rich.table import Table

from labwright.cli import load_protocol
from labwright.config import LabConfig

PROTOCOL = (
    Path(__file__).resolve().parent.parent / "examples" / "protocols" / "serial_dilution.yaml"
)


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
                console.print(
                    f"  step {data['step'] + 1:>2}/{total} done  [dim]#{ev['seq']:>3}[/]  "
                    f"tips {', '.join(tips) or '-'}; {moves} aspirate/dispense",
                    highlight=False,
                )
            elif show:
                console.print(f"  [bold]{kind}[/] #{ev['seq']}: {data}", highlight=False)
        seq = page["next_seq"]
        if page["status"] not in ("pending", "running") and not page["events"]:
            return await call(session, "get_run", run_id=run_id)
        if not page["events"]:
            await anyio.sleep(0.05)


def plate_table(state: dict[str, Any], plate: str, row: str) -> Table:
    table = Table(title=f"{plate} row {row} (from get_state)")
    table.add_column("well")
    table.add_column("volume uL", justify="right")
    table.add_column("dye fraction", justify="right")
    wells = state["labware"][plate]["wells"]
    for col in range(1, 13):
        name = f"{row}{col}"
        w = wells.get(name, {"volume_ul": 0, "contents": {}})
        vol = w["volume_ul"]
        dye = w["contents"].get("dye", 0.0)
        table.add_row(name, f"{vol:.1f}", f"{dye / vol:.4f}" if vol else "-")
    return table


async def run_demo(lab: LabConfig, console: Console) -> int:
    inst = lab.instruments[0]
    state_dir = Path(tempfile.mkdtemp(prefix="labwright-demo-"))
    env = {**os.environ, "LABWRIGHT_STATE_DIR": str(state_dir)}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "labwright.cli", "serve", inst.id, "--config", str(lab.source)],
        env=env,
    )
    protocol = load_protocol(PROTOCOL)
    console.rule(f"Labwright demo — {inst.id} over MCP stdio (simulated lab, state in {state_dir})")
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        tools = await session.list_tools()
        console.print(
            f"connected to [bold]{init.serverInfo.name}[/]: "
            f"{', '.join(t.name for t in tools.tools)}"
        )

        console.rule("1. dry run: the whole protocol on the twin")
        started = await call(session, "start_run", protocol=protocol, dry_run=True)
        info = await wait_run(session, started["run_id"], console, show=False)
        console.print(
            f"dry run {info['run_id']}: {info['status']}, {info['steps_done']}/"
            f"{info['steps_total']} steps, simulated={info['simulated']}"
        )
        if info["status"] != "completed":
            console.print(f"[red]dry run failed:[/] {info['error']}")
            return 1

        console.rule("2. a mistake is caught before anything moves")
        bad = await call(
            session, "aspirate", labware="plate_1", wells=["A1"], volume_ul=50, dry_run=True
        )
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
            f"same run_key again -> same run {again['run_id']} "
            f"(existing={again.get('existing')}), nothing executed twice"
        )

        console.rule("4. one action, asked twice with the same action_id")
        first = await call(
            session, "pick_up_tips", rack="tips_2", dry_run=False, action_id="demo-pick-1"
        )
        second = await call(
            session, "pick_up_tips", rack="tips_2", dry_run=False, action_id="demo-pick-1"
        )
        console.print(
            f"first: ok={first['ok']} replayed={first.get('replayed')}; second: "
            f"ok={second['ok']} replayed={second.get('replayed')}; tips left in "
            f"tips_2: {second['state']['labware']['tips_2']['tips_remaining']}"
        )
        await call(session, "drop_tips", dry_run=False, action_id="demo-drop-1")

        console.rule("5. final deck state")
        check = await call(session, "read_back")
        console.print(
            f"read_back: {len(check['deviations'])} deviations between the twin (belief) and "
            "the instrument (the simulated world)"
        )
        state = (await call(session, "get_state"))["state"]
        console.print(plate_table(state, "plate_1", "A"))
        for rack in ("tips_1", "tips_2"):
            console.print(f"{rack}: {state['labware'][rack]['tips_remaining']} tips left")
        reservoir = state["labware"]["reservoir"]["wells"]
        console.print(
            "reservoir: "
            + ", ".join(
                f"{k} {v['volume_ul']:.0f} uL {list(v['contents'])}" for k, v in reservoir.items()
            )
        )
    return 0 if info["status"] == "completed" else 1
