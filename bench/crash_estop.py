#!/usr/bin/env python3
"""Crash harness, second part: an e-stop pressed while a resumed run completes an action in doubt.

The liquid handler is served over streamable HTTP by a process of its own, so a person can
press its e-stop from outside the task process, as at a real instrument. Each round:

1. ``labwright run --yes`` of a one-row dilution; mid-step the server and the task process are
   killed -9 together (a machine crash), and the server is started again;
2. ``labwright resume``: as it says it completes the in-doubt action, the e-stop is pressed;
   the completion is interrupted and the run stops and asks a person (ESTOP_ACTIVE);
3. a person resets the e-stop (``reset_estop``, approved with ``labwright approve-action``)
   and answers ``labwright resume --decision retry``;
4. judged from the world and the ledgers as the crash harness judges: the world equals an
   uninterrupted run's, no action executed twice, none lost, the run done.

A round whose kill left nothing in doubt (it fell between two actions) is counted and run again.

Usage::

    .venv/bin/python bench/crash_estop.py [--rounds 3] [--seed 1]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import yaml
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import crash_harness as harness  # noqa: E402

from agents.device.observation import structured  # noqa: E402
from device_servers.lab import load  # noqa: E402
from state_store import TaskRuns, connect  # noqa: E402

READY_S = 60.0
OP_DELAY_S = 0.15  # per operation: a completion lasts long enough to be cut by the e-stop


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    """``labwright serve lh1 --transport http`` in a process group of its own."""

    def __init__(self, lab: Path, port: int, log: Path) -> None:
        self.lab, self.port, self.log = lab, port, log
        self.url = f"http://127.0.0.1:{port}/mcp"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        argv = harness.labwright_argv(
            "serve", "lh1", "-c", str(self.lab), "--transport", "http", "--port", str(self.port)
        )
        with self.log.open("a") as out:
            self.proc = subprocess.Popen(
                argv,
                cwd=ROOT,
                env=harness._env(),
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        deadline = time.monotonic() + READY_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the lh1 server exited: see {self.log}")
            with socket.socket() as sock:
                sock.settimeout(0.2)
                if sock.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.05)
        raise RuntimeError(f"the lh1 server did not listen within {READY_S} s")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)


async def _call(url: str, tool: str, **args: Any) -> dict[str, Any]:
    async with (
        streamablehttp_client(url, timeout=10) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        return structured(await session.call_tool(tool, args))


def call(url: str, tool: str, **args: Any) -> dict[str, Any]:
    """One tool call of a person at the instrument (its own MCP session)."""
    return asyncio.run(_call(url, tool, **args))


def crash_mid_step(server: Server, argv: list[str], delay: float) -> harness.Segment:
    """The task process runs; ``delay`` after its first step the server and it are killed."""
    seg = harness.Segment(argv)
    proc = harness.spawn(argv)
    started = threading.Event()

    def reader() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            seg.lines.append(line.rstrip("\n"))
            if harness.STEP_LINE.match(line):
                started.set()

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    if started.wait(harness.PROCESS_TIMEOUT_S):
        time.sleep(delay)
    server.kill()  # first the instrument, so the action under way is left in doubt
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        seg.killed = True
    proc.wait(timeout=harness.PROCESS_TIMEOUT_S)
    thread.join(timeout=10)
    return seg


def resume_pressing_estop(server: Server, argv: list[str]) -> tuple[harness.Segment, bool]:
    """``resume``; as it completes an in-doubt action, a person presses the e-stop."""
    seg = harness.Segment(argv)
    pressed = threading.Event()
    proc = harness.spawn(argv)

    def reader() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            seg.lines.append(line.rstrip("\n"))
            if harness.COMPLETING in line and not pressed.is_set():
                pressed.set()
                call(server.url, "emergency_stop")

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    seg.rc = proc.wait(timeout=harness.PROCESS_TIMEOUT_S)
    thread.join(timeout=10)
    return seg, pressed.is_set()


def one_round(directory: Path, base: Path, rng: random.Random) -> dict[str, Any]:
    """One crash, then an e-stop during its recovery, then a person's reset and retry."""
    lab = harness.write_lab(directory, OP_DELAY_S)
    port = _port()
    data = yaml.safe_load(lab.read_text())
    data["instruments"][0]["url"] = f"http://127.0.0.1:{port}/mcp"
    lab.write_text(yaml.safe_dump(data, sort_keys=False))
    server = Server(lab, port, directory / "server.log")
    cfg = ("-c", str(lab))
    segments: list[harness.Segment] = []
    try:
        server.start()
        run = harness.labwright_argv(
            "run", harness.QUICK_REQUEST, "--yes", "--run-id", harness.RUN_ID, *cfg
        )
        segments.append(crash_mid_step(server, run, rng.uniform(0.2, 1.0)))
        server.start()
        seg, pressed = resume_pressing_estop(
            server, harness.labwright_argv("resume", harness.RUN_ID, *cfg)
        )
        segments.append(seg)
        asked = [ln for ln in seg.lines if "ESTOP_ACTIVE" in ln]
        lost = [ln for ln in seg.lines if "CONNECTION_LOST" in ln]
        if pressed:
            reset = f"{harness.RUN_ID}/person/reset-estop"
            refused = call(server.url, "reset_estop", action_id=reset)
            approve = harness.run_segment(
                harness.labwright_argv("approve-action", "lh1", reset, *cfg), None, False
            )
            done = call(server.url, "reset_estop", action_id=reset)
            retry = harness.labwright_argv("resume", harness.RUN_ID, "--decision", "retry", *cfg)
            segments.append(harness.run_segment(retry, None, False))
            reset_ok = (
                (refused.get("error") or {}).get("code") == "APPROVAL_REQUIRED"
                and bool(done.get("ok"))
                and approve.rc == 0
            )
        else:
            reset_ok = True
        verdict = harness.judge(lab, base, segments)
        status = TaskRuns(connect(load(lab).db_path)).get(harness.RUN_ID)
        return {
            "estop_during_recovery": pressed,
            # The e-stop cut into the completion itself (not the step after it).
            "interrupted_the_completion": any("interrupted the command" in ln for ln in seg.lines),
            "asked_estop_active": bool(asked) if pressed else None,
            "said_connection_lost": bool(lost),
            "exit_after_estop": seg.rc,
            "reset_by_a_person": reset_ok,
            "status": None if status is None else status.status,
            "ok": harness.ok(verdict),
            "duplicated": verdict["duplicated"],
            "lost": verdict["lost"],
            "volume_diffs": verdict["volume_diffs"][:5],
        }
    finally:
        server.kill()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=3, help="e-stops pressed during recovery")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", type=Path, help="write the results here")
    args = p.parse_args(argv)
    rng = random.Random(args.seed)
    t0 = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix="labwright-crash-estop-"))
    base = harness.write_lab(tmp / "uninterrupted", 0.05)
    harness.uninterrupted(base, harness.QUICK_REQUEST)
    results: list[dict[str, Any]] = []
    tries = 0
    while (
        sum(r["estop_during_recovery"] for r in results) < args.rounds and tries < 4 * args.rounds
    ):
        tries += 1
        result = one_round(tmp / f"round-{tries}", base, rng)
        results.append(result)
        print(f"  round {tries}: {json.dumps(result)}", file=sys.stderr, flush=True)
    pressed = [r for r in results if r["estop_during_recovery"]]
    good = [
        r
        for r in pressed
        if r["ok"]
        and r["asked_estop_active"]
        and not r["said_connection_lost"]
        and r["exit_after_estop"] == 3
        and r["reset_by_a_person"]
        and r["status"] == "done"
    ]
    summary = {
        "rounds": len(results),
        "e-stops pressed while completing an in-doubt action": len(pressed),
        "rounds whose kill left nothing in doubt": len(results) - len(pressed),
        "of them cutting into the completion itself": sum(
            r["interrupted_the_completion"] for r in pressed
        ),
        "stopped and asked a person with ESTOP_ACTIVE (never CONNECTION_LOST)": sum(
            bool(r["asked_estop_active"]) and not r["said_connection_lost"] for r in pressed
        ),
        "reset by a person, retried, world equals uninterrupted": len(good),
        "duplicated actions": sum(len(r["duplicated"]) for r in results),
        "lost actions": sum(len(r["lost"]) for r in results),
        "wall time (s)": round(time.monotonic() - t0, 1),
    }
    width = max(len(k) for k in summary)
    print("\ncrash harness: e-stops during recovery")
    for k, v in summary.items():
        print(f"  {k:<{width}}  {v}")
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "rounds": results}, default=str))
    passed = bool(pressed) and len(good) == len(pressed) and all(r["ok"] for r in results)
    if passed:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    else:
        print(f"labs kept in {tmp}")
    return 0 if passed else 1


if __name__ == "__main__":
    raise SystemExit(main())
