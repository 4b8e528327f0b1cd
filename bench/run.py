#!/usr/bin/env python3
"""Labwright benchmark: figures and ratios against targets (not a pass/fail test).

Six groups of measurements, all on the example lab (``examples/lab.yaml``):

1. In-process twin simulation of 96 single-channel transfers (50 uL from reservoir A1 to each
   well of plate_1, a new tip each): parse the commands and run them on a fresh clone of the
   initial twin. Median and p95 over many repetitions; target <= 20 ms. For context, the same 96
   transfers on PyLabRobot's own ``LiquidHandlerChatterboxBackend`` in process.
2. Whole process: ``labwright simulate <96-transfer protocol> --json`` as a subprocess (wall
   clock, median), against the peer ``opentrons_simulate`` (``bench/opentrons_peer.py``) on the
   equivalent OT-2 protocol; target ratio opentrons / labwright >= 10x.
3. MCP ``tools/call`` round trip over stdio in one held session with ``labwright serve``:
   ``get_run`` of an unknown run (light, structured error), ``get_state`` and a dry-run
   ``pick_up_tips``; p50 and p95; target p50 <= 5 ms for the light call.
4. The task agent (``bench/agent_bench.py``): orchestration overhead per dispatched step of
   the real task graph beside a bare ``tools/call`` of the same command (target p50 <= 15 ms)
   and rule planning time per request (target <= 50 ms).
5. Long runs (``bench/long_runs.py``, ``bench/resume_bench.py``): driven runs of 1,000 and
   10,000 steps through the real task graph -- lab-database bytes per step (target <= 20 kB)
   and per-step time over the first and last 100 steps (target last / first <= 1.2) -- then
   ``labwright resume`` to the next action from copies of the crashed run's state, with the
   servers started by resume (target <= 2 s) and already up (``labwright lab up``, <= 1 s).
6. Makespan (``bench/makespan.py``): a two-plate prepare-shake-read run, its simulated
   makespan concurrent and ``--sequential`` beside its critical path (target: concurrent within
   10% of it), and both driven to their end on the simulated instruments.

Usage::

    .venv/bin/python bench/run.py [--json PATH] [--quick] [--skip-peer] [--skip-long]
        [--long-steps N ...]

Prints a table (figure, value, target, met?) and, with ``--json``, writes the results there too
(``bench/results/`` is git-ignored).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from _stats import pct  # bench/ is sys.path[0] when run as a script

REPO = Path(__file__).resolve().parent.parent
LAB = REPO / "examples" / "lab.yaml"
BIN = Path(sys.executable).parent
LABWRIGHT = BIN / "labwright"
PEER = REPO / "bench" / "opentrons_peer.py"

ROWS = "ABCDEFGH"
WELLS = [f"{r}{c}" for r in ROWS for c in range(1, 13)]
VOLUME_UL = 50

TARGET_TWIN_MS = 20.0
TARGET_PEER_RATIO = 10.0
TARGET_MCP_P50_MS = 5.0


# ---------------------------------------------------------------------------------- helpers
def protocol_96() -> dict[str, Any]:
    """96 ``transfer`` steps, one destination each (same format as examples/protocols/)."""
    return {
        "name": "bench-96-transfers",
        "instrument": "lh1",
        "steps": [
            {
                "command": "transfer",
                "args": {
                    "source": "reservoir",
                    "source_well": "A1",
                    "destination": "plate_1",
                    "destination_wells": [well],
                    "volume_ul": VOLUME_UL,
                },
            }
            for well in WELLS
        ],
    }


def machine() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    try:
        nproc = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        nproc = os.cpu_count() or 0
    return {
        "nproc": nproc,
        "cpu": cpu,
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(terse=True),
        "PYTHONDONTWRITEBYTECODE": os.environ.get("PYTHONDONTWRITEBYTECODE", ""),
        "loadavg_at_start": [round(x, 2) for x in os.getloadavg()],
    }


def log(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------- 1. twin
def bench_twin(reps: int) -> dict[str, Any]:
    from device_servers.contract import Protocol
    from device_servers.factory import make_driver
    from device_servers.lab import load

    lab = load(LAB)
    inst = lab.instrument("lh1")
    driver = make_driver(inst, None)
    initial = driver.initial_twin()
    data = protocol_96()

    def once() -> Counter[str]:
        proto = Protocol.model_validate(data)
        cmds = [driver.commands[s.command].model_validate(s.args) for s in proto.steps]
        twin = initial.clone()
        counts: Counter[str] = Counter()
        for cmd in cmds:
            _, events = twin.run(cmd)
            for ev in events:
                counts[ev["type"]] += 1
        return counts

    counts = once()  # warm-up, and check it really did the work
    if counts["tip_picked_up"] != 96 or counts["liquid_transferred"] != 192:
        raise RuntimeError(f"twin run did not do 96 transfers: {dict(counts)}")
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        once()
        times.append((time.perf_counter() - t0) * 1000)
    return {
        "median_ms": statistics.median(times),
        "p95_ms": pct(times, 95),
        "min_ms": min(times),
        "reps": reps,
        "events": dict(counts),
        "how": "in process: Protocol + command pydantic validation, twin.clone(), twin.run() x96",
    }


def bench_chatterbox(reps: int) -> dict[str, Any]:
    """The same 96 transfers on PyLabRobot's chatterbox backend (prints to /dev/null)."""
    from pylabrobot.liquid_handling import LiquidHandler
    from pylabrobot.liquid_handling.backends import LiquidHandlerChatterboxBackend
    from pylabrobot.resources import (
        PLT_CAR_L5AC_A00,
        TIP_CAR_480_A00,
        STARLetDeck,
        cor_96_wellplate_360uL_Fb,
        hamilton_96_tiprack_300uL,
        nest_12_troughplate_15000uL_Vb,
    )
    from pylabrobot.resources.tip_tracker import set_tip_tracking
    from pylabrobot.resources.volume_tracker import set_volume_tracking

    async def one(sink: io.TextIOBase) -> tuple[float, float]:
        t0 = time.perf_counter()
        deck = STARLetDeck()
        tip_car = TIP_CAR_480_A00(name="tip_carrier")
        tip_car[0] = tips_1 = hamilton_96_tiprack_300uL(name="tips_1")
        tip_car[1] = tips_2 = hamilton_96_tiprack_300uL(name="tips_2")
        plt_car = PLT_CAR_L5AC_A00(name="plate_carrier")
        plt_car[0] = reservoir = nest_12_troughplate_15000uL_Vb(name="reservoir")
        plt_car[1] = plate = cor_96_wellplate_360uL_Fb(name="plate_1")
        deck.assign_child_resource(tip_car, rails=1)
        deck.assign_child_resource(plt_car, rails=9)
        lh = LiquidHandler(backend=LiquidHandlerChatterboxBackend(num_channels=8), deck=deck)
        await lh.setup()
        reservoir.get_well("A1").tracker.set_volume(10000)
        t1 = time.perf_counter()
        tips = tips_1.get_all_items() + tips_2.get_all_items()
        src = reservoir.get_well("A1")
        for i, well in enumerate(plate.get_all_items()):
            await lh.pick_up_tips([tips[i]])
            await lh.aspirate([src], vols=[VOLUME_UL])
            await lh.dispense([well], vols=[VOLUME_UL])
            await lh.discard_tips()
        t2 = time.perf_counter()
        await lh.stop()
        return (t2 - t1) * 1000, (t1 - t0) * 1000

    set_tip_tracking(True)
    set_volume_tracking(True)
    runs, setups = [], []
    try:
        with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
            for _ in range(reps + 1):
                run_ms, setup_ms = asyncio.run(one(sink))
                runs.append(run_ms)
                setups.append(setup_ms)
    finally:
        set_tip_tracking(False)
        set_volume_tracking(False)
    runs, setups = runs[1:], setups[1:]  # first one is warm-up
    return {
        "median_ms": statistics.median(runs),
        "min_ms": min(runs),
        "setup_median_ms": statistics.median(setups),
        "reps": reps,
        "how": "in process: PyLabRobot LiquidHandler + LiquidHandlerChatterboxBackend on "
        "STARLetDeck, tip and volume tracking on, 96 x (pick_up_tips, aspirate, dispense, "
        "discard_tips); deck setup not timed",
    }


