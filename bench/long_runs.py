"""Long runs: lab-database growth and per-step time over thousands of driven steps.

The real task graph (:class:`agents.task.runner.TaskRunner` on ``examples/lab.yaml``: four
``labwright serve`` stdio servers, ``AsyncSqliteSaver`` checkpoints with
``durability="sync"``, the audit log) drives a fixed plan of N+1 cheap steps (pick_up_tips
tips_1 A1 / drop_tips back into the rack, alternately: the world ends as it began, so any N
works). After approval every step is dispatched for real; the progress callback raises at the
dispatch of step N+1 (the arm moving plate_1): the process "dies" there, with N steps done and
checkpointed, so the state directory ends as a crashed run that resume figures can start from.

Figures:
- lab-database bytes per step: growth of the lab database (checkpoints, Labwright's tables,
  the audit log, the servers' ledgers and event logs: one SQLite file) between the first and
  the last dispatch, divided by the steps in between. Two measures: the bytes SQLite uses
  (``page_count - freelist_count`` pages, read through a second connection; WAL frames not yet
  checkpointed are included because the reader sees them) and the files on disk (database +
  ``-wal``).
- per-step time: wall clock between consecutive ``dispatch`` progress callbacks (one dispatch
  -> check cycle: policy, state read, the command, state read, audit, check, checkpoints),
  over the first 100 and the last 100 steps; the ratio last / first of the medians (the mean
  is printed beside it; the median is the headline because the machine is shared). Beside
  it the task process's own CPU time per step (``time.process_time``), which other people's
  load on the machine does not inflate (the servers' CPU is not in it), and the CPU time of
  the task process and its four servers together (``/proc``), with the load average.

Other people's load moves wall-clock figures by 2-3x on this machine, so the first and the
last windows of one run (minutes apart) may see different loads. Beside them: how busy the
whole machine was in each window (``/proc/stat``), each server's CPU per step, the p50 of a
100-step window at ten places along the run (growth is a trend, load is noise around it), and
the same-load comparison: right after the last window, three fresh runs of the same plan
drive their first 100 steps; the last window against their median p50 is the fair ratio.

``--max-seconds`` / ``--max-mb`` stop a run early (at the next dispatch), for code whose
cost grows with the run: the figures then say how far it got.

Usage: ``.venv/bin/python bench/long_runs.py --steps 1000 [--steps 10000] [--json PATH]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _stats import summary

REPO = Path(__file__).resolve().parent.parent
LAB = REPO / "examples" / "lab.yaml"
WINDOW = 100
TARGET_BYTES_PER_STEP = 20_000
TARGET_RATIO = 1.2


class _Stop(Exception):
    """Raised by the progress callback: the process 'dies' before a step is dispatched."""


def long_plan(n_done: int) -> list[Any]:
    """``n_done`` tip steps on the liquid handler, then the arm takes plate_1 to the hotel.

    The last step is on another instrument because one instrument simulates at most 10,000
    steps in one dry-run protocol; it moves plate_1 off the liquid handler's deck, so it comes
    after every liquid-handler step whatever order the dispatcher may choose.
    """
    from agents.task.planning.models import PlanStep

    last = PlanStep(
        id=f"s{n_done + 1}",
        instrument="arm1",
        command="move_plate",
        args={"plate": "plate_1", "to_location": "hotel:1"},
    )
    return [*tip_steps(n_done), last]


def tip_steps(n: int) -> list[Any]:
    """pick_up_tips tips_1 A1 / drop_tips back into the rack, alternately: repeatable forever."""
    from agents.task.planning.models import PlanStep

    return [
        PlanStep(
            id=f"s{i + 1}",
            instrument="lh1",
            command="pick_up_tips",
            args={"rack": "tips_1", "spots": ["A1"], "channels": [0]},
        )
        if i % 2 == 0
        else PlanStep(
            id=f"s{i + 1}",
            instrument="lh1",
            command="drop_tips",
            args={"channels": [0], "destination": "rack"},
        )
        for i in range(n)
    ]


class FixedPlanner:
    """Returns the plan it was given (no parsing)."""

    def __init__(self, steps: Callable[[], list[Any]]) -> None:
        self.steps = steps

    def plan(self, request: str, lab: Any) -> Any:
        from agents.task.planning.models import Plan

        return Plan(request=request, summary="bench plan", steps=self.steps())


def runner_for(state_dir: Path, planner: Any, progress: Any) -> Any:
    """A TaskRunner on the example lab with its state in ``state_dir``."""
    from agents.task.runner import TaskRunner
    from device_servers.lab import load

    os.environ["LABWRIGHT_STATE_DIR"] = str(state_dir)  # where load() puts the lab database
    lab = load(LAB)
    assert lab.source is not None
    return TaskRunner(
        list(lab.instruments),
        lab.source,
        lab.db_path,
        planner,
        env={"LABWRIGHT_STATE_DIR": str(state_dir)},
        progress=progress,
    )


def lab_db(state_dir: Path) -> Path:
    """The lab database (task runs, checkpoints, audit, ledgers) in a state directory."""
    return next(p for p in state_dir.glob("*.sqlite") if not p.name.endswith(".world.sqlite"))


def tree_cpu_s() -> float:
    """CPU seconds (user + system) of this process and its child processes (the servers)."""
    tick = os.sysconf("SC_CLK_TCK")
    pids = [os.getpid()]
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        with contextlib.suppress(OSError):
            pids += [int(p) for p in (task / "children").read_text().split()]
    total = 0.0
    for pid in pids:
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    return total


def machine_jiffies() -> tuple[int, int]:
    """(busy, total) CPU jiffies of the whole machine since boot (``/proc/stat``): how busy
    every process on it kept the CPUs between two readings, ours and other people's."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields) - idle, sum(fields)


