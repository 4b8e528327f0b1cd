#!/usr/bin/env python3
"""Start-up race: N instrument servers started together on a fresh state directory.

Each trial writes a lab of eight instruments (two of each kind) whose state directory does not
exist yet, starts one ``labwright serve <id> --transport http`` per instrument at the same
moment (127.0.0.1, a bearer token), then calls ``get_state`` on every server through a real
MCP client session. A trial fails if any server exits, never listens, or answers with an
error; the first lines of the failing server's log are printed.

Servers are forked from this (single-threaded) process after it has imported everything a
server needs, so the eight start within a millisecond of each other: a harsher race than
eight exec'd processes, whose imports spread them out. ``--exec`` runs the real
``python -m labwright.cli serve`` instead (slower: each process imports on its own).

Usage::

    .venv/bin/python bench/startup_race.py [--trials 200] [--servers 8] [--exec] [--json PATH]

Exit status 0 only when every trial passed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
TOKEN = "startup-race-token"
READY_S = 60.0

_LH = {
    "kind": "liquid_handler",
    "deck": "STARLetDeck",
    "num_channels": 8,
    "carriers": [
        {"id": "tip_carrier", "type": "TIP_CAR_480_A00", "rails": 1},
        {"id": "plate_carrier", "type": "PLT_CAR_L5AC_A00", "rails": 9},
    ],
}


def _liquid_handler(n: int) -> dict[str, Any]:
    return {
        **_LH,
        "id": f"lh{n}",
        "labware": [
            {
                "id": f"tips_{n}",
                "type": "hamilton_96_tiprack_300uL",
                "carrier": "tip_carrier",
                "slot": 0,
            },
            {
                "id": f"reservoir_{n}",
                "type": "nest_12_troughplate_15000uL_Vb",
                "carrier": "plate_carrier",
                "slot": 0,
            },
            {
                "id": f"plate_{n}",
                "type": "cor_96_wellplate_360uL_Fb",
                "carrier": "plate_carrier",
                "slot": 1,
            },
        ],
        "liquids": [
            {"labware": f"reservoir_{n}", "wells": "A1", "liquid": "dye", "volume_ul": 10000}
        ],
    }


def lab_data(state_dir: Path, servers: int) -> dict[str, Any]:
    """A lab of ``servers`` instruments, cycling through the four kinds."""
    instruments: list[dict[str, Any]] = []
    for i in range(servers):
        n, kind = i // 4 + 1, i % 4
        if kind == 0:
            instruments.append(_liquid_handler(n))
        elif kind == 1:
            instruments.append({"id": f"reader{n}", "kind": "plate_reader"})
        elif kind == 2:
            instruments.append({"id": f"hs{n}", "kind": "heater_shaker"})
        else:
            instruments.append(
                {
                    "id": f"arm{n}",
                    "kind": "plate_mover",
                    "locations": [f"lh{n}:plate_carrier:1", f"hotel:{n}"],
                    "plates": [f"plate_{n}"]
                    if any(x["id"] == f"lh{n}" for x in instruments)
                    else [],
                }
            )
    return {"lab": "race-lab", "state_dir": str(state_dir), "instruments": instruments}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _preload() -> None:
    """Import everything a server needs before forking, so the children start at once."""
    import mcp.client.streamable_http  # noqa: F401
    import uvicorn  # noqa: F401

    import device_servers.heater_shaker.driver
    import device_servers.lab
    import device_servers.liquid_handler.driver
    import device_servers.plate_mover.driver
    import device_servers.plate_reader.driver
    import device_servers.transport  # noqa: F401


def _fork_server(lab_file: Path, instrument: str, port: int, log: Path, gate: int) -> int:
    """A forked server that waits at ``gate`` (a pipe) until all its peers are forked."""
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        from device_servers.lab import load
        from device_servers.transport import serve_http

        lab = load(lab_file)
        os.read(gate, 1)
        serve_http(
            lab.instrument(instrument),
            lab.db_path,
            lab.world_path,
            host="127.0.0.1",
            port=port,
            token=TOKEN,
        )
        code = 0
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stderr.flush()
        os._exit(code)


def _exec_server(lab_file: Path, instrument: str, port: int, log: Path, gate: int) -> int:
    args = [
        sys.executable,
        "-m",
        "labwright.cli",
        "serve",
        instrument,
        "--config",
        str(lab_file),
        "--transport",
        "http",
        "--port",
        str(port),
        "--token",
        TOKEN,
    ]
    with log.open("a") as out:
        proc = subprocess.Popen(
            args, cwd=REPO, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT
        )
    return proc.pid


def _dead(pid: int) -> bool:
    """A child of the parent that exited (a zombie) or is gone; readable from a sibling."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in {"Z", "X"}


