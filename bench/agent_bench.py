"""Task-agent figures for ``bench/run.py``: orchestration overhead, rule planning.

Two measurements on the example lab (``examples/lab.yaml``, all four instruments served over
stdio by ``labwright serve``, a fresh ``LABWRIGHT_STATE_DIR`` each); resume after long runs is
``bench/resume_bench.py``:

1. Orchestration overhead per device command. A bench planner (a plan given, no parsing) hands
   the real task graph (:class:`agents.task.runner.TaskRunner`: device agents on held MCP stdio
   sessions, ``AsyncSqliteSaver`` checkpoints with ``durability="sync"``, the hash-chained audit
   log) a plan of single-well transfers (50 uL reservoir A1 -> one well of plate_1, a new tip
   each). After approval, the progress callback's ``dispatch`` timestamps give the wall time of
   each dispatch -> check -> next dispatch cycle (policy check, state read before, the tool
   call, state read after, audit append, check, two checkpoints). Beside it, in the same run and
   on the SAME held session and server, the bare ``tools/call`` of the same ``transfer`` command
   (one per well again: the plate and tip racks have room). Overhead = per-step - bare, p50.
   The simulated liquid handler has no device time of its own (only an armed ``delay`` fault
   adds any; none is armed); its ledger gives the server-side time of each action.
2. Rule planning: every request of ``tests/test_rule_planner.py``'s table (plans,
   clarifications, refusals; every family, chained) against its LabView, in process.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _stats import summary
from long_runs import FixedPlanner
from long_runs import runner_for as _runner

REPO = Path(__file__).resolve().parent.parent
LAB = REPO / "examples" / "lab.yaml"

ROWS = "ABCDEFGH"
WELLS = [f"{r}{c}" for r in ROWS for c in range(1, 13)]
VOLUME_UL = 50.0
RESERVOIR_UL = 10000.0

TARGET_OVERHEAD_P50_MS = 15.0
TARGET_PLAN_MS = 50.0


def transfer_steps(n: int) -> list[Any]:
    from agents.task.planning.models import PlanStep

    return [
        PlanStep(
            id=f"s{i + 1}",
            instrument="lh1",
            command="transfer",
            args={
                "source": "reservoir",
                "source_well": "A1",
                "destination": "plate_1",
                "destination_wells": [well],
                "volume_ul": VOLUME_UL,
                "new_tip": "always",
            },
            expect={
                "wells": {
                    f"plate_1:{well}": VOLUME_UL,
                    "reservoir:A1": RESERVOIR_UL - VOLUME_UL * (i + 1),
                }
            },
        )
        for i, well in enumerate(WELLS[:n])
    ]


def _ledger(state_dir: Path) -> dict[str, tuple[float, float | None]]:
    """action_id -> (started_at, finished_at) from every ledger in the state directory."""
    out: dict[str, tuple[float, float | None]] = {}
    for db in state_dir.glob("*.sqlite"):
        conn = sqlite3.connect(db)
        with contextlib.suppress(sqlite3.OperationalError):
            for aid, start, end in conn.execute(
                "SELECT action_id, started_at, finished_at FROM actions"
            ):
                out[aid] = (start, end)
        conn.close()
    return out


# ------------------------------------------------------------------------- 1. overhead
class _Timer:
    """Wraps async/sync methods of live objects (instances only) and records their times."""

    def __init__(self) -> None:
        self.times: dict[str, list[float]] = defaultdict(list)
        self.on = False

    def wrap_async(self, obj: Any, name: str, key: Callable[..., str]) -> None:
        orig = getattr(obj, name)

        async def timed(*a: Any, **k: Any) -> Any:
            t = time.perf_counter()
            try:
                return await orig(*a, **k)
            finally:
                if self.on:
                    self.times[key(*a, **k)].append((time.perf_counter() - t) * 1000)

        setattr(obj, name, timed)

    def wrap_sync(self, obj: Any, name: str, key: str) -> None:
        orig = getattr(obj, name)

        def timed(*a: Any, **k: Any) -> Any:
            t = time.perf_counter()
            try:
                return orig(*a, **k)
            finally:
                if self.on:
                    self.times[key].append((time.perf_counter() - t) * 1000)

        setattr(obj, name, timed)


async def bench_overhead(n_steps: int, log: Callable[[str], None]) -> dict[str, Any]:
    stamps: list[float] = []
    timer = _Timer()

    def progress(what: str, data: dict[str, Any]) -> None:
        if what == "dispatch":
            stamps.append(time.perf_counter())

    with tempfile.TemporaryDirectory(prefix="labwright-bench-agent-") as tmp:
        state_dir = Path(tmp)
        runner = _runner(state_dir, FixedPlanner(lambda: transfer_steps(n_steps)), progress)
        t0 = time.perf_counter()
        async with runner:
            startup_ms = (time.perf_counter() - t0) * 1000
            agent = runner.context.agents["lh1"]
            timer.wrap_async(agent, "call", lambda tool, **_: f"call:{tool}")
            timer.wrap_async(agent, "execute", lambda *a, **k: "device_agent.execute")
            timer.wrap_sync(runner.audit, "append", "audit.append")
            saver = runner.graph.checkpointer
            timer.wrap_async(saver, "aput", lambda *a, **k: "checkpoint.aput")
            timer.wrap_async(saver, "aput_writes", lambda *a, **k: "checkpoint.aput_writes")
            run_id = "bench-overhead"
            t1 = time.perf_counter()
            out = await runner.start("bench: single-well transfers", run_id=run_id)
            to_approval_ms = (time.perf_counter() - t1) * 1000
            if out.status != "waiting_approval":
                raise RuntimeError(f"overhead run did not wait for approval: {out.status}")
            timer.on = True
            t2 = time.perf_counter()
            out = await runner.resume(run_id, {"decision": "approve", "by": "bench"})
            t3 = time.perf_counter()
            timer.on = False
            done = (out.report or {}).get("steps_done")
            if out.status != "done" or done != n_steps:
                raise RuntimeError(f"overhead run: {out.status}, {done}/{n_steps} steps")
            if out.values and out.values.get("deviations"):
                raise RuntimeError(f"overhead run had deviations: {out.values['deviations']}")
            cycles = [(b - a) * 1000 for a, b in itertools.pairwise(stamps)]
            last_step_ms = (t3 - stamps[-1]) * 1000  # dispatch -> check -> report -> outcome

            # Bare calls of the same command, same held session (same server process).
            log(f"4/4 agent: {n_steps} bare `transfer` tools/call on the same held session")
            from agents.device.agent import structured

            bare: list[float] = []
            bare_state: list[float] = []
            session = agent.session
            for i, well in enumerate(WELLS[:n_steps]):
                args = {
                    "source": "reservoir",
                    "source_well": "A1",
                    "destination": "plate_1",
                    "destination_wells": [well],
                    "volume_ul": VOLUME_UL,
                    "new_tip": "always",
                    "dry_run": False,
                    "action_id": f"bench-bare/{i}",
                }
                t = time.perf_counter()
                result = await session.call_tool("transfer", args)
                bare.append((time.perf_counter() - t) * 1000)
                if not structured(result).get("ok"):
                    raise RuntimeError(f"bare transfer failed: {structured(result)}")
                t = time.perf_counter()
                await session.call_tool("get_state", {})
                bare_state.append((time.perf_counter() - t) * 1000)

        ledger = _ledger(state_dir)
        graph_server = [
            (e - s) * 1000
            for aid, (s, e) in ledger.items()
            if aid.startswith(run_id + "/") and e is not None
        ]
        bare_server = [
            (e - s) * 1000
            for aid, (s, e) in ledger.items()
            if aid.startswith("bench-bare/") and e is not None
        ]

    step = summary(cycles)
    bare_s = summary(bare)
    per_step_parts = {
        k: {
            "p50_ms": statistics.median(v),
            "calls": len(v),
            "per_step_ms": sum(v) / max(1, len(cycles) + 1),
        }
        for k, v in sorted(timer.times.items())
    }
    return {
        "steps": n_steps,
        "step": step,
        "bare_transfer": bare_s,
        "bare_get_state": summary(bare_state),
        "overhead_p50_ms": step["p50_ms"] - bare_s["p50_ms"],
        "overhead_p95_ms": step["p95_ms"] - bare_s["p50_ms"],
        "server_side_transfer_in_graph_p50_ms": statistics.median(graph_server)
        if graph_server
        else None,
        "server_side_transfer_bare_p50_ms": statistics.median(bare_server) if bare_server else None,
        "simulated_device_time_ms": 0.0,
        "breakdown": per_step_parts,
        "run_after_approval_s": t3 - t2,
        "startup_ms": startup_ms,
        "start_to_approval_ms": to_approval_ms,
        "last_step_to_outcome_ms": last_step_ms,
        "how": (
            f"TaskRunner on examples/lab.yaml (4 stdio servers), plan of {n_steps} single-well "
            "transfers (new tip each) from a fixed planner; after approval, intervals between "
            "consecutive `dispatch` progress callbacks (one dispatch -> check cycle each: "
            "policy, get_state before, transfer, get_state after, audit append, check, "
            "checkpoints, durability=sync); bare = the same transfer command (other action "
            "ids) then get_state, on the device agent's own held session afterwards"
        ),
    }


# ------------------------------------------------------------------------- 2. planning
def bench_planning(reps: int) -> dict[str, Any]:
    tests = str(REPO / "tests")
    if tests not in sys.path:
        sys.path.insert(0, tests)
    import test_rule_planner as table  # the request table of the rule planner's tests

    from agents.task.planning.rules import RulePlanner

    planner = RulePlanner()
    cases = [(c.request, getattr(c, "lab", None) or table.LAB) for c in table.CASES]
    kinds: dict[str, int] = defaultdict(int)
    for request, lab in cases:  # warm-up and a check that the table still plans
        kinds[planner.plan(request, lab).kind] += 1
    per_request: list[float] = []
    slowest: tuple[float, str] = (0.0, "")
    for request, lab in cases:
        samples = []
        for _ in range(reps):
            t = time.perf_counter()
            planner.plan(request, lab)
            samples.append((time.perf_counter() - t) * 1000)
        ms = statistics.median(samples)
        per_request.append(ms)
        slowest = max(slowest, (ms, request))
    return {
        **summary(per_request),
        "requests": len(cases),
        "outcomes": dict(kinds),
        "reps": reps,
        "slowest_request": slowest[1],
        "how": (
            f"in process: RulePlanner().plan(request, LabView) for the {len(cases)} requests of "
            f"tests/test_rule_planner.py (every family, chained, clarifications, refusals); "
            f"per request the median of {reps} runs after one warm-up; p50/p95 over requests"
        ),
    }


# ------------------------------------------------------------------------- entry point
def run(
    quick: bool, env: dict[str, str], log: Callable[[str], None]
) -> tuple[dict[str, Any], list[tuple[str, str, str, str]], list[str]]:
    """Both; returns (results, table rows, 'how' lines)."""
    n_steps, plan_reps = (48, 3) if quick else (96, 10)
    saved = os.environ.get("LABWRIGHT_STATE_DIR")
    results: dict[str, Any] = {}
    try:
        log(f"4/4 agent: {n_steps} single-well transfers through the task graph")
        results["agent_overhead"] = ov = asyncio.run(bench_overhead(n_steps, log))
    finally:
        if saved is None:
            os.environ.pop("LABWRIGHT_STATE_DIR", None)
        else:
            os.environ["LABWRIGHT_STATE_DIR"] = saved
    log(f"4/4 agent: rule planning, table of tests/test_rule_planner.py x{plan_reps}")
    results["rule_planning"] = pl = bench_planning(plan_reps)

    def ms(v: float) -> str:
        return f"{v:.2f} ms" if v < 100 else f"{v:.0f} ms"

    def yes(ok: bool) -> str:
        return "yes" if ok else "NO"

    n = ov["step"]["n"]
    rows = [
        (
            f"agent: per dispatched step (transfer), p50 (n={n})",
            ms(ov["step"]["p50_ms"]),
            "figure",
            "-",
        ),
        ("agent: per dispatched step, p95", ms(ov["step"]["p95_ms"]), "figure", "-"),
        (
            f"  bare MCP transfer, same session, p50 (n={ov['bare_transfer']['n']})",
            ms(ov["bare_transfer"]["p50_ms"]),
            "figure",
            "-",
        ),
        ("  bare MCP transfer, p95", ms(ov["bare_transfer"]["p95_ms"]), "figure", "-"),
        ("  simulated device time per step", "0 ms (no delay fault)", "figure", "-"),
        (
            "agent: orchestration overhead per step, p50",
            ms(ov["overhead_p50_ms"]),
            f"<= {TARGET_OVERHEAD_P50_MS:.0f} ms",
            yes(ov["overhead_p50_ms"] <= TARGET_OVERHEAD_P50_MS),
        ),
        ("agent: orchestration overhead per step, p95", ms(ov["overhead_p95_ms"]), "figure", "-"),
        (
            f"rule planning per request, p50 (n={pl['requests']})",
            ms(pl["p50_ms"]),
            f"<= {TARGET_PLAN_MS:.0f} ms",
            yes(pl["p50_ms"] <= TARGET_PLAN_MS),
        ),
        (
            "rule planning per request, p95",
            ms(pl["p95_ms"]),
            f"<= {TARGET_PLAN_MS:.0f} ms",
            yes(pl["p95_ms"] <= TARGET_PLAN_MS),
        ),
    ]
    parts = ", ".join(f"{k} {v['per_step_ms']:.1f}" for k, v in ov["breakdown"].items())
    how = [
        f"  agent step:  {ov['how']}",
        f"               per step (ms, summed per call site / steps): {parts}; bare get_state "
        f"p50 {ov['bare_get_state']['p50_ms']:.2f} ms; server-side transfer (ledger) p50 "
        f"{ov['server_side_transfer_in_graph_p50_ms']:.2f} ms in the graph, "
        f"{ov['server_side_transfer_bare_p50_ms']:.2f} ms bare",
        "               simulated device time: none -- the simulated liquid handler only "
        "waits when a `delay` fault is armed (none is)",
        f"  planning:    {pl['how']}; outcomes {pl['outcomes']}; slowest: "
        f"{pl['slowest_request'][:70]!r} ({pl['max_ms']:.1f} ms)",
    ]
    return results, rows, how