def server_cpu_s() -> dict[str, float]:
    """CPU seconds of each of this process's ``labwright serve`` children, by instrument."""
    tick = os.sysconf("SC_CLK_TCK")
    found: dict[str, float] = {}
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        with contextlib.suppress(OSError):
            for pid in (task / "children").read_text().split():
                with contextlib.suppress(OSError, ValueError, IndexError):
                    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                    name = argv[argv.index(b"serve") + 1].decode()
                    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                    found[name] = (int(fields[11]) + int(fields[12])) / tick
    return found


def db_bytes(db: Path) -> tuple[int, int]:
    """(bytes SQLite uses, bytes of the database and WAL files)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        free = conn.execute("PRAGMA freelist_count").fetchone()[0]
        size = conn.execute("PRAGMA page_size").fetchone()[0]
    finally:
        conn.close()
    files = sum(p.stat().st_size for p in (db, db.with_name(db.name + "-wal")) if p.exists())
    return (pages - free) * size, files


async def drive(
    state_dir: Path,
    n_done: int,
    log: Callable[[str], None],
    run_id: str = "bench-long",
    max_seconds: float | None = None,
    max_mb: float | None = None,
    stop_at: int | None = None,
) -> dict[str, Any]:
    """Drive ``n_done`` steps of an ``n_done + 1``-step plan, then 'crash' before the last
    (or before step ``stop_at + 1``: the same plan, only its first steps)."""
    stamps: list[float] = []
    cpu: list[float] = []  # this process's CPU time at each dispatch (robust to a busy machine)
    tree: dict[int, Mark] = {}  # window edges: CPU, machine and load readings
    end = n_done if stop_at is None else min(stop_at, n_done)
    sizes: list[tuple[int, int, int]] = []  # (step index, used bytes, file bytes)
    every = max(1, n_done // 10)
    t_start: list[float] = []
    db: list[Path] = []
    stopped: dict[str, Any] = {}

    def progress(what: str, data: dict[str, Any]) -> None:
        if what != "dispatch":
            return
        now = time.perf_counter()
        index = int(data["index"])
        if index == len(stamps):  # first dispatch of this step (not a retry)
            stamps.append(now)
            cpu.append(time.process_time())
        if index in (0, WINDOW, end - WINDOW, end) and index not in tree:
            tree[index] = mark()
        if not t_start:
            t_start.append(now)
            db.append(lab_db(state_dir))
            sizes.append((index, *db_bytes(db[0])))
        if index >= end:
            sizes.append((index, *db_bytes(db[0])))
            raise _Stop(f"bench crash before step {index + 1}")
        if index and index % every == 0:
            used, files = db_bytes(db[0])
            sizes.append((index, used, files))
            elapsed = now - t_start[0]
            log(
                f"long run: {index}/{n_done} steps, {elapsed:.0f} s, lab database "
                f"{used / 1e6:.1f} MB used"
            )
            over_time = max_seconds is not None and elapsed > max_seconds
            over_size = max_mb is not None and used > max_mb * 1e6
            if over_time or over_size:
                stopped.update(at_step=index, reason="--max-seconds" if over_time else "--max-mb")
                raise _Stop("bench limit reached")

    planner = FixedPlanner(lambda: long_plan(n_done))
    runner = runner_for(state_dir, planner, progress)
    t0 = time.perf_counter()
    async with runner:
        out = await runner.start("bench: many cheap steps", run_id=run_id)
        if out.status != "waiting_approval":
            raise RuntimeError(f"long-run bench did not wait for approval: {out.status}")
        to_approval_s = time.perf_counter() - t0
        with contextlib.suppress(_Stop):
            await runner.resume(run_id, {"decision": "approve", "by": "bench"})
            raise RuntimeError("the long run ended without the bench crash")
    steps = len(stamps) - 1  # steps completed between the first and the last dispatch
    if steps < 2:
        raise RuntimeError(f"the long run stopped after {steps} steps")
    cycles = [(b - a) * 1000 for a, b in itertools.pairwise(stamps)]
    cpu_cycles = [(b - a) * 1000 for a, b in itertools.pairwise(cpu)]
    first, last = cycles[:WINDOW], cycles[-WINDOW:]
    (_, used0, files0), (_, used1, files1) = sizes[0], sizes[-1]
    return {
        "steps_planned": n_done,
        "steps_done": steps,
        "stopped_early": stopped or None,
        "to_approval_s": to_approval_s,
        "drive_s": stamps[-1] - stamps[0],
        "bytes_per_step_used": (used1 - used0) / steps,
        "bytes_per_step_files": (files1 - files0) / steps,
        "db_used_bytes_end": used1,
        "db_file_bytes_end": files1,
        "sizes": sizes,
        "first": summary(first),
        "last": summary(last),
        "ratio_p50": statistics.median(last) / statistics.median(first),
        "ratio_mean": statistics.fmean(last) / statistics.fmean(first),
        "step": summary(cycles),
        "cpu_first_mean_ms": statistics.fmean(cpu_cycles[:WINDOW]),
        "cpu_last_mean_ms": statistics.fmean(cpu_cycles[-WINDOW:]),
        "cpu_ratio": statistics.fmean(cpu_cycles[-WINDOW:]) / statistics.fmean(cpu_cycles[:WINDOW]),
        "series": series(cycles),
        **_tree_figures(tree, end),
        "loadavg_end": os.getloadavg(),
    }


Mark = tuple[float, dict[str, float], tuple[int, int], float]


def mark() -> Mark:
    """At a window's edge: CPU s of this process + its servers, of each server, the machine's
    busy / total jiffies, the 1-minute load average."""
    return tree_cpu_s(), server_cpu_s(), machine_jiffies(), os.getloadavg()[0]


def window(a: Mark, b: Mark) -> dict[str, Any]:
    """CPU per step of the task process + its servers, and of each server, between two marks
    ``WINDOW`` steps apart; how busy the machine was (every process on it) and the load."""
    busy = (b[2][0] - a[2][0]) / max(1, b[2][1] - a[2][1])
    return {
        "tree_cpu_ms": (b[0] - a[0]) * 1000 / WINDOW,
        "server_cpu_ms": {k: (b[1][k] - v) * 1000 / WINDOW for k, v in a[1].items() if k in b[1]},
        "machine_busy": busy,  # 0..1 of all CPUs
        "load": (a[3], b[3]),
    }


def series(cycles: list[float], parts: int = 10) -> list[tuple[int, float]]:
    """(first step, p50 ms) of a ``WINDOW``-step window at ``parts`` places along the run:
    growth with the run shows as a trend, other people's load as noise around it."""
    if len(cycles) < 2 * WINDOW:
        return []
    starts = [round(i * (len(cycles) - WINDOW) / (parts - 1)) for i in range(parts)]
    return [(i, statistics.median(cycles[i : i + WINDOW])) for i in starts]


