#!/usr/bin/env python3
"""E-stop latency during a 1,000-operation command, no injected delays.

Each trial starts ``labwright serve lh1`` (stdio, a real MCP client session) on a fresh lab,
sends one ``transfer`` of 72 destinations with 5 mixing cycles each and a new tip per
destination (72 x 14 = 1,008 physical operations, executed), waits until the simulated world
shows a given number of operations (spread over the trials), then sends ``emergency_stop``.
Three moments per trial, all on this machine's clock: *sent* (just before the client sends),
*latched* (the server's ``estop`` event), and the last physical operation the world records.
Figures: sent -> latched (target < 50 ms), operations after the latch (target <= 1), latched
-> last operation.

Usage::

    .venv/bin/python bench/estop_latency.py [--trials 20] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import yaml
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

REPO = Path(__file__).resolve().parent.parent
TARGET_MS = 50.0
WELLS = [f"{r}{c}" for r in "ABCDEF" for c in range(1, 13)]
TRANSFER = {
    "source": "reservoir",
    "source_well": "A1",
    "destination": "plate_1",
    "destination_wells": WELLS,
    "volume_ul": 50,
    "mix_after": 5,
    "mix_volume_ul": 40,
    "new_tip": "always",
    "dry_run": False,
    "action_id": "long-transfer",
}
OPERATIONS = 72 * 14


def lab_file(tmp: Path) -> Path:
    data = yaml.safe_load((REPO / "examples" / "lab.yaml").read_text())
    data["state_dir"] = str(tmp / "state")
    data["instruments"] = [i for i in data["instruments"] if i["id"] == "lh1"]
    path = tmp / "lab.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _ops(world: Path) -> list[float]:
    if not world.exists():
        return []
    with sqlite3.connect(world, timeout=30) as conn:
        rows = conn.execute("SELECT ts FROM physical_ops WHERE instrument='lh1' ORDER BY id")
        return [r[0] for r in rows]


def _latched(db: Path) -> float:
    with sqlite3.connect(db, timeout=30) as conn:
        row = conn.execute("SELECT MIN(ts) FROM events WHERE type='estop'").fetchone()
        return float(row[0])


async def trial(tmp: Path, after_ops: int) -> dict[str, Any]:
    lab = lab_file(tmp)
    state = tmp / "state"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "labwright", "serve", "lh1", "--config", str(lab)],
        cwd=str(REPO),
        env={k: v for k, v in os.environ.items() if not k.startswith("LABWRIGHT_")},
    )
    world = state / "demo-lab.world.sqlite"
    result: dict[str, Any] = {}
    with open(tmp / "server.log", "w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            with anyio.fail_after(60):
                await session.initialize()

            async def transfer() -> None:
                got = await session.call_tool("transfer", TRANSFER)
                result["transfer_ok"] = bool((got.structuredContent or {}).get("ok"))

            with anyio.fail_after(120):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(transfer)
                    while len(_ops(world)) < after_ops:
                        await anyio.sleep(0.002)
                    sent = time.time()
                    stopped = await session.call_tool("emergency_stop", {"reason": "bench"})
                    acked = time.time()
    ops = _ops(world)
    latched = _latched(state / "demo-lab.sqlite")
    after = [t for t in ops if t > latched]
    assert (stopped.structuredContent or {}).get("estop") is True
    return {
        "ops_before_stop": after_ops,
        "ops_done": len(ops),
        "sent_to_latched_ms": (latched - sent) * 1000,
        "sent_to_ack_ms": (acked - sent) * 1000,
        "ops_after_latch": len(after),
        "latched_to_last_op_ms": ((max(ops) - latched) * 1000) if ops else None,
        "transfer_completed": result.get("transfer_ok", False),
    }


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    rows = []
    for n in range(args.trials):
        after = 50 + (n * 850) // max(1, args.trials - 1)  # from early to late in the command
        with tempfile.TemporaryDirectory(prefix="labwright-estop-") as tmp:
            row = anyio.run(trial, Path(tmp), after)
        rows.append(row)
        print(
            f"trial {n + 1}: stop after {after} ops: latched in "
            f"{row['sent_to_latched_ms']:.1f} ms, {row['ops_after_latch']} ops after the latch, "
            f"{row['ops_done']} of {OPERATIONS} done",
            flush=True,
        )
    latency = [r["sent_to_latched_ms"] for r in rows]
    after = [r["ops_after_latch"] for r in rows]
    summary = {
        "trials": len(rows),
        "operations_per_command": OPERATIONS,
        "sent_to_latched_ms": {
            "p50": statistics.median(latency), "p95": pct(latency, 0.95), "max": max(latency)
        },
        "ops_after_latch_max": max(after),
        "commands_completed_despite_stop": sum(r["transfer_completed"] for r in rows),
        "load_average": os.getloadavg()[0],
        "rows": rows,
    }  # fmt: skip
    met = max(latency) < TARGET_MS and max(after) <= 1
    ms = summary["sent_to_latched_ms"]
    print(
        f"e-stop latency (sent -> latched) over {len(rows)} trials: p50 {ms['p50']:.1f} ms, "
        f"p95 {ms['p95']:.1f} ms, max {max(latency):.1f} ms (target < {TARGET_MS:.0f} ms); "
        "operations after the"
        f" latch: max {max(after)} (target <= 1); load {summary['load_average']:.1f}:"
        f" {'met' if met else 'NOT met'}"
    )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(summary, indent=2))
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
