"""Emergency stop and faults injected in the simulated world, seen through the MCP server.

Faults fire at the lowest seam (the simulated backend), never in the twin: the server must
discover them as it would with hardware. Physical outcomes are judged from the world.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import call, error_code, labwright, write_lab
from mcp import ClientSession
from mcp.shared.memory import create_connected_server_and_client_session

from device_servers.factory import open_runtime
from device_servers.lab import load
from device_servers.runtime import InstrumentRuntime
from device_servers.server import build_server
from device_servers.sim.world import SimWorld

pytestmark = pytest.mark.anyio

Patch = Callable[[dict[str, Any]], None]

TRANSFER = dict(
    source="reservoir",
    source_well="A1",
    destination="plate_1",
    destination_wells=["A1"],
    volume_ul=50,
)

# A valid call of every instrument command on a fresh deck (motion or not).
COMMANDS: dict[str, dict[str, Any]] = {
    "pick_up_tips": dict(rack="tips_1"),
    "drop_tips": dict(),
    "aspirate": dict(labware="reservoir", wells=["A1"], volume_ul=50),
    "dispense": dict(labware="plate_1", wells=["A1"], volume_ul=50),
    "transfer": TRANSFER,
    "mix": dict(labware="plate_1", well="B1", volume_ul=50),
}


def instrument_patch(**fields: Any) -> Patch:
    def patch(data: dict[str, Any]) -> None:
        data["instruments"][0].update(fields)

    return patch


@contextlib.asynccontextmanager
async def served(
    tmp_path: Path, patch: Patch | None = None
) -> AsyncIterator[tuple[ClientSession, InstrumentRuntime, SimWorld, Path]]:
    """A (patched) lab served over an in-memory MCP session."""
    lab_file = write_lab(tmp_path, patch)
    lab = load(lab_file)
    async with (
        open_runtime(lab.instrument("lh1"), lab.db_path, lab.world_path) as rt,
        create_connected_server_and_client_session(build_server(rt)) as session,
    ):
        yield session, rt, SimWorld(lab.world_path), lab_file


async def approve(lab_file: Path, action_id: str) -> None:
    """A person approves through the real ``labwright`` command in a subprocess."""
    done = await anyio.to_thread.run_sync(
        lambda: labwright("approve-action", "lh1", action_id, "--config", str(lab_file))
    )
    assert done.returncode == 0, done.stderr


async def wait_for_run(session: ClientSession, run_id: str, timeout: float = 20) -> dict[str, Any]:
    """Poll get_run until the run has finished (bounded)."""
    with anyio.fail_after(timeout):
        while True:
            info = await call(session, "get_run", run_id=run_id)
            if info["status"] not in ("pending", "running"):
                return info
            await anyio.sleep(0.02)


async def wait_for_event(
    session: ClientSession, run_id: str, kind: str, timeout: float = 10
) -> None:
    with anyio.fail_after(timeout):
        while True:
            events = (await call(session, "run_events", run_id=run_id, max=1000))["events"]
            if any(e["type"] == kind for e in events):
                return
            await anyio.sleep(0.02)


async def direct_events(session: ClientSession, kind: str) -> list[dict[str, Any]]:
    events = (await call(session, "run_events", run_id="lh1:direct", max=1000))["events"]
    return [e for e in events if e["type"] == kind]


def tip_on_channel(state: dict[str, Any], channel: int = 0) -> bool:
    return state["channels"][channel]["tip"] is not None


# --------------------------------------------------------------------------- emergency stop


async def test_emergency_stop_latches_and_every_command_is_refused(
    session: ClientSession, world: SimWorld
) -> None:
    stopped = await call(session, "emergency_stop")
    assert stopped["ok"] is True and stopped["estop"] is True
    for name, args in COMMANDS.items():
        payload = await call(session, name, **args, dry_run=False, action_id=f"after-{name}")
        assert error_code(payload) == "ESTOP_ACTIVE", name
    assert world.physical_ops("lh1") == []
    state = (await call(session, "get_state"))["state"]
    assert state["estop"] is True and state["stale"]


async def test_dry_run_still_answers_during_an_emergency_stop_with_a_warning(
    session: ClientSession,
) -> None:
    await call(session, "emergency_stop")
    dry = await call(session, "transfer", **TRANSFER)
    assert dry["ok"] is True and dry["warnings"]


async def test_start_run_to_execute_is_refused_while_the_estop_is_latched(
    session: ClientSession, runtime: InstrumentRuntime, world: SimWorld
) -> None:
    await call(session, "emergency_stop")
    protocol = {"name": "p", "steps": [{"command": "transfer", "args": TRANSFER}]}
    refused = await call(session, "start_run", protocol=protocol, dry_run=False, run_key="k")
    assert error_code(refused) == "ESTOP_ACTIVE"
    assert runtime.runs.by_key("k") is None
    assert world.physical_ops("lh1") == []


async def test_emergency_stop_works_when_the_twin_is_stale_and_twice_in_a_row(
    session: ClientSession, runtime: InstrumentRuntime
) -> None:
    runtime.stale_reason = "test: the instrument state is unknown"
    assert (await call(session, "emergency_stop"))["ok"] is True
    assert (await call(session, "emergency_stop"))["ok"] is True
    assert len(await direct_events(session, "estop")) == 2


async def test_emergency_stop_during_a_run_cancels_it_with_an_estop_event(
    tmp_path: Path,
) -> None:
    async with served(tmp_path) as (s, rt, world, _):
        # Every physical operation takes a while, so the run is still executing when stopped.
        world.add_fault("lh1", {"kind": "delay", "times": -1, "params": {"seconds": 0.2}})
        protocol = {
            "name": "slow",
            "steps": [
                {"command": "transfer", "args": {**TRANSFER, "destination_wells": [w]}}
                for w in ("A1", "A2", "A3", "A4")
            ],
        }
        started = await call(s, "start_run", protocol=protocol, dry_run=False)
        run_id = started["run_id"]
        await wait_for_event(s, run_id, "step_started")

        with anyio.fail_after(10):
            stopped = await call(s, "emergency_stop")
        assert stopped["ok"] is True and run_id in stopped["cancelled_runs"]

        info = await wait_for_run(s, run_id)
        assert info["status"] == "cancelled"
        assert info["steps_done"] < 4
        events = (await call(s, "run_events", run_id=run_id, max=1000))["events"]
        types = [e["type"] for e in events]
        assert "estop" in types and "protocol_completed" not in types
        assert world.well("plate_1", "A4")["volume_ul"] == 0
        assert rt.estop is True


async def test_emergency_stop_interrupts_a_hanging_command(tmp_path: Path) -> None:
    async with served(tmp_path, instrument_patch(command_timeout_s=60)) as (s, rt, world, _):
        world.add_fault("lh1", {"kind": "hang", "match": {"op": "pick"}})
        result: dict[str, Any] = {}

        async def pick() -> None:
            result.update(
                await call(s, "pick_up_tips", rack="tips_1", dry_run=False, action_id="hang-1")
            )

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(pick)
                while rt.ledger.get("hang-1") is None:
                    await anyio.sleep(0.01)
                assert (await call(s, "emergency_stop"))["ok"] is True
        assert result["ok"] is False
        assert all(world.tips("tips_1").values())
        assert (
            error_code(
                await call(s, "pick_up_tips", rack="tips_1", dry_run=False, action_id="after")
            )
            == "ESTOP_ACTIVE"
        )


async def test_reset_estop_needs_a_persons_approval_then_read_back_before_motion(
    tmp_path: Path,
) -> None:
    async with served(tmp_path) as (s, rt, world, lab_file):
        await call(s, "emergency_stop")

        refused = await call(s, "reset_estop", action_id="reset-1")
        assert error_code(refused) == "APPROVAL_REQUIRED"
        assert rt.estop is True

        await approve(lab_file, "reset-1")
        reset = await call(s, "reset_estop", action_id="reset-1")
        assert reset["ok"] is True and reset["estop"] is False and reset["stale"]

        stale = await call(s, "transfer", **TRANSFER, dry_run=False, action_id="t-1")
        assert error_code(stale) == "STATE_STALE"
        assert world.physical_ops("lh1") == []

        back = await call(s, "read_back")
        assert back["ok"] is True and back["stale"] is None and back["estop"] is False

        done = await call(s, "transfer", **TRANSFER, dry_run=False, action_id="t-2")
        assert done["ok"] is True
        assert world.well("plate_1", "A1")["volume_ul"] == pytest.approx(50)


async def test_read_back_alone_does_not_clear_a_latched_estop(session: ClientSession) -> None:
    await call(session, "emergency_stop")
    back = await call(session, "read_back")
    assert back["estop"] is True and back["stale"]
    refused = await call(session, "transfer", **TRANSFER, dry_run=False, action_id="t")
    assert error_code(refused) == "ESTOP_ACTIVE"


# --------------------------------------------------------------------------- faults


async def test_failed_tip_pickup_is_no_tip_the_tip_stays_and_its_spot_is_not_taken_again(
    session: ClientSession, world: SimWorld
) -> None:
    world.add_fault("lh1", {"kind": "tip_pickup_fail", "match": {"op": "pick"}})
    payload = await call(session, "pick_up_tips", rack="tips_1", dry_run=False, action_id="pk")
    assert error_code(payload) == "NO_TIP"
    assert payload["error"]["defined"] is True
    assert world.tips("tips_1")["A1"] is True
    assert world.channel("lh1", 0)["tip"] is None
    # The twin, reconciled with the read back, agrees with the world.
    state = (await call(session, "get_state"))["state"]
    assert "A1" in state["labware"]["tips_1"]["tips_present"]
    assert state["labware"]["tips_1"]["tips_failed"] == ["A1"]
    assert not tip_on_channel(state)
    assert state["stale"] is None
    assert payload["error"]["extra"]["progress"]["next"]["status"] == "failed"
    again = await call(session, "pick_up_tips", rack="tips_1", dry_run=False, action_id="pk-2")
    assert again["ok"] is True  # the next spot: the one that failed is not taken again
    assert world.tips("tips_1")["A1"] is True and world.tips("tips_1")["B1"] is False
    assert world.channel("lh1", 0)["tip"] is not None


async def test_tip_pickup_fault_matches_only_its_channel(
    session: ClientSession, world: SimWorld
) -> None:
    world.add_fault("lh1", {"kind": "tip_pickup_fail", "match": {"op": "pick", "channel": "1"}})
    payload = await call(
        session, "pick_up_tips", rack="tips_1", channels=[0, 1], dry_run=False, action_id="pk"
    )
    assert error_code(payload) == "NO_TIP"
    assert world.channel("lh1", 0)["tip"] is not None
    assert world.channel("lh1", 1)["tip"] is None
    state = (await call(session, "get_state"))["state"]
    assert tip_on_channel(state, 0) and not tip_on_channel(state, 1)
    assert len(state["labware"]["tips_1"]["tips_present"]) == 95


async def test_less_liquid_than_believed_is_found_by_the_backend_not_the_twin(
    session: ClientSession, world: SimWorld
) -> None:
    world.add_fault(
        "lh1",
        {
            "kind": "less_liquid",
            "match": {"op": "aspirate", "labware": "reservoir"},
            "params": {"volume_ul": 20},
        },
    )
    # The twin believes 10 mL are there: a dry run passes.
    assert (await call(session, "transfer", **TRANSFER))["ok"] is True

    payload = await call(session, "transfer", **TRANSFER, dry_run=False, action_id="t-1")
    assert error_code(payload) == "INSUFFICIENT_VOLUME"
    assert payload["error"]["defined"] is True

    deviations = await direct_events(session, "deviation")
    reservoir = [d["data"] for d in deviations if d["data"].get("labware") == "reservoir"]
    assert len(reservoir) == 1
    assert reservoir[0]["what"] == "well_volume" and reservoir[0]["well"] == "A1"
    assert reservoir[0]["expected"] == pytest.approx(10000)
    assert reservoir[0]["observed"] == pytest.approx(20)
    assert reservoir[0] in payload["error"]["extra"]["deviations"]

    assert [i["kind"] for i in world.incidents("lh1")] == ["dry_aspiration_prevented"]
    assert [op["op"] for op in world.physical_ops("lh1")] == ["pick"]
    assert world.well("reservoir", "A1")["volume_ul"] == pytest.approx(20)
    assert world.well("plate_1", "A1")["volume_ul"] == 0
    volumes = [w["volume_ul"] for lw in ("reservoir", "plate_1") for w in world.wells(lw).values()]
    assert min(volumes) >= 0
    state = (await call(session, "get_state"))["state"]
    assert state["labware"]["reservoir"]["wells"]["A1"]["volume_ul"] == pytest.approx(20)


async def test_hang_is_a_hardware_timeout_in_doubt_until_read_back_then_completed_once(
    tmp_path: Path,
) -> None:
    async with served(tmp_path, instrument_patch(command_timeout_s=0.3)) as (s, _, world, _):
        world.add_fault("lh1", {"kind": "hang", "match": {"op": "pick"}})
        with anyio.fail_after(10):
            payload = await call(s, "pick_up_tips", rack="tips_1", dry_run=False, action_id="h")
        assert error_code(payload) == "HARDWARE_TIMEOUT"
        assert payload["error"]["defined"] is False
        assert world.tips("tips_1")["A1"] is True

        assert payload["error"]["extra"]["in_doubt"] is True
        assert payload["error"]["extra"]["progress"]["next"]["status"] == "unknown"
        refused = await call(s, "pick_up_tips", rack="tips_1", dry_run=False, action_id="h-2")
        assert error_code(refused) == "STATE_STALE"
        replay = await call(s, "pick_up_tips", rack="tips_1", dry_run=False, action_id="h")
        assert error_code(replay) == "ACTION_IN_DOUBT"  # never re-sent before a read back

        back = await call(s, "read_back")
        assert back["stale"] is None
        assert back["resumable"] == {"h": {"done": 0, "of": 1}}  # the pick never happened
        done = await call(s, "pick_up_tips", rack="tips_1", dry_run=False, action_id="h")
        assert done["ok"] is True  # completed under its own id, once
        assert world.channel("lh1", 0)["tip"] is not None
        assert [op["op"] for op in world.physical_ops("lh1")] == ["pick"]


async def test_disconnect_is_connection_lost_then_state_stale(
    session: ClientSession, world: SimWorld
) -> None:
    world.add_fault("lh1", {"kind": "disconnect", "match": {"op": "aspirate"}})
    payload = await call(session, "transfer", **TRANSFER, dry_run=False, action_id="t-1")
    assert error_code(payload) == "CONNECTION_LOST"
    assert payload["error"]["defined"] is False
    assert world.well("reservoir", "A1")["volume_ul"] == pytest.approx(10000)

    refused = await call(session, "transfer", **TRANSFER, dry_run=False, action_id="t-2")
    assert error_code(refused) == "STATE_STALE"
    back = await call(session, "read_back")
    assert back["stale"] is None
    # The tip picked before the connection dropped is on the channel, in belief and in truth.
    assert tip_on_channel(back["state"])
    assert world.channel("lh1", 0)["tip"] is not None


async def test_disconnect_after_the_effect_is_found_by_read_back_as_a_deviation(
    session: ClientSession, world: SimWorld
) -> None:
    world.add_fault(
        "lh1",
        {"kind": "disconnect", "match": {"op": "aspirate"}, "params": {"after_effect": True}},
    )
    payload = await call(session, "transfer", **TRANSFER, dry_run=False, action_id="t-1")
    assert error_code(payload) == "CONNECTION_LOST"
    back = await call(session, "read_back")
    assert {"well_volume", "tip_volume"} <= {d["what"] for d in back["deviations"]}
    assert back["state"]["labware"]["reservoir"]["wells"]["A1"]["volume_ul"] == pytest.approx(
        world.well("reservoir", "A1")["volume_ul"]
    )
    assert world.well("reservoir", "A1")["volume_ul"] == pytest.approx(9950)


async def test_adapter_fault_is_undefined_and_marks_the_twin_stale(
    session: ClientSession, world: SimWorld
) -> None:
    world.add_fault("lh1", {"kind": "adapter_fault", "match": {"op": "dispense"}})
    payload = await call(session, "transfer", **TRANSFER, dry_run=False, action_id="t-1")
    assert error_code(payload) == "ADAPTER_FAULT"
    assert payload["error"]["defined"] is False
    assert [op["op"] for op in world.physical_ops("lh1")] == ["pick", "aspirate"]
    refused = await call(session, "transfer", **TRANSFER, dry_run=False, action_id="t-2")
    assert error_code(refused) == "STATE_STALE"


async def test_fault_at_an_operation_number_fires_on_that_operation_only(
    session: ClientSession, world: SimWorld
) -> None:
    # transfer = pick (1), aspirate (2), dispense (3), drop (4)
    world.add_fault("lh1", {"kind": "adapter_fault", "at_op": 3})
    payload = await call(session, "transfer", **TRANSFER, dry_run=False, action_id="t-1")
    assert error_code(payload) == "ADAPTER_FAULT"
    assert [op["op"] for op in world.physical_ops("lh1")] == ["pick", "aspirate"]
    assert world.well("plate_1", "A1")["volume_ul"] == 0


async def test_faults_in_the_lab_file_are_armed_once_at_start(tmp_path: Path) -> None:
    faults = [{"kind": "tip_pickup_fail", "match": {"op": "pick"}}]
    patch = instrument_patch(faults=faults)
    async with served(tmp_path, patch) as (s, _, world, _):
        failed = await call(s, "pick_up_tips", rack="tips_1", dry_run=False, action_id="p-1")
        assert error_code(failed) == "NO_TIP"
        assert world.channel("lh1", 0)["tip"] is None
        await call(s, "drop_tips")  # a dry run; nothing to drop
    # Restarting the server on the same lab does not arm the fault again.
    async with served(tmp_path, patch) as (s, _, world, _):
        assert world.conn.execute("SELECT COUNT(*) FROM faults").fetchone()[0] == 1
        await call(s, "read_back")
        done = await call(s, "pick_up_tips", rack="tips_1", dry_run=False, action_id="p-2")
        assert done["ok"] is True
        assert world.channel("lh1", 0)["tip"] is not None


async def test_an_approved_reset_cannot_clear_a_later_estop_under_the_same_action_id(
    tmp_path: Path,
) -> None:
    async with served(tmp_path) as (s, rt, _, lab_file):
        await call(s, "emergency_stop")
        await call(s, "reset_estop", action_id="reset-1")
        await approve(lab_file, "reset-1")
        assert (await call(s, "reset_estop", action_id="reset-1"))["ok"] is True

        await call(s, "emergency_stop")
        again = await call(s, "reset_estop", action_id="reset-1")
        assert error_code(again) == "ACTION_ID_REUSED"  # approvals are single-use
        assert rt.estop is True
        # A new reset is a new action: a person approves it, once more.
        assert error_code(await call(s, "reset_estop", action_id="reset-2")) == (
            "APPROVAL_REQUIRED"
        )
        await approve(lab_file, "reset-2")
        assert (await call(s, "reset_estop", action_id="reset-2"))["estop"] is False
        assert rt.estop is False