def _tree_figures(tree: dict[int, Mark], end: int) -> dict[str, Any]:
    """CPU per step of the task process and its servers over the first and last windows."""
    marks = (0, WINDOW, end - WINDOW, end)
    if not all(m in tree for m in marks) or end < 2 * WINDOW:
        return {}
    first, last = window(tree[0], tree[WINDOW]), window(tree[end - WINDOW], tree[end])
    return {
        "tree_cpu_first_ms": first["tree_cpu_ms"],
        "tree_cpu_last_ms": last["tree_cpu_ms"],
        "tree_cpu_ratio": last["tree_cpu_ms"] / first["tree_cpu_ms"],
        "window_first": first,
        "window_last": last,
        "load_first": tree[0][3],
        "load_last": tree[end][3],
    }


async def fresh_first_window(
    n_done: int, log: Callable[[str], None], repeats: int = 3
) -> dict[str, Any]:
    """The first ``WINDOW`` steps of the same ``n_done + 1``-step plan on a fresh state, run
    ``repeats`` times right after a long run's last ones: windows a minute or two apart, at
    about the same load on the machine (the long run's own first window was minutes earlier).
    The median of the repeats is what the last window is compared with."""
    windows = []
    for k in range(repeats):
        with tempfile.TemporaryDirectory(prefix="labwright-bench-fresh-") as tmp:
            log(f"long run: fresh run {k + 1}/{repeats} of the same plan, its first {WINDOW} steps")
            r = await drive(Path(tmp), n_done, log, run_id="bench-fresh", stop_at=2 * WINDOW)
        windows.append({"first": r["first"], "window_first": r.get("window_first", {})})
    p50s = [w["first"]["p50_ms"] for w in windows]
    cpus = [w["window_first"]["tree_cpu_ms"] for w in windows if w["window_first"]]
    busy = [w["window_first"]["machine_busy"] for w in windows if w["window_first"]]
    return {
        "p50_ms": statistics.median(p50s),
        "p50s_ms": p50s,
        "tree_cpu_ms": statistics.median(cpus) if cpus else None,
        "machine_busy": busy,
        "windows": windows,
    }