# ---------------------------------------------------------------------------------- 2. CLI
def bench_cli(reps: int, env: dict[str, str], bytecode_cache: bool) -> dict[str, Any]:
    """Wall clock of ``labwright simulate`` as a subprocess.

    ``bytecode_cache``: Labwright is installed editable, and ``make`` exports
    PYTHONDONTWRITEBYTECODE=1, so its own modules are compiled again in every process (about
    0.1-0.2 s). With the cache on, compiled modules go to a temporary PYTHONPYCACHEPREFIX (never
    into the repository), as for a normal install -- the peer's site-packages are precompiled.
    """
    with tempfile.TemporaryDirectory(prefix="labwright-bench-") as tmp:
        import yaml

        path = Path(tmp) / "transfers_96.yaml"
        path.write_text(yaml.safe_dump(protocol_96(), sort_keys=False))
        cmd = [str(LABWRIGHT), "simulate", str(path), "--config", str(LAB), "--json"]
        env = {**env, "LABWRIGHT_STATE_DIR": tmp}
        if bytecode_cache:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        else:
            env["PYTHONDONTWRITEBYTECODE"] = "1"
            env.pop("PYTHONPYCACHEPREFIX", None)
        times, cpu, report = [], [], {}
        for i in range(reps + 1):  # the first run is untimed: verification and warm caches
            used = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=REPO)
            elapsed = time.perf_counter() - t0
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu_s = after.ru_utime + after.ru_stime - used.ru_utime - used.ru_stime
            if proc.returncode != 0:
                raise RuntimeError(f"labwright simulate exited {proc.returncode}: {proc.stderr}")
            if i == 0:
                report = json.loads(proc.stdout)
                picked = report.get("events", {}).get("tip_picked_up")
                if not report.get("ok") or picked != 96:
                    raise RuntimeError(f"labwright simulate did not do 96 transfers: {report}")
            else:
                times.append(elapsed)
                cpu.append(cpu_s)
    return {
        "median_s": statistics.median(times),
        "cpu_median_s": statistics.median(cpu),
        "min_s": min(times),
        "runs": [round(t, 4) for t in times],
        "reported_simulate_ms": report.get("simulate_ms"),
        "reported_total_ms": report.get("total_ms"),
        "verified": {"ok": report.get("ok"), "tip_picked_up": 96},
        "bytecode_cache": bytecode_cache,
        "how": "subprocess wall clock of `labwright simulate <96-transfer.yaml> --config "
        "examples/lab.yaml --json` (interpreter start-up, imports, lab load, deck build, "
        "simulation); one untimed verification run first",
    }