async def _check_all(ports: dict[str, int], pids: dict[str, int]) -> dict[str, str]:
    """``get_state`` on every server; instrument -> "ok" or what went wrong."""
    import anyio
    from mcp import ClientSession
    from mcp.client.streamable_http import streamablehttp_client

    async def one(instrument: str, port: int, results: dict[str, str]) -> None:
        deadline = time.monotonic() + READY_S
        while True:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if _dead(pids[instrument]):
                results[instrument] = "exited before listening"
                return
            if time.monotonic() > deadline:
                results[instrument] = f"not listening after {READY_S:.0f} s"
                return
            await anyio.sleep(0.02)
        try:
            with anyio.fail_after(READY_S):
                async with (
                    streamablehttp_client(
                        f"http://127.0.0.1:{port}/mcp",
                        headers={"Authorization": f"Bearer {TOKEN}"},
                    ) as (read, write, _),
                    ClientSession(read, write) as session,
                ):
                    await session.initialize()
                    result = await session.call_tool("get_state", {})
                    payload = result.structuredContent or {}
                    results[instrument] = "ok" if payload.get("ok") else f"error {payload}"
        except BaseException as exc:  # a refused connection, a reset: the server died
            results[instrument] = f"{type(exc).__name__}: {exc}"

    results: dict[str, str] = {}
    async with anyio.create_task_group() as tg:
        for instrument, port in ports.items():
            tg.start_soon(one, instrument, port, results)
    return results


def _checker(ports: dict[str, int], pids: dict[str, int]) -> dict[str, str]:
    """Run the client checks in a forked child, so this process never starts a thread."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        try:
            import asyncio

            out = json.dumps(asyncio.run(_check_all(ports, pids))).encode()
        except BaseException as exc:
            out = json.dumps({"checker": repr(exc)}).encode()
        with os.fdopen(write_fd, "wb") as w:
            w.write(out)
        os._exit(0)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as r:
        data = r.read()
    os.waitpid(pid, 0)
    return dict(json.loads(data or b'{"checker": "no answer"}'))


def _stop(pids: dict[str, int]) -> dict[str, int]:
    """SIGTERM every server, bounded wait, SIGKILL stragglers; instrument -> exit status."""
    for pid in pids.values():
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    status: dict[str, int] = {}
    deadline = time.monotonic() + 15
    pending = dict(pids)
    while pending:
        for name, pid in list(pending.items()):
            done, code = os.waitpid(pid, os.WNOHANG)
            if done:
                status[name] = os.waitstatus_to_exitcode(code)
                del pending[name]
        if pending and time.monotonic() > deadline:
            for pid in pending.values():
                os.kill(pid, signal.SIGKILL)
            deadline = float("inf")
        time.sleep(0.01)
    return status


def trial(work: Path, servers: int, use_exec: bool) -> tuple[bool, str]:
    """One trial on a fresh state directory; (passed, what failed)."""
    state = work / "state"
    lab_file = work / "lab.yaml"
    lab_file.write_text(yaml.safe_dump(lab_data(state, servers)))
    ids = [inst["id"] for inst in lab_data(state, servers)["instruments"]]
    ports = {i: free_port() for i in ids}
    start = _exec_server if use_exec else _fork_server
    gate_r, gate_w = os.pipe()
    pids = {i: start(lab_file, i, ports[i], work / f"{i}.log", gate_r) for i in ids}
    os.write(gate_w, b"x" * len(ids))  # open the gate: every forked server starts now
    os.close(gate_r)
    os.close(gate_w)
    results = _checker(ports, pids)
    codes = _stop(pids)
    bad = {i: r for i, r in results.items() if r != "ok"}
    # SIGTERM is a clean uvicorn shutdown (0); -15 means it died of the signal before handling
    # it, which happens only when it was killed while still starting: count it only beside a
    # failed check.
    if not bad:
        return True, ""
    lines = []
    for name, why in sorted(bad.items()):
        log = work / f"{name}.log"
        text = log.read_text(errors="replace").splitlines() if log.exists() else []
        errors = [ln.strip() for ln in text if "Error" in ln and not ln.startswith(" ")]
        lines.append(f"{name}: {why} (exit {codes.get(name)}) {' | '.join(errors[-2:])}")
    return False, "\n    ".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--servers", type=int, default=8)
    ap.add_argument(
        "--exec",
        dest="use_exec",
        action="store_true",
        help="exec `python -m labwright.cli serve` instead of forking",
    )
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    if not args.use_exec:
        _preload()
    failures: list[str] = []
    began = time.monotonic()
    for n in range(1, args.trials + 1):
        with tempfile.TemporaryDirectory(prefix="labwright-race-") as tmp:
            ok, why = trial(Path(tmp), args.servers, args.use_exec)
        if not ok:
            failures.append(why)
            print(f"trial {n}: FAILED\n    {why}", flush=True)
        elif n % 10 == 0 or n == args.trials:
            print(f"trial {n}/{args.trials}: {n - len(failures)} passed", flush=True)
    elapsed = time.monotonic() - began
    summary = {
        "trials": args.trials,
        "servers": args.servers,
        "mode": "exec" if args.use_exec else "fork",
        "passed": args.trials - len(failures),
        "failed": len(failures),
        "seconds": round(elapsed, 1),
        "load_average": os.getloadavg()[0],
    }
    print(
        f"start-up race: {summary['passed']} of {args.trials} trials passed "
        f"({args.servers} servers each, {summary['mode']}, {elapsed:.0f} s)"
    )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(summary, indent=2))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
