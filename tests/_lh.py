"""Helpers shared by the liquid-handler tool tests: world snapshots, run polling, a second lab."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import call, write_lab
from mcp import ClientSession
from mcp.shared.memory import create_connected_server_and_client_session

from device_servers.factory import open_runtime
from device_servers.lab import load
from device_servers.server import build_server
from device_servers.sim.world import SimWorld

PLATES = ("plate_1", "reservoir")
RACK = "tips_1"
FINISHED = ("completed", "failed", "cancelled", "interrupted")
SLOW = {"kind": "delay", "times": -1, "params": {"seconds": 0.05}}

# One tip, 50 uL from the reservoir into plate_1:A1, tip dropped: four physical operations.
TRANSFER = {
    "source": "reservoir",
    "source_well": "A1",
    "destination": "plate_1",
    "destination_wells": ["A1"],
    "volume_ul": 50,
}


def world_contents(world: SimWorld) -> dict[str, Any]:
    """Everything physical about lh1's deck: wells, tips, channels."""
    return {
        "wells": {lw: world.wells(lw) for lw in PLATES},
        "tips": world.tips(RACK),
        "channels": world.channels("lh1"),
    }


def believed(state: dict[str, Any]) -> dict[str, Any]:
    """The parts of a get_state snapshot that describe the deck (not flags or timestamps)."""
    return {"labware": state["labware"], "channels": state["channels"]}


def assert_world_matches_twin(state: dict[str, Any], world: SimWorld) -> None:
    """Belief (a get_state snapshot) and ground truth agree on volumes, tips and channels."""
    for lw in PLATES:
        twin = {n: w["volume_ul"] for n, w in state["labware"][lw]["wells"].items()}
        real = {n: w["volume_ul"] for n, w in world.wells(lw).items() if w["volume_ul"] > 1e-6}
        assert twin == pytest.approx(real), lw
    real_tips = sorted(s for s, present in world.tips(RACK).items() if present)
    assert sorted(state["labware"][RACK]["tips_present"]) == real_tips
    real_channels = world.channels("lh1")
    for chan, real in zip(state["channels"], real_channels, strict=True):
        assert (chan["tip"] is None) == (real["tip"] is None), chan["channel"]
        assert chan["volume_ul"] == pytest.approx(sum(real["contents"].values()))


async def twin_state(session: ClientSession) -> dict[str, Any]:
    payload = await call(session, "get_state")
    assert payload["ok"] is True
    return dict(payload["state"])


async def wait_for_run(
    session: ClientSession,
    run_id: str,
    statuses: tuple[str, ...] = FINISHED,
    timeout: float = 10,
) -> dict[str, Any]:
    """Poll get_run until the run reaches one of ``statuses`` (bounded)."""
    with anyio.fail_after(timeout):
        while True:
            info = await call(session, "get_run", run_id=run_id)
            assert info["ok"] is True, info
            if info["status"] in statuses:
                return info
            await anyio.sleep(0.01)


async def wait_for_event(
    session: ClientSession, run_id: str, event_type: str, timeout: float = 10
) -> None:
    """Poll run_events until an event of ``event_type`` has been logged (bounded)."""
    with anyio.fail_after(timeout):
        while True:
            page = await call(session, "run_events", run_id=run_id, max=1000)
            if any(e["type"] == event_type for e in page["events"]):
                return
            await anyio.sleep(0.01)


async def all_events(session: ClientSession, run_id: str, page: int = 100) -> list[dict[str, Any]]:
    """Every event of a run, read ``page`` at a time from since_seq=0."""
    events: list[dict[str, Any]] = []
    since = 0
    with anyio.fail_after(10):
        while True:
            got = await call(session, "run_events", run_id=run_id, since_seq=since, max=page)
            assert got["ok"] is True, got
            if not got["events"]:
                return events
            assert len(got["events"]) <= page
            events.extend(got["events"])
            since = got["next_seq"]


@contextlib.asynccontextmanager
async def other_lab(
    tmp: Path, patch: Callable[[dict[str, Any]], None]
) -> AsyncIterator[tuple[ClientSession, SimWorld]]:
    """A session on lh1 of a patched copy of the test lab, with its world."""
    tmp.mkdir(parents=True, exist_ok=True)
    lab = load(write_lab(tmp, patch))
    async with (
        open_runtime(lab.instrument("lh1"), lab.db_path, lab.world_path) as rt,
        create_connected_server_and_client_session(build_server(rt)) as session,
    ):
        yield session, SimWorld(lab.world_path)
