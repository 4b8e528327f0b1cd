"""An e-stop stops a long command within one operation, without injected delays: every
simulated backend yields to the event loop between operations and checks the stop; a long
validation (a 10,000-step protocol) yields too. (The latency figure: ``make bench-estop``.)"""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
import pytest
from _lh import twin_state
from conftest import call
from mcp import ClientSession

from device_servers.sim.world import SimWorld

pytestmark = pytest.mark.anyio

WELLS = [f"{r}{c}" for r in "ABCDEF" for c in range(1, 13)]  # 72 destinations
# 72 x (pick, aspirate, dispense, 5 x (aspirate, dispense), drop) = 1,008 operations
LONG = {
    "source": "reservoir",
    "source_well": "A1",
    "destination": "plate_1",
    "destination_wells": WELLS,
    "volume_ul": 50,
    "mix_after": 5,
    "mix_volume_ul": 40,
    "new_tip": "always",
}


async def _wait_for_ops(world: SimWorld, n: int) -> None:
    with anyio.fail_after(30):
        while len(world.physical_ops("lh1")) < n:
            await anyio.sleep(0.001)


def _latched_at(events: list[dict[str, Any]]) -> float:
    return min(e["ts"] for e in events if e["type"] == "estop")


async def test_an_estop_during_a_1000_operation_transfer_stops_it_within_one_operation(
    session: ClientSession, world: SimWorld
) -> None:
    results: list[dict[str, Any]] = []

    async def transfer() -> None:
        results.append(await call(session, "transfer", **LONG, dry_run=False, action_id="long-1"))

    async with anyio.create_task_group() as tg:
        tg.start_soon(transfer)
        await _wait_for_ops(world, 40)
        stopped = await call(session, "emergency_stop", reason="test")
    assert stopped["ok"] is True
    assert results and results[0]["ok"] is False  # interrupted, not completed
    events = (await call(session, "run_events", run_id="lh1:direct", max=1000))["events"]
    latched = _latched_at(events)
    ops = world.physical_ops("lh1")
    after = [op for op in ops if op["ts"] > latched]
    assert len(after) <= 1, after
    assert len(ops) < 1008
    assert (await twin_state(session))["estop"] is True


async def test_an_estop_is_not_held_back_by_a_10000_step_validation(
    session: ClientSession,
) -> None:
    aspirate = {"labware": "reservoir", "wells": ["A1"], "volume_ul": 10}
    steps = [
        {"command": "pick_up_tips", "args": {"rack": "tips_1"}},
        *[{"command": "aspirate", "args": aspirate}, {"command": "dispense", "args": aspirate}]
        * 4999,
        {"command": "drop_tips", "args": {}},
    ]
    protocol = {"name": "long", "steps": steps}
    seen: dict[str, float] = {}

    async def validate() -> None:
        await call(session, "start_run", protocol=protocol, dry_run=False)
        seen["validated"] = anyio.current_time()

    async def stop() -> None:
        await anyio.lowlevel.checkpoint()  # after start_run's request: the stream keeps order
        await call(session, "emergency_stop")
        seen["stopped"] = anyio.current_time()

    async with anyio.create_task_group() as tg:
        tg.start_soon(validate)
        tg.start_soon(stop)
    assert seen["stopped"] < seen["validated"]