def bench_peer(repeat: int) -> dict[str, Any]:
    python3 = shutil.which("python3")
    if python3 is None:
        return {"skipped": "no python3 on PATH to run bench/opentrons_peer.py"}
    log("running bench/opentrons_peer.py (the first time it creates .venv-opentrons)")
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    try:
        proc = subprocess.run(
            [python3, str(PEER), "--json", "--repeat", str(repeat)],
            stdout=subprocess.PIPE,
            stderr=None,  # the peer's progress goes to our stderr
            text=True,
            env=env,
            cwd=REPO,
            timeout=900,
        )
    except subprocess.TimeoutExpired:
        return {"skipped": "opentrons_peer.py timed out after 900 s"}
    if proc.returncode != 0:
        return {
            "skipped": f"opentrons_peer.py exited {proc.returncode} (no python3.11 or no "
            "network to install opentrons?); see its message above"
        }
    try:
        return dict(json.loads(proc.stdout.strip().splitlines()[-1]))
    except (ValueError, IndexError):
        return {"skipped": f"opentrons_peer.py printed no JSON: {proc.stdout[-200:]!r}"}


# ---------------------------------------------------------------------------------- 3. MCP
async def bench_mcp_async(calls: int, warmup: int, env: dict[str, str]) -> dict[str, Any]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    cases: list[tuple[str, str, dict[str, Any], str]] = [
        ("get_run", "get_run", {"run_id": "no-such-run"}, "RUN_NOT_FOUND"),
        ("get_state", "get_state", {}, ""),
        (
            "pick_up_tips_dry_run",
            "pick_up_tips",
            {"rack": "tips_1", "channels": [0], "dry_run": True},
            "",
        ),
    ]
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="labwright-bench-mcp-") as state_dir:
        params = StdioServerParameters(
            command=str(LABWRIGHT),
            args=["serve", "lh1", "--config", str(LAB)],
            env={**env, "LABWRIGHT_STATE_DIR": state_dir},
            cwd=str(REPO),
        )
        with open(Path(state_dir) / "server.stderr", "w") as errlog:
            t0 = time.perf_counter()
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                results["startup_to_initialized_ms"] = (time.perf_counter() - t0) * 1000
                for key, tool, args, expect in cases:
                    first = await session.call_tool(tool, args)
                    text = first.content[0].text if first.content else ""  # type: ignore[union-attr]
                    if expect:
                        if not first.isError or expect not in text:
                            raise RuntimeError(f"{tool}: expected {expect}, got {text[:200]}")
                    elif first.isError:
                        raise RuntimeError(f"{tool} failed: {text[:300]}")
                    for _ in range(warmup):
                        await session.call_tool(tool, args)
                    times = []
                    for _ in range(calls):
                        t = time.perf_counter()
                        await session.call_tool(tool, args)
                        times.append((time.perf_counter() - t) * 1000)
                    results[key] = {
                        "p50_ms": statistics.median(times),
                        "p95_ms": pct(times, 95),
                        "min_ms": min(times),
                        "calls": calls,
                        "response_bytes": len(text),
                    }
    results["how"] = (
        f"one held MCP stdio session (mcp.client.stdio + ClientSession) with `labwright serve "
        f"lh1 --config examples/lab.yaml`, fresh LABWRIGHT_STATE_DIR; {warmup} warm-up calls, "
        f"then {calls} sequential tools/call per tool, client-side round trip"
    )
    return results


