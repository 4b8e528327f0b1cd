"""``labwright web`` as a real subprocess on the example lab (four simulated instruments, fast
clocks), a person per role with a token, and bounded waits on a run's live status stream."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import yaml
from conftest import ROOT

from device_servers.lab import load
from labwright.identity import people_for

ROLES = ("approver", "operator", "viewer")
START_S = 90.0


@dataclass
class WebLab:
    url: str
    lab_file: Path
    tokens: dict[str, str]
    proc: subprocess.Popen[str]

    def client(self, role: str | None = None, token: str | None = None) -> httpx.Client:
        """An HTTP client as a person of ``role`` (or with ``token``; neither: anonymous)."""
        headers = {}
        if role is not None:
            token = self.tokens[role]
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        return httpx.Client(base_url=self.url, headers=headers, timeout=60.0)

    def wait(
        self, run_id: str, until: Callable[[dict[str, Any]], bool], timeout: float = 90.0
    ) -> dict[str, Any]:
        """The run's status once ``until`` holds, read from its server-sent event stream."""
        deadline = time.monotonic() + timeout
        with (
            self.client("viewer") as http,
            http.stream(
                "GET", f"/api/runs/{run_id}/stream", timeout=httpx.Timeout(timeout, read=15.0)
            ) as stream,
        ):
            assert stream.status_code == 200, stream.read()
            event = None
            for line in stream.iter_lines():
                if time.monotonic() > deadline:
                    break
                if line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("data: ") and event == "status":
                    status = json.loads(line[6:])
                    if until(status):
                        return status
        raise TimeoutError(f"run {run_id} did not reach the expected state in {timeout:.0f} s")

    def settled(self, run_id: str, *statuses: str, timeout: float = 90.0) -> dict[str, Any]:
        """The run's status once it is one of ``statuses`` and nothing is driving it."""
        return self.wait(
            run_id, lambda s: s["status"] in statuses and not s["driving"], timeout=timeout
        )


def web_lab_file(tmp: Path, hs_time_scale: float = 600) -> Path:
    """The example lab with its state in ``tmp``; plate moves and shakes run fast."""
    data: dict[str, Any] = yaml.safe_load((ROOT / "examples" / "lab.yaml").read_text())
    data["state_dir"] = str(tmp / "state")
    for inst in data["instruments"]:
        if inst["kind"] == "plate_mover":
            inst["time_scale"] = 400
        if inst["kind"] == "heater_shaker":
            inst["time_scale"] = hs_time_scale
    path = tmp / "lab.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@contextmanager
def serve_web(lab_file: Path) -> Iterator[WebLab]:
    """Tokens for one person per role, then ``labwright web --port 0`` until the block ends."""
    lab = load(lab_file)
    people = people_for(lab)
    tokens = {role: people.add(f"{role}-1", role) for role in ROLES}
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("LABWRIGHT_STATE_DIR", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "labwright", "web", "--port", "0", "-c", str(lab_file)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=ROOT,
        env=env,
    )
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(ln) for ln in proc.stdout], daemon=True).start()  # type: ignore[union-attr]
    seen: list[str] = []
    deadline = time.monotonic() + START_S
    url = None
    while url is None:
        try:
            line = lines.get(timeout=0.5)
        except queue.Empty:
            if proc.poll() is None and time.monotonic() < deadline:
                continue
            proc.kill()
            raise TimeoutError("labwright web did not start:\n" + "".join(seen)) from None
        seen.append(line)
        if line.startswith("listening on "):
            url = line.split()[-1].rstrip("/")
    try:
        yield WebLab(url, lab_file, tokens, proc)
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
