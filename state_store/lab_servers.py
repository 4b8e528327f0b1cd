"""Where the lab's long-lived instrument servers are (``labwright lab up``): one record each.

A record is a JSON file in ``<state dir>/lab-servers/`` (directory 0700, files 0600: they
hold the bearer token): the instrument, the server's process id, its 127.0.0.1 port and
token, the lab file it serves and that file's sha256, and its log file. ``run`` and
``resume`` attach to a server whose record says it is up; a record is believed only while
its process is alive, is that server, and accepts connections on its port.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import time
from dataclasses import asdict, dataclass
from pathlib import Path

DIRNAME = "lab-servers"


@dataclass(frozen=True)
class ServerRecord:
    """One running instrument server."""

    instrument: str
    pid: int
    host: str
    port: int
    token: str
    config: str
    config_sha256: str
    log: str
    started_at: float

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/mcp"


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class LabServers:
    """The records of one state directory."""

    def __init__(self, state_dir: Path) -> None:
        self.dir = Path(state_dir) / DIRNAME

    def log_path(self, instrument: str) -> Path:
        return self.dir / f"{instrument}.log"

    def _path(self, instrument: str) -> Path:
        return self.dir / f"{instrument}.json"

    def write(self, record: ServerRecord) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        self.dir.chmod(0o700)
        tmp = self._path(record.instrument).with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump(asdict(record), f)
        tmp.replace(self._path(record.instrument))

    def read(self, instrument: str) -> ServerRecord | None:
        try:
            data = json.loads(self._path(instrument).read_text())
            return ServerRecord(**data)
        except (OSError, ValueError, TypeError):
            return None

    def all(self) -> list[ServerRecord]:
        if not self.dir.is_dir():
            return []
        found = (self.read(p.stem) for p in sorted(self.dir.glob("*.json")))
        return [r for r in found if r is not None]

    def remove(self, instrument: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self._path(instrument).unlink()


def is_running(record: ServerRecord) -> bool:
    """The record's process is alive and is that instrument's server (not a reused pid)."""
    try:
        cmdline = Path(f"/proc/{record.pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    args = [a.decode(errors="replace") for a in cmdline]
    return "serve" in args and record.instrument in args and str(record.port) in args


def answers(record: ServerRecord, timeout_s: float = 0.5) -> bool:
    """Its port accepts a connection."""
    try:
        with socket.create_connection((record.host, record.port), timeout=timeout_s):
            return True
    except OSError:
        return False


def is_up(record: ServerRecord) -> bool:
    return is_running(record) and answers(record)


def uptime_s(record: ServerRecord) -> float:
    return max(0.0, time.time() - record.started_at)
