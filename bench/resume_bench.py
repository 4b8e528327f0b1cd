"""``labwright resume`` -> next action, after N steps, with servers it starts and servers up.

A run of N+1 steps is driven through the real graph (``long_runs.drive``: N tip steps on the
liquid handler, then the arm's move of plate_1) and crashes before its last step. Copies of
the state directory are then resumed by ``labwright resume RUN`` as a new process:

- servers started by resume: no lab servers are up, so resume starts the four stdio servers;
- servers already up: ``labwright lab up`` first (not timed), resume attaches to them over
  127.0.0.1 HTTP, ``labwright lab down`` after.

The copies are flushed to disk (``os.sync``) before the timing starts. The figure is wall time
from spawning ``labwright resume`` to the instrument's ledger row of
the next action (``started_at``: the server has the request and is about to act); the
device agent's audit row (written when the server has answered; the arm's move takes 0.2 s of
simulated device time) is beside it. Beside the CLI, a new TaskRunner in this process, split
into server start-up, checkpoint load and resume -> dispatch.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import long_runs
from long_runs import LAB, REPO, FixedPlanner, lab_db, runner_for

LABWRIGHT = Path(sys.executable).parent / "labwright"
TARGET_UP_S = 1.0
TARGET_STARTS_S = 2.0


def _next_action(state_dir: Path, run_id: str, action_id: str) -> dict[str, Any] | None:
    """The device agent's audit row of the action (written when the server answered)."""
    conn = sqlite3.connect(lab_db(state_dir))
    try:
        for ts, result in conn.execute(
            "SELECT ts, result FROM audit_log WHERE run_id = ? AND args LIKE ? ORDER BY seq",
            (run_id, f'%"{action_id}"%'),
        ):
            code = None
            with contextlib.suppress(ValueError, AttributeError, TypeError):
                error = (json.loads(result) or {}).get("error") or {}
                code = error.get("code")
            return {"answered_at": ts, "code": code}
    finally:
        conn.close()
    return None


def _ledger_start(state_dir: Path, action_id: str) -> float | None:
    conn = sqlite3.connect(lab_db(state_dir))
    try:
        row = conn.execute(
            "SELECT started_at FROM actions WHERE action_id = ?", (action_id,)
        ).fetchone()
        return None if row is None else float(row[0])
    finally:
        conn.close()


