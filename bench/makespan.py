"""Makespan of a two-plate run: concurrent vs strictly sequential, beside the critical path.

The request (the rule planner's 22 steps on the example lab's four instruments): transfer dye
into plate_1, shake it 5 min, read it, then the same for plate_2. For each mode the real
TaskRunner (stdio servers, SQLite checkpoints) plans and simulates it; the approval
question's timeline gives the simulated makespan (instrument time from the twins' own
estimates: nothing moved), the critical path (the longest chain of dependent steps, a lower
bound for any schedule) and the sum of the steps. The approved run is then driven to its end
on the simulated instruments, timed on the wall clock (their ``time_scale``: a 5 min shake
takes 0.5 s), with the largest number of instruments that had an action under way at once
(their action ledgers).

Usage::

    .venv/bin/python bench/makespan.py [--json PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from long_runs import lab_db, runner_for

REQUEST = (
    "transfer 100 uL of dye to A1:A3 of plate_1, then shake plate_1 at 600 rpm for 5 minutes, "
    "then read absorbance of plate_1 at 600 nm, then transfer 100 uL of dye to A1:A3 of "
    "plate_2, then shake plate_2 at 600 rpm for 5 minutes, then read absorbance of plate_2 at "
    "600 nm"
)
TARGET_RATIO = 1.10  # makespan / critical path


def most_at_once(db: Path) -> int:
    """The largest number of instruments with an action under way at the same moment."""
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT instrument, started_at, finished_at FROM actions").fetchall()
    conn.close()
    best = 0
    for _, t, _ in rows:
        best = max(best, len({i for i, a, b in rows if a <= t and (b is None or b > t)}))
    return best


async def one(sequential: bool) -> dict[str, Any]:
    """Plan, simulate, approve and drive the two-plate run in one mode."""
    from agents.task.planning.rules import RulePlanner

    with tempfile.TemporaryDirectory(prefix="labwright-bench-makespan-") as tmp:
        runner = runner_for(Path(tmp), RulePlanner(), None)
        async with runner:
            run_id = "two-plates-" + ("sequential" if sequential else "concurrent")
            asked = await runner.start(REQUEST, run_id=run_id, sequential=sequential)
            if asked.status != "waiting_approval":
                raise RuntimeError(f"{run_id}: {asked.status}")
            line = dict((asked.interrupt or {})["simulation"]["timeline"])
            t0 = time.perf_counter()
            done = await runner.resume(run_id, {"decision": "approve"})
            wall = time.perf_counter() - t0
            report = done.report or {}
            if done.status != "done" or report.get("deviations"):
                raise RuntimeError(f"{run_id}: {done.status}, {report.get('deviations')}")
        return {
            "steps": len(line["steps"]),
            "steps_done": report.get("steps_done"),
            "makespan_s": line["makespan_s"],
            "critical_path_s": line["critical_path_s"],
            "sum_of_steps_s": line["sequential_s"],
            "driven_wall_s": round(wall, 3),
            "most_instruments_at_once": most_at_once(lab_db(Path(tmp))),
        }


def run(
    log: Callable[[str], None],
) -> tuple[dict[str, Any], list[tuple[str, str, str, str]], list[str]]:
    """Both modes; returns (results, table rows, 'how' lines)."""
    log("5 makespan: two-plate prepare-shake-read, concurrent and --sequential")
    conc = asyncio.run(one(False))
    seq = asyncio.run(one(True))
    ratio = conc["makespan_s"] / conc["critical_path_s"]

    def minutes(s: float) -> str:
        return f"{s / 60:.2f} min"

    rows = [
        ("two plates: critical path (lower bound)", minutes(conc["critical_path_s"]), "-", "-"),
        (
            "two plates: simulated makespan, concurrent",
            minutes(conc["makespan_s"]),
            f"<= {TARGET_RATIO:.2f}x critical path",
            "yes" if ratio <= TARGET_RATIO else "NO",
        ),
        ("  ratio makespan / critical path", f"{ratio:.3f}x", "figure", "-"),
        ("two plates: simulated makespan, --sequential", minutes(seq["makespan_s"]), "figure", "-"),
        (
            "two plates: driven on simulated instruments, wall, concurrent / sequential",
            f"{conc['driven_wall_s']:.1f} s / {seq['driven_wall_s']:.1f} s",
            "figure",
            "-",
        ),
        (
            "  most instruments with an action under way at once, concurrent / sequential",
            f"{conc['most_instruments_at_once']} / {seq['most_instruments_at_once']}",
            "figure",
            "-",
        ),
    ]
    how = [
        f"  makespan:    the rule planner's {conc['steps']} steps of '{REQUEST[:60]}...' on "
        "examples/lab.yaml; makespans and critical path from the approval question's timeline "
        "(simulated: twins' instrument-time estimates); driven: the approved run to its end "
        "(real TaskRunner, stdio servers, simulated instruments at their time_scale), "
        "time.perf_counter"
    ]
    return {"makespan_concurrent": conc, "makespan_sequential": seq}, rows, how


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args(argv)
    results, rows, how = run(lambda m: print(m, file=sys.stderr, flush=True))
    width = max(len(r[0]) for r in rows)
    for name, value, target, met in rows:
        print(f"{name:<{width}}  {value:>18}  {target:>26}  {met}")
    for line in how:
        print(line)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    ratio = (
        results["makespan_concurrent"]["makespan_s"]
        / results["makespan_concurrent"]["critical_path_s"]
    )
    return 0 if ratio <= TARGET_RATIO else 1


if __name__ == "__main__":
    raise SystemExit(main())