def pair(long: dict[str, Any], fresh: dict[str, Any]) -> dict[str, Any]:
    """The long run's last window against the fresh runs' first (median; same load), wall
    and CPU."""
    out = {"ratio_p50": long["last"]["p50_ms"] / fresh["p50_ms"]}
    if "window_last" in long and fresh.get("tree_cpu_ms"):
        out["tree_cpu_ratio"] = long["window_last"]["tree_cpu_ms"] / fresh["tree_cpu_ms"]
    return out


async def bench_long(n_done: int, log: Callable[[str], None], **limits: Any) -> dict[str, Any]:
    """One driven run of ``n_done`` steps in a fresh state directory, then the first steps of
    fresh runs of the same plan (the same-load comparison)."""
    with tempfile.TemporaryDirectory(prefix="labwright-bench-long-") as tmp:
        log(f"long run: {n_done} cheap steps through the task graph (4 stdio servers)")
        result = await drive(Path(tmp), n_done, log, **limits)
    if not result["stopped_early"] and n_done >= 2 * WINDOW:
        result["fresh"] = await fresh_first_window(n_done, log)
    return result


def rows(results: dict[int, dict[str, Any]]) -> list[tuple[str, str, str, str]]:
    """Table rows (figure, value, target, met?) for ``bench/run.py``."""
    out: list[tuple[str, str, str, str]] = []
    for n, r in sorted(results.items()):
        done = r["steps_done"]
        label = f"{n:,} steps" if not r["stopped_early"] else f"{n:,} steps (stopped at {done:,})"
        out.append(
            (
                f"long run {label}: lab database growth per step (used)",
                f"{r['bytes_per_step_used'] / 1e3:.1f} kB",
                f"<= {TARGET_BYTES_PER_STEP / 1e3:.0f} kB",
                "yes" if r["bytes_per_step_used"] <= TARGET_BYTES_PER_STEP else "NO",
            )
        )
        out.append(
            (
                "  growth per step (database + WAL files)",
                f"{r['bytes_per_step_files'] / 1e3:.1f} kB",
                "figure",
                "-",
            )
        )
        out.append(
            (
                f"  per-step time, first {WINDOW} / last {WINDOW} steps, p50",
                f"{r['first']['p50_ms']:.1f} / {r['last']['p50_ms']:.1f} ms",
                "figure",
                "-",
            )
        )
        out.append(
            (
                "  ratio last / first (p50; mean beside)",
                f"{r['ratio_p50']:.2f} ({r['ratio_mean']:.2f})",
                f"<= {TARGET_RATIO}",
                "yes" if r["ratio_p50"] <= TARGET_RATIO else "NO",
            )
        )
        out.append(
            (
                "  task process CPU per step, first / last (mean; ratio)",
                f"{r['cpu_first_mean_ms']:.1f} / {r['cpu_last_mean_ms']:.1f} ms "
                f"({r['cpu_ratio']:.2f})",
                "figure",
                "-",
            )
        )
        if "tree_cpu_ratio" in r:
            out.append(
                (
                    "  task process + 4 servers CPU per step, first / last (ratio)",
                    f"{r['tree_cpu_first_ms']:.1f} / {r['tree_cpu_last_ms']:.1f} ms "
                    f"({r['tree_cpu_ratio']:.2f})",
                    "figure",
                    "-",
                )
            )
            out.append(
                (
                    "  load average at the first / last step (2 CPUs)",
                    f"{r['load_first']:.1f} / {r['load_last']:.1f}",
                    "figure",
                    "-",
                )
            )
        if "window_last" in r:
            first, last = r["window_first"], r["window_last"]
            out.append(
                (
                    "  machine busy (every process) in the first / last window",
                    f"{first['machine_busy']:.0%} / {last['machine_busy']:.0%}",
                    "figure",
                    "-",
                )
            )
            for name in sorted(set(first["server_cpu_ms"]) & set(last["server_cpu_ms"])):
                a, b = first["server_cpu_ms"][name], last["server_cpu_ms"][name]
                if not a:  # a server the steps do not call (the arm moves only at the end)
                    continue
                out.append(
                    (
                        f"  {name} server CPU per step, first / last (ratio)",
                        f"{a:.1f} / {b:.1f} ms ({b / a if a else float('nan'):.2f})",
                        "figure",
                        "-",
                    )
                )
        if r.get("series"):
            out.append(
                (
                    f"  per-step p50 over {WINDOW} steps, at 10 places along the run",
                    " ".join(f"{ms:.1f}" for _, ms in r["series"]) + " ms",
                    "figure",
                    "-",
                )
            )
        fresh = r.get("fresh")
        if fresh:
            paired = pair(r, fresh)
            runs = ", ".join(f"{ms:.1f}" for ms in fresh["p50s_ms"])
            out.append(
                (
                    f"  same load: last {WINDOW} / first {WINDOW} of fresh runs right after, p50",
                    f"{r['last']['p50_ms']:.1f} / {fresh['p50_ms']:.1f} ms "
                    f"({paired['ratio_p50']:.2f})",
                    f"<= {TARGET_RATIO}",
                    "yes" if paired["ratio_p50"] <= TARGET_RATIO else "NO",
                )
            )
            busy = " ".join(f"{b:.0%}" for b in fresh["machine_busy"])
            out.append(
                (
                    f"  the fresh runs' p50 (median of {len(fresh['p50s_ms'])}); machine busy",
                    f"{runs} ms; {busy}",
                    "figure",
                    "-",
                )
            )
            if "tree_cpu_ratio" in paired:
                out.append(
                    (
                        "  same load: task + servers CPU per step, last / fresh runs' first",
                        f"{paired['tree_cpu_ratio']:.2f}",
                        "figure",
                        "-",
                    )
                )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, action="append", help="steps to drive (repeatable)")
    parser.add_argument("--json", metavar="PATH", type=Path, help="also write results as JSON")
    parser.add_argument("--max-seconds", type=float, help="stop a run after this long")
    parser.add_argument("--max-mb", type=float, help="stop a run once the database is this big")
    args = parser.parse_args(argv)

    def log(message: str) -> None:
        print(f"bench: {message}", file=sys.stderr, flush=True)

    results: dict[int, dict[str, Any]] = {}
    for n in args.steps or [1000]:
        results[n] = asyncio.run(
            bench_long(n, log, max_seconds=args.max_seconds, max_mb=args.max_mb)
        )
    for row in rows(results):
        print(f"{row[0]:<62} {row[1]:>18}  {row[2]:<10} {row[3]}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
