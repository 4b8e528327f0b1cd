"""Long-lived instrument servers: start them in the background, stop them, say how they are.

``labwright lab up`` starts every local instrument of the lab as ``python -m labwright serve
<id> --transport http`` on 127.0.0.1 with a generated bearer token, in its own session (it
outlives the command), logging to ``<state dir>/lab-servers/<id>.log``, and records where it
is (:mod:`state_store.lab_servers`). ``run`` and ``resume`` then attach instead of starting
servers of their own. ``lab down`` stops them (SIGTERM, then SIGKILL after a grace period).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from device_servers.lab import LabConfig
from state_store.lab_servers import (
    LabServers,
    ServerRecord,
    answers,
    file_sha256,
    is_running,
    is_up,
)

HOST = "127.0.0.1"
START_TIMEOUT_S = 30.0
STOP_GRACE_S = 10.0
PORT_TRIES = 3


@dataclass(frozen=True)
class Outcome:
    """What became of one instrument's server."""

    instrument: str
    what: str  # started | already up | stopped | not running | failed
    record: ServerRecord | None = None
    detail: str = ""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def _spawn(
    lab: LabConfig, instrument: str, servers: LabServers
) -> tuple[subprocess.Popen[bytes], ServerRecord]:
    assert lab.source is not None
    token = secrets.token_urlsafe(24)
    port = _free_port()
    log = servers.log_path(instrument)
    log.parent.mkdir(parents=True, exist_ok=True)
    args = [sys.executable, "-m", "labwright", "serve", instrument, "--config", str(lab.source)]
    args += ["--transport", "http", "--host", HOST, "--port", str(port)]
    env = {**os.environ, "LABWRIGHT_TOKEN": token, "LABWRIGHT_STATE_DIR": str(lab.state_path)}
    with log.open("ab") as sink:
        proc = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,  # its own session: it outlives `lab up` and its terminal
        )
    record = ServerRecord(
        instrument=instrument,
        pid=proc.pid,
        host=HOST,
        port=port,
        token=token,
        config=str(lab.source),
        config_sha256=file_sha256(lab.source),
        log=str(log),
        started_at=time.time(),
    )
    return proc, record


def _last_line(log: Path) -> str:
    with contextlib.suppress(OSError):
        lines = [x for x in log.read_text(errors="replace").splitlines() if x.strip()]
        if lines:
            return lines[-1].strip()
    return "no output"


def up(lab: LabConfig) -> list[Outcome]:
    """Start every local instrument that is not up yet, side by side; wait until each answers."""
    servers = LabServers(lab.state_path)
    outcomes: dict[str, Outcome] = {}
    pending: dict[str, tuple[subprocess.Popen[bytes], ServerRecord, int]] = {}
    for inst in lab.instruments:
        if inst.url:
            continue  # a remote instrument: served where it is
        old = servers.read(inst.id)
        if old is not None and is_up(old):
            outcomes[inst.id] = Outcome(inst.id, "already up", old)
            continue
        proc, record = _spawn(lab, inst.id, servers)
        pending[inst.id] = (proc, record, 1)
    deadline = time.monotonic() + START_TIMEOUT_S
    while pending:
        for name, (proc, record, tries) in list(pending.items()):
            if proc.poll() is not None:  # it exited: a taken port is tried again elsewhere
                del pending[name]
                if tries < PORT_TRIES and "address already in use" in _last_line(Path(record.log)):
                    proc2, record2 = _spawn(lab, name, servers)
                    pending[name] = (proc2, record2, tries + 1)
                else:
                    why = f"exited {proc.returncode}: {_last_line(Path(record.log))}"
                    outcomes[name] = Outcome(name, "failed", None, why)
            elif answers(record, timeout_s=0.2):
                servers.write(record)
                outcomes[name] = Outcome(name, "started", record)
                del pending[name]
        if pending and time.monotonic() > deadline:
            for name, (proc, _record, _tries) in pending.items():
                _stop_pid(proc.pid)
                outcomes[name] = Outcome(
                    name, "failed", None, f"no answer in {START_TIMEOUT_S:.0f} s"
                )
            break
        if pending:
            time.sleep(0.05)
    return [outcomes[i.id] for i in lab.instruments if i.id in outcomes]


def _stop_pid(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    end = time.monotonic() + STOP_GRACE_S
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def down(lab: LabConfig) -> list[Outcome]:
    """Stop every recorded server of the lab and forget its record."""
    servers = LabServers(lab.state_path)
    out = []
    for record in servers.all():
        if is_running(record):
            _stop_pid(record.pid)
            out.append(Outcome(record.instrument, "stopped", record))
        else:
            out.append(Outcome(record.instrument, "not running", record))
        servers.remove(record.instrument)
    return out


def status(lab: LabConfig) -> list[Outcome]:
    """How each instrument's server is: up, down (a stale record), or not started."""
    servers = LabServers(lab.state_path)
    out = []
    sha = file_sha256(lab.source) if lab.source is not None else ""
    for inst in lab.instruments:
        record = servers.read(inst.id)
        if inst.url:
            out.append(Outcome(inst.id, "remote", None, inst.url))
        elif record is None:
            out.append(Outcome(inst.id, "not started"))
        elif not is_running(record):
            out.append(Outcome(inst.id, "down", record, "its process is gone"))
        elif not answers(record):
            out.append(Outcome(inst.id, "not answering", record, f"port {record.port}"))
        elif record.config_sha256 != sha:
            out.append(Outcome(inst.id, "stale", record, "serves an older version of the lab file"))
        else:
            out.append(Outcome(inst.id, "up", record))
    return out