def _cli(args: list[str], state_dir: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {**env, "LABWRIGHT_STATE_DIR": str(state_dir)}
    env.pop("LABWRIGHT_CONFIG", None)
    return subprocess.run(
        [str(LABWRIGHT), *args, "--config", str(LAB)],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=300,
    )


def resume_cli(state_dir: Path, run_id: str, action_id: str, env: dict[str, str]) -> dict[str, Any]:
    """Time ``labwright resume RUN`` (a new process) to the next action."""
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.time()
    proc = _cli(["resume", run_id], state_dir, env)
    t_exit = time.time()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    answered = _next_action(state_dir, run_id, action_id)
    started = _ledger_start(state_dir, action_id)
    if answered is None or started is None:
        raise RuntimeError(
            f"labwright resume (exit {proc.returncode}) did not dispatch {action_id}: "
            f"{proc.stdout[-300:]} {proc.stderr[-300:]}"
        )
    return {
        "to_action_s": started - t0,
        "to_answer_s": answered["answered_at"] - t0,
        "to_exit_s": t_exit - t0,
        "exit_code": proc.returncode,
        "next_action_code": answered["code"],
        "load_before": load,
        # CPU of the resume process and the servers it started, start to exit (all of it).
        "cpu_to_exit_s": (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime),
    }


def resume_with_lab_up(
    state_dir: Path, run_id: str, action_id: str, env: dict[str, str]
) -> dict[str, Any]:
    """``lab up`` (not timed), then time ``labwright resume``; ``lab down`` after."""
    t0 = time.perf_counter()
    up = _cli(["lab", "up"], state_dir, env)
    up_s = time.perf_counter() - t0
    if up.returncode != 0:
        raise RuntimeError(f"labwright lab up failed: {up.stdout[-300:]} {up.stderr[-300:]}")
    try:
        timed = resume_cli(state_dir, run_id, action_id, env)
    finally:
        _cli(["lab", "down"], state_dir, env)
    return {**timed, "lab_up_s": up_s}


async def resume_in_process(state_dir: Path, run_id: str, action_id: str) -> dict[str, Any]:
    """A new TaskRunner in this process: server start-up, checkpoint load, resume."""
    stamps: dict[str, float] = {}

    def progress(what: str, data: dict[str, Any]) -> None:
        if what == "dispatch" and "dispatch" not in stamps:
            stamps["dispatch"] = time.perf_counter()

    runner = runner_for(state_dir, FixedPlanner(lambda: []), progress)
    t0 = time.perf_counter()
    async with runner:
        t1 = time.perf_counter()
        snap = await runner.graph.aget_state({"configurable": {"thread_id": run_id}})
        t2 = time.perf_counter()
        if not set(snap.next) & {"dispatch", "step"}:  # step: a step's own branch
            raise RuntimeError(f"the crashed run does not resume at a dispatch: {snap.next}")
        out = await runner.resume(run_id)
    if "dispatch" not in stamps or _next_action(state_dir, run_id, action_id) is None:
        raise RuntimeError(f"in-process resume did not dispatch {action_id}: {out.status}")
    return {
        "server_startup_ms": (t1 - t0) * 1000,
        "checkpoint_load_ms": (t2 - t1) * 1000,
        "to_dispatch_ms": (stamps["dispatch"] - t2) * 1000,
        "status": out.status,
    }


async def bench_resume(
    n_done: int, env: dict[str, str], log: Callable[[str], None]
) -> dict[str, Any]:
    run_id = "bench-resume"
    action_id = f"{run_id}/s{n_done + 1}/{long_runs.long_plan(n_done)[-1].command}"
    with tempfile.TemporaryDirectory(prefix="labwright-bench-resume-") as tmp:
        build = Path(tmp) / "build"
        build.mkdir()
        log(f"resume: {n_done} cheap steps through the graph, then a crash before the last")
        driven = await long_runs.drive(build, n_done, log, run_id=run_id)
        if n_done >= 2 * long_runs.WINDOW:  # right after its last window: the same load
            driven["fresh"] = await long_runs.fresh_first_window(n_done, log)
        dirs = {k: Path(tmp) / k for k in ("starts", "up", "inproc")}
        for d in dirs.values():
            shutil.copytree(build, d)
        # The copies' pages are written out before any timing: a resume's first fsync would
        # otherwise wait for hundreds of MB the copy left dirty (seconds, after 10,000 steps).
        os.sync()
        log(f"resume: `labwright resume` after {n_done} steps, starting its servers")
        starts = await asyncio.to_thread(resume_cli, dirs["starts"], run_id, action_id, env)
        log(f"resume: `labwright resume` after {n_done} steps, servers up (`labwright lab up`)")
        up = await asyncio.to_thread(resume_with_lab_up, dirs["up"], run_id, action_id, env)
        inproc = await resume_in_process(dirs["inproc"], run_id, action_id)
    return {
        "steps_done": n_done,
        "drive_s": driven["drive_s"],
        "long": driven,
        "starts_servers": starts,
        "servers_up": up,
        "in_process": inproc,
    }


def rows(results: dict[int, dict[str, Any]]) -> list[tuple[str, str, str, str]]:
    out: list[tuple[str, str, str, str]] = []
    for n, r in sorted(results.items()):
        for key, label, target in (
            ("servers_up", "servers up", TARGET_UP_S),
            ("starts_servers", "resume starts them", TARGET_STARTS_S),
        ):
            c = r[key]
            out.append(
                (
                    f"`labwright resume` -> next action after {n:,} steps, {label}",
                    f"{c['to_action_s']:.2f} s",
                    f"<= {target:.0f} s",
                    "yes" if c["to_action_s"] <= target else "NO",
                )
            )
            out.append(
                (
                    "  to the answer / to exit (load before; CPU to exit, with its servers)",
                    f"{c['to_answer_s']:.2f} / {c['to_exit_s']:.2f} s ({c['load_before']:.1f}; "
                    f"{c['cpu_to_exit_s']:.2f} s)",
                    "figure",
                    "-",
                )
            )
        ip = r["in_process"]
        out.append(
            (
                "  in process: runner start / checkpoint load / resume -> dispatch",
                f"{ip['server_startup_ms']:.0f} / {ip['checkpoint_load_ms']:.0f} / "
                f"{ip['to_dispatch_ms']:.0f} ms",
                "figure",
                "-",
            )
        )
    return out


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, action="append", help="steps done (repeatable)")
    parser.add_argument("--json", metavar="PATH", type=Path)
    args = parser.parse_args(argv)

    def log(message: str) -> None:
        print(f"bench: {message}", file=sys.stderr, flush=True)

    env = dict(os.environ)
    results = {n: asyncio.run(bench_resume(n, env, log)) for n in args.steps or [1000]}
    for n, r in sorted(results.items()):
        for row in long_runs.rows({n: r["long"]}) + rows({n: r}):
            print(f"{row[0]:<72} {row[1]:>20}  {row[2]:<8} {row[3]}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
