"""Shared test harness: a small simulated lab in a temp dir, a started runtime, and a real MCP
client session connected in memory to the instrument's server."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml
from mcp import ClientSession
from mcp.shared.memory import create_connected_server_and_client_session

from device_servers.factory import open_runtime
from device_servers.lab import LabConfig, load
from device_servers.runtime import InstrumentRuntime
from device_servers.server import build_server
from device_servers.sim.world import SimWorld

ROOT = Path(__file__).resolve().parent.parent

LAB: dict[str, Any] = {
    "lab": "test-lab",
    "instruments": [
        {
            "id": "lh1",
            "kind": "liquid_handler",
            "deck": "STARLetDeck",
            "num_channels": 8,
            "command_timeout_s": 2,
            "carriers": [
                {"id": "tip_carrier", "type": "TIP_CAR_480_A00", "rails": 1},
                {"id": "plate_carrier", "type": "PLT_CAR_L5AC_A00", "rails": 9},
            ],
            "labware": [
                {
                    "id": "tips_1",
                    "type": "hamilton_96_tiprack_300uL",
                    "carrier": "tip_carrier",
                    "slot": 0,
                },
                {
                    "id": "reservoir",
                    "type": "nest_12_troughplate_15000uL_Vb",
                    "carrier": "plate_carrier",
                    "slot": 0,
                },
                {
                    "id": "plate_1",
                    "type": "cor_96_wellplate_360uL_Fb",
                    "carrier": "plate_carrier",
                    "slot": 1,
                },
            ],
            "liquids": [
                {"labware": "reservoir", "wells": "A1", "liquid": "dye", "volume_ul": 10000},
                {"labware": "plate_1", "wells": "B1", "liquid": "buffer", "volume_ul": 300},
            ],
            "policy": {"protected_labware": [], "rules": []},
        }
    ],
}


def write_lab(tmp: Path, patch: Callable[[dict[str, Any]], None] | None = None) -> Path:
    """Write a lab file (optionally patched) with its state under ``tmp/state``."""
    data = json.loads(json.dumps(LAB))
    data["state_dir"] = str(tmp / "state")
    if patch is not None:
        patch(data)
    path = tmp / "lab.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _no_state_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LABWRIGHT_STATE_DIR", raising=False)
    monkeypatch.delenv("LABWRIGHT_CONFIG", raising=False)


@pytest.fixture
def lab_file(tmp_path: Path) -> Path:
    return write_lab(tmp_path)


@pytest.fixture
def lab(lab_file: Path) -> LabConfig:
    return load(lab_file)


@pytest.fixture
async def runtime(lab: LabConfig) -> AsyncIterator[InstrumentRuntime]:
    async with open_runtime(lab.instrument("lh1"), lab.db_path, lab.world_path) as rt:
        yield rt


@pytest.fixture
async def session(runtime: InstrumentRuntime) -> AsyncIterator[ClientSession]:
    async with create_connected_server_and_client_session(build_server(runtime)) as s:
        yield s


@pytest.fixture
def world(lab: LabConfig) -> SimWorld:
    return SimWorld(lab.world_path)


async def call(session: ClientSession, tool: str, **args: Any) -> dict[str, Any]:
    """Call a tool; return its structured payload (ok or error) and check both forms agree."""
    result = await session.call_tool(tool, args)
    payload = result.structuredContent
    assert payload is not None, f"{tool} returned no structured content"
    assert json.loads(result.content[0].text) == payload  # type: ignore[union-attr]
    assert bool(result.isError) == (payload["ok"] is False)
    return dict(payload)


@contextlib.asynccontextmanager
async def served_instrument(
    tmp_path: Path, entry: dict[str, Any], place: str | None = None
) -> AsyncIterator[tuple[ClientSession, InstrumentRuntime, SimWorld, Path]]:
    """The test lab plus the instrument ``entry`` (its lab-file entry), served over MCP. With
    ``place``, plate_1 sits there (the world says so) and the server has read it back."""

    def patch(data: dict[str, Any]) -> None:
        data["instruments"].append(entry)

    lab_file = write_lab(tmp_path, patch)
    lab = load(lab_file)
    world = SimWorld(lab.world_path)
    if place is not None:
        world.place_plate("plate_1", place)
    async with (
        open_runtime(lab.instrument(entry["id"]), lab.db_path, lab.world_path) as rt,
        create_connected_server_and_client_session(build_server(rt)) as session,
    ):
        if place is not None:
            assert (await call(session, "read_back"))["ok"] is True
        yield session, rt, world, lab_file


async def execute(session: ClientSession, tool: str, action_id: str, **args: Any) -> dict[str, Any]:
    """An executed (not dry-run) call under ``action_id``."""
    return await call(session, tool, **args, dry_run=False, action_id=action_id)


async def finished_run(session: ClientSession, run_id: str, timeout: float = 20) -> dict[str, Any]:
    """Poll run_events (as a client would) until the run is over; return status and events."""
    events: list[dict[str, Any]] = []
    seq = 0
    with anyio.fail_after(timeout):
        while True:
            page = await call(session, "run_events", run_id=run_id, since_seq=seq)
            events += page["events"]
            seq = page["next_seq"]
            if page["status"] not in ("pending", "running") and not page["events"]:
                return {"status": page["status"], "events": events}
            await anyio.sleep(0.02)


def error_code(payload: dict[str, Any]) -> str:
    assert payload["ok"] is False, payload
    return str(payload["error"]["code"])


def labwright(
    *args: str, env: dict[str, str] | None = None, timeout: float = 120, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the real ``labwright`` entry point in a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "labwright", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        input=input,
        cwd=ROOT,
    )


def modules_imported_by(*args: str) -> set[str]:
    """Every module ``python -X importtime -m labwright ARGS`` imports (stdin closed), by
    name. ``importlib.import_module`` calls are not logged: only import statements."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "labwright", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = [x for x in proc.stderr.splitlines() if x.startswith("import time:")]
    return {x.rsplit("|", 1)[1].strip() for x in lines[1:]}


@pytest.fixture(scope="session")
def web_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One ``labwright web`` server on the example lab, shared by the API and page tests
    (never e-stopped: the e-stop tests have their own)."""
    from _web import serve_web, web_lab_file

    with serve_web(web_lab_file(tmp_path_factory.mktemp("web"))) as served:
        yield served


@pytest.fixture(scope="session")
def postgres_server_url() -> Iterator[str]:
    """A real PostgreSQL server for the session (skips where PostgreSQL is not installed)."""
    from _postgres import postgres_server

    with postgres_server() as url:
        yield url


@pytest.fixture
def pg_url(postgres_server_url: str) -> str:
    """A fresh database on the session's PostgreSQL server."""
    from _postgres import fresh_database

    return fresh_database(postgres_server_url)