# ---------------------------------------------------------------------------------- 5. long
LONG_HOW = (
    "bench/long_runs.py drives N cheap steps (pick_up_tips tips_1 A1 / drop_tips back to the "
    "rack) of an N+1-step plan through the real task graph (TaskRunner, 4 stdio servers, "
    "SQLite checkpoints with durability=sync, the audit log), then crashes before step N+1 "
    "(the arm moves plate_1); bytes per step = growth of the SQLite pages in use between the "
    "first and the last dispatch / N; per-step time = wall clock between dispatch callbacks "
    "(p50 over the first and the last 100 steps; CPU time of the task process and of the task "
    "process + its servers beside it, which other people's load does not inflate); "
    "bench/resume_bench.py then runs `labwright resume RUN` on copies of the crashed state "
    "directory (a new process; wall time from spawning it to the instrument ledger's "
    "started_at of step N+1), once starting its own stdio servers and once attached to "
    "servers from `labwright lab up` (not timed)"
)


def bench_long(
    steps: list[int], env: dict[str, str]
) -> tuple[dict[int, dict[str, Any]], list[tuple[str, str, str, str]]]:
    """Group 5: a driven long run and resume from its crash, for each N in ``steps``."""
    import long_runs
    import resume_bench

    results: dict[int, dict[str, Any]] = {}
    rows: list[tuple[str, str, str, str]] = []
    saved = os.environ.get("LABWRIGHT_STATE_DIR")
    try:
        for n in steps:
            log(f"5/5 long run of {n:,} steps, then `labwright resume` from its crash")
            results[n] = r = asyncio.run(resume_bench.bench_resume(n, env, log))
            rows += long_runs.rows({n: r["long"]}) + resume_bench.rows({n: r})
    finally:
        if saved is None:
            os.environ.pop("LABWRIGHT_STATE_DIR", None)
        else:
            os.environ["LABWRIGHT_STATE_DIR"] = saved
    return results, rows


# ---------------------------------------------------------------------------------- report
def fmt_ms(v: float) -> str:
    return f"{v:.2f} ms" if v < 100 else f"{v:.0f} ms"


def table(rows: list[tuple[str, str, str, str]]) -> str:
    head = ("figure", "value", "target", "met?")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(4)]
    line = "  ".join("-" * w for w in widths)
    out = ["  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)), line]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(out)


def yes(ok: bool) -> str:
    return "yes" if ok else "NO"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", metavar="PATH", type=Path, help="also write results as JSON")
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (smoke run)")
    parser.add_argument("--skip-peer", action="store_true", help="do not run opentrons_peer.py")
    parser.add_argument("--skip-agent", action="store_true", help="do not run agent_bench.py")
    parser.add_argument("--skip-long", action="store_true", help="no long runs (group 5)")
    parser.add_argument(
        "--long-steps",
        type=int,
        action="append",
        metavar="N",
        help="steps of a long run (repeatable; default 1,000 and 10,000, --quick 1,000)",
    )
    args = parser.parse_args(argv)

    twin_reps, cb_reps, cli_reps, peer_reps, mcp_calls = (
        (10, 1, 2, 1, 50) if args.quick else (50, 5, 5, 3, 500)
    )
    env = dict(os.environ)
    env.pop("LABWRIGHT_CONFIG", None)
    mach = machine()
    started = time.perf_counter()
    results: dict[str, Any] = {"machine": mach}

    log(f"1/4 twin: 96 transfers in process x{twin_reps}")
    results["twin_96"] = twin = bench_twin(twin_reps)
    log(f"1/4 PyLabRobot chatterbox: 96 transfers in process x{cb_reps}")
    try:
        results["chatterbox_96"] = cb = bench_chatterbox(cb_reps)
    except Exception as exc:  # context only: never fatal
        results["chatterbox_96"] = cb = {"skipped": f"{type(exc).__name__}: {exc}"}

    log(f"2/4 labwright simulate subprocess x{cli_reps}, with and without a bytecode cache")
    results["cli_96"] = cli = bench_cli(cli_reps, env, bytecode_cache=True)
    results["cli_96_no_pyc"] = cli_nopyc = bench_cli(cli_reps, env, bytecode_cache=False)
    peer = {"skipped": "--skip-peer given"} if args.skip_peer else bench_peer(peer_reps)
    results["opentrons_96"] = peer

    log(f"3/4 MCP stdio: {mcp_calls} tools/call per tool")
    results["mcp"] = mcp = asyncio.run(bench_mcp_async(mcp_calls, 20, env))
    agent_rows: list[tuple[str, str, str, str]] = []
    agent_how: list[str] = []
    if not args.skip_agent:
        sys.path.insert(0, str(REPO / "bench"))
        import agent_bench

        agent_results, agent_rows, agent_how = agent_bench.run(args.quick, env, log)
        results.update(agent_results)
    long_rows: list[tuple[str, str, str, str]] = []
    if not args.skip_long:
        steps = args.long_steps or ([1000] if args.quick else [1000, 10000])
        results["long_runs"], long_rows = bench_long(steps, env)
    import makespan

    makespan_results, makespan_rows, makespan_how = makespan.run(log)
    results.update(makespan_results)
    results["total_bench_s"] = time.perf_counter() - started

    # ------------------------------------------------------------------ table
    rows: list[tuple[str, str, str, str]] = []
    rows.append(
        (
            f"twin: 96 transfers, parse+clone+run, median (n={twin['reps']})",
            fmt_ms(twin["median_ms"]),
            f"<= {TARGET_TWIN_MS:.0f} ms",
            yes(twin["median_ms"] <= TARGET_TWIN_MS),
        )
    )
    rows.append(
        (
            "twin: 96 transfers, p95",
            fmt_ms(twin["p95_ms"]),
            f"<= {TARGET_TWIN_MS:.0f} ms",
            yes(twin["p95_ms"] <= TARGET_TWIN_MS),
        )
    )
    if "skipped" in cb:
        rows.append(("PyLabRobot chatterbox: 96 transfers", "skipped", "context", "-"))
    else:
        rows.append(
            (
                f"PyLabRobot chatterbox: 96 transfers, median (n={cb['reps']})",
                fmt_ms(cb["median_ms"]),
                "context",
                "-",
            )
        )
        rows.append(
            (
                "  ratio chatterbox / twin",
                f"{cb['median_ms'] / twin['median_ms']:.1f}x",
                "context",
                "-",
            )
        )
    rows.append(
        (
            f"`labwright simulate` 96 transfers, wall median (n={len(cli['runs'])})",
            f"{cli['median_s']:.3f} s",
            "figure",
            "-",
        )
    )
    rows.append(
        (
            "  same, no bytecode cache (PYTHONDONTWRITEBYTECODE=1)",
            f"{cli_nopyc['median_s']:.3f} s",
            "figure",
            "-",
        )
    )
    if "skipped" in peer:
        rows.append(("opentrons_simulate 96 transfers", "skipped", "figure", "-"))
        rows.append(
            ("  ratio opentrons / labwright", "skipped", f">= {TARGET_PEER_RATIO:.0f}x", "-")
        )
    else:
        ratio = peer["median_s"] / cli["median_s"]
        results["peer_ratio"] = ratio
        rows.append(
            (
                f"opentrons_simulate {peer.get('opentrons_version', '?')} 96 transfers, "
                f"wall median (n={len(peer.get('runs', []))})",
                f"{peer['median_s']:.3f} s",
                "figure",
                "-",
            )
        )
        ratio_nopyc = peer["median_s"] / cli_nopyc["median_s"]
        results["peer_ratio_no_pyc"] = ratio_nopyc
        rows.append(
            (
                "  ratio opentrons / labwright",
                f"{ratio:.2f}x",
                f">= {TARGET_PEER_RATIO:.0f}x",
                yes(ratio >= TARGET_PEER_RATIO),
            )
        )
        rows.append(
            (
                "  ratio opentrons / labwright (no bytecode cache)",
                f"{ratio_nopyc:.2f}x",
                f">= {TARGET_PEER_RATIO:.0f}x",
                yes(ratio_nopyc >= TARGET_PEER_RATIO),
            )
        )
        if peer.get("cpu_median_s"):
            ratio_cpu = peer["cpu_median_s"] / cli["cpu_median_s"]
            results["peer_ratio_cpu"] = ratio_cpu
            rows.append(
                (
                    "  same in CPU time (user + system; less moved by other people's load)",
                    f"{peer['cpu_median_s']:.3f} / {cli['cpu_median_s']:.3f} s = {ratio_cpu:.2f}x",
                    "figure",
                    "-",
                )
            )
    for key, label, target in (
        ("get_run", "MCP get_run (unknown id)", True),
        ("get_state", "MCP get_state", False),
        ("pick_up_tips_dry_run", "MCP pick_up_tips dry_run", False),
    ):
        m = mcp[key]
        rows.append(
            (
                f"{label}, p50 (n={m['calls']})",
                fmt_ms(m["p50_ms"]),
                f"<= {TARGET_MCP_P50_MS:.0f} ms" if target else "figure",
                yes(m["p50_ms"] <= TARGET_MCP_P50_MS) if target else "-",
            )
        )
        rows.append((f"{label}, p95", fmt_ms(m["p95_ms"]), "figure", "-"))
    rows += agent_rows
    rows += long_rows
    rows += makespan_rows

    print(
        f"Labwright benchmark -- {mach['nproc']} CPU(s) ({mach['cpu']}), "
        f"{mach['implementation']} {mach['python']}, {mach['platform']}, load average at "
        f"start {' '.join(map(str, mach['loadavg_at_start']))}, at end "
        f"{' '.join(str(round(x, 2)) for x in os.getloadavg())}"
    )
    print()
    print(table(rows))
    print()
    print("How each figure was measured:")
    print(f"  twin:        {twin['how']}; clock time.perf_counter, this interpreter")
    if "how" in cb:
        print(f"  chatterbox:  {cb['how']}")
    print(f"  simulate:    {cli['how']}")
    print(
        "               bytecode cache: a temporary PYTHONPYCACHEPREFIX (as a normal install); "
        "'no bytecode cache': Labwright's own modules compiled in every process, as under make"
    )
    if "skipped" in peer:
        print(f"  opentrons:   SKIPPED -- {peer['skipped']}")
    else:
        print(
            "  opentrons:   subprocess wall clock of `opentrons_simulate` on the equivalent OT-2 "
            "protocol (bench/opentrons_peer.py, own venv, Python 3.11)"
        )
    print(f"  MCP:         {mcp['how']}")
    print(f"  (server start to initialized: {mcp['startup_to_initialized_ms']:.0f} ms)")
    for line in agent_how + makespan_how:
        print(line)
    if long_rows:
        print(f"  long runs:   {LONG_HOW}")
    print(f"  total bench time: {results['total_bench_s']:.1f} s")

    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2) + "\n")
        print(f"results written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
