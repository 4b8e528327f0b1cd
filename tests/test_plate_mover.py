"""The plate mover (arm1) through a real MCP client session on a simulated lab.

The lab is the test lab's liquid handler (plates start on its deck at
``lh1:plate_carrier:<slot>``), a plate reader that is never served (its drawer is set in the
world directly) and the arm. Outcomes are judged from the simulated world, never from what the
server says about itself.
"""

from __future__ import annotations

import contextlib
import sqlite3
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import IO, Any

import anyio
import pytest
from _servers import STARTUP_S, StdioTrace, server_env
from conftest import ROOT, call, error_code, write_lab
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import McpError
from mcp.shared.memory import create_connected_server_and_client_session

from device_servers.factory import open_runtime
from device_servers.lab import load
from device_servers.runtime import InstrumentRuntime
from device_servers.server import build_server
from device_servers.sim.world import SimWorld
from state_store import local_operator

pytestmark = pytest.mark.anyio

START = "lh1:plate_carrier:1"
DRAWER = "reader1:drawer"
GRIPPER = "arm1:gripper"
WORKSPACE = ["lh1:plate_carrier:1", "lh1:plate_carrier:2", "hotel:1", "hotel:2", DRAWER]
ARM: dict[str, Any] = {
    "id": "arm1",
    "kind": "plate_mover",
    "locations": WORKSPACE,
    "plates": ["plate_1"],
    "time_scale": 100,
    "command_timeout_s": 2,
}
ArmPatch = Callable[[dict[str, Any]], None]


def arm_lab_file(tmp_path: Path, patch_arm: ArmPatch | None = None) -> Path:
    """The test lab plus reader1 (never served) and arm1 (optionally patched)."""
    arm = dict(ARM)
    if patch_arm is not None:
        patch_arm(arm)

    def add_instruments(data: dict[str, Any]) -> None:
        data["instruments"] += [{"id": "reader1", "kind": "plate_reader"}, arm]

    return write_lab(tmp_path, add_instruments)


@contextlib.asynccontextmanager
async def arm_lab(
    tmp_path: Path, patch_arm: ArmPatch | None = None
) -> AsyncIterator[tuple[ClientSession, InstrumentRuntime, SimWorld]]:
    """arm1 served over an in-memory MCP session, after lh1 has laid out its deck once."""
    lab = load(arm_lab_file(tmp_path, patch_arm))
    async with open_runtime(lab.instrument("lh1"), lab.db_path, lab.world_path):
        pass  # seeds the wells of lh1's plates in the world
    async with (
        open_runtime(lab.instrument("arm1"), lab.db_path, lab.world_path) as rt,
        create_connected_server_and_client_session(build_server(rt)) as session,
    ):
        yield session, rt, SimWorld(lab.world_path)


@pytest.fixture
async def served(
    tmp_path: Path,
) -> AsyncIterator[tuple[ClientSession, InstrumentRuntime, SimWorld]]:
    async with arm_lab(tmp_path) as lab:
        yield lab


async def move(session: ClientSession, to: str, action_id: str | None = None, **kw: Any) -> Any:
    """move_plate of plate_1; executes when an action_id is given."""
    args: dict[str, Any] = {"plate": "plate_1", "to_location": to, **kw}
    if action_id is not None:
        args.update(dry_run=False, action_id=action_id)
    return await call(session, "move_plate", **args)


async def state(session: ClientSession) -> dict[str, Any]:
    return dict((await call(session, "get_state"))["state"])


def moves(world: SimWorld) -> list[str]:
    """Every physical pick and place of the arm, in order."""
    return [f"{op['op']} {op['well']}" for op in world.physical_ops("arm1")]


# --------------------------------------------------------------------------- tools and state


async def test_the_server_lists_move_plate_home_and_every_common_tool(served: Any) -> None:
    session, _, _ = served
    names = {t.name for t in (await session.list_tools()).tools}
    assert {"move_plate", "home"} <= names
    assert {
        "get_state",
        "read_back",
        "start_run",
        "run_events",
        "get_run",
        "cancel_run",
        "emergency_stop",
        "reset_estop",
        "confirm_state",
    } <= names
    move_tool = next(t for t in (await session.list_tools()).tools if t.name == "move_plate")
    for code in ("UNKNOWN_LABWARE", "OUT_OF_RANGE", "DECK_COLLISION", "GRIP_FAILED"):
        assert code in (move_tool.description or "")


async def test_get_state_shows_each_plate_where_the_lab_says_it_starts(served: Any) -> None:
    session, _, world = served
    snap = await state(session)
    assert snap["kind"] == "plate_mover"
    assert snap["labware"]["plate_1"]["location"] == START
    assert snap["locations"][START] == "plate_1" and snap["locations"]["hotel:1"] is None
    assert snap["holding"] is None and snap["homed"] is False
    assert world.location_of("plate_1") == START


async def test_the_plate_resource_tells_its_type_and_place(served: Any) -> None:
    session, _, _ = served
    res = await session.read_resource("lab://arm1/labware/plate_1")  # type: ignore[arg-type]
    text = res.contents[0].text  # type: ignore[union-attr]
    assert '"location": "lh1:plate_carrier:1"' in text and "cor_96_wellplate" in text


async def test_home_executes_and_the_arm_is_homed_in_belief_and_world(served: Any) -> None:
    session, _, world = served
    done = await call(session, "home", dry_run=False, action_id="home-1")
    assert done["ok"] is True and done["state"]["homed"] is True
    assert world.status("arm1")["homed"] is True


# --------------------------------------------------------------------------- moving plates


async def test_a_move_changes_the_world_and_the_contents_travel_with_the_plate(
    served: Any,
) -> None:
    session, _, world = served
    wells_before = world.wells("plate_1")
    assert wells_before["B1"]["volume_ul"] == 300
    done = await move(session, "hotel:1", "move-1")
    assert done["ok"] is True, done
    assert world.location_of("plate_1") == "hotel:1"
    assert world.plate_at(START) is None
    assert world.wells("plate_1") == wells_before
    moved = [e["data"] for e in done["events"] if e["type"] == "plate_moved"]
    assert moved == [{"plate": "plate_1", "from": START, "to": "hotel:1"}]
    assert done["state"]["labware"]["plate_1"]["location"] == "hotel:1"
    assert done["state"]["homed"] is True and done["deviations"] == []
    assert moves(world) == [f"pick_plate {START}", "place_plate hotel:1"]


async def test_a_dry_run_predicts_the_move_and_leaves_world_and_twin_untouched(
    served: Any,
) -> None:
    session, _, world = served
    before = await state(session)
    dry = await move(session, "hotel:1")
    assert dry["ok"] is True and dry["dry_run"] is True and dry["simulated"] is True
    assert dry["state"]["labware"]["plate_1"]["location"] == "hotel:1"
    assert [e["type"] for e in dry["events"]] == ["plate_moved"]
    assert world.location_of("plate_1") == START and moves(world) == []
    assert await state(session) == before


async def test_moving_a_plate_to_where_it_already_is_moves_nothing_and_warns(
    served: Any,
) -> None:
    session, _, world = served
    dry = await move(session, START)
    assert dry["ok"] is True and dry["operations"] == 0
    assert [e["data"]["what"] for e in dry["events"] if e["type"] == "warning"] == ["already_there"]
    done = await move(session, START, "same-place")
    assert done["ok"] is True and moves(world) == []


async def test_the_same_action_id_returns_the_recorded_outcome_and_moves_once(
    served: Any,
) -> None:
    session, _, world = served
    first = await move(session, "hotel:1", "once")
    again = await move(session, "hotel:1", "once")
    assert first["ok"] is True and again["replayed"] is True
    assert moves(world) == [f"pick_plate {START}", "place_plate hotel:1"]
    other = await move(session, "hotel:2", "once")
    assert error_code(other) == "ACTION_ID_REUSED"
    assert world.location_of("plate_1") == "hotel:1"


async def test_a_run_of_moves_executes_in_order_with_plate_moved_events(served: Any) -> None:
    session, _, world = served
    protocol = {
        "name": "shuffle",
        "steps": [
            {"command": "move_plate", "args": {"plate": "plate_1", "to_location": "hotel:1"}},
            {"command": "move_plate", "args": {"plate": "plate_1", "to_location": "hotel:2"}},
        ],
    }
    started = await call(session, "start_run", protocol=protocol, dry_run=False, run_key="k1")
    assert started["ok"] is True, started
    run_id = started["run_id"]
    with anyio.fail_after(10):
        while (info := await call(session, "get_run", run_id=run_id))["status"] in (
            "pending",
            "running",
        ):
            await anyio.sleep(0.01)
    assert info["status"] == "completed" and info["steps_done"] == 2
    events = (await call(session, "run_events", run_id=run_id, max=1000))["events"]
    assert [e["data"]["to"] for e in events if e["type"] == "plate_moved"] == ["hotel:1", "hotel:2"]
    assert world.location_of("plate_1") == "hotel:2"
    cancelled = await call(session, "cancel_run", run_id=run_id)
    assert cancelled["ok"] is True and cancelled["status"] == "completed"
    same = await call(session, "start_run", protocol=protocol, dry_run=False, run_key="k1")
    assert same["run_id"] == run_id and same["existing"] is True


# --------------------------------------------------------------------------- refusals


async def test_an_unknown_plate_is_refused_as_unknown_labware_with_a_fix_hint(
    served: Any,
) -> None:
    session, _, world = served
    refused = await call(
        session, "move_plate", plate="plate_9", to_location="hotel:1", dry_run=False, action_id="u"
    )
    assert error_code(refused) == "UNKNOWN_LABWARE"
    assert "plate_1" in refused["error"]["fix_hint"] and refused["error"]["defined"] is True
    assert moves(world) == []


async def test_a_destination_outside_the_workspace_is_out_of_range(served: Any) -> None:
    session, _, world = served
    for where in ("hs1:holder", "hotel:3"):
        refused = await move(session, where, f"out-{where}")
        assert error_code(refused) == "OUT_OF_RANGE", where
        assert "hotel:1" in refused["error"]["fix_hint"]
    assert world.location_of("plate_1") == START and moves(world) == []


async def test_a_destination_the_twin_believes_occupied_is_a_deck_collision(
    tmp_path: Path,
) -> None:
    def track_the_reservoir(arm: dict[str, Any]) -> None:
        arm["plates"] = ["plate_1", "reservoir"]
        arm["locations"] = [*WORKSPACE, "lh1:plate_carrier:0"]

    async with arm_lab(tmp_path, track_the_reservoir) as (session, _, world):
        refused = await move(session, "lh1:plate_carrier:0", "into-reservoir")
        assert error_code(refused) == "DECK_COLLISION"
        assert refused["error"]["defined"] is False
        assert "hotel:1" in refused["error"]["fix_hint"]
        assert world.location_of("plate_1") == START and moves(world) == []


async def test_a_destination_only_the_world_knows_is_occupied_is_refused_before_moving(
    served: Any,
) -> None:
    session, _, world = served
    world.place_plate("stray_plate", "hotel:1")
    refused = await move(session, "hotel:1", "onto-stray")
    assert error_code(refused) == "POLICY_DENIED"
    assert refused["error"]["extra"]["rule"] == "destination_must_be_free"
    assert world.location_of("plate_1") == START and moves(world) == []
    assert world.incidents("arm1") == []


async def test_a_plate_put_at_the_destination_during_the_move_is_a_refused_reported_collision(
    served: Any,
) -> None:
    session, rt, world = served
    # The pick takes long enough for a person to put a plate where the arm is heading.
    world.add_fault("arm1", {"kind": "delay", "match": {"op": "pick"}, "params": {"seconds": 0.3}})
    result: dict[str, Any] = {}

    async def go() -> None:
        result.update(await move(session, "hotel:1", "race"))

    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(go)
            while rt.ledger.get("race") is None:
                await anyio.sleep(0.005)
            world.place_plate("stray_plate", "hotel:1")
    assert error_code(result) == "DECK_COLLISION"
    assert [i["kind"] for i in world.incidents("arm1")] == ["collision"]
    assert world.location_of("stray_plate") == "hotel:1"
    assert world.location_of("plate_1") == GRIPPER
    stale = await move(session, "hotel:2", "after-race")
    assert error_code(stale) == "STATE_STALE"
    back = await call(session, "read_back")
    assert back["ok"] is True and back["state"]["holding"] == "plate_1"
    placed = await move(session, "hotel:2", "after-race")
    assert placed["ok"] is True, placed
    assert world.location_of("plate_1") == "hotel:2"


async def test_a_closed_destination_drawer_is_policy_denied_and_an_open_one_allowed(
    served: Any,
) -> None:
    session, _, world = served
    world.set_status("reader1", drawer_open=False)
    refused = await move(session, DRAWER, "drawer-closed")
    assert error_code(refused) == "POLICY_DENIED"
    assert refused["error"]["extra"]["rule"] == "destination_instrument_ready"
    assert world.location_of("plate_1") == START
    world.set_status("reader1", drawer_open=True)
    done = await move(session, DRAWER, "drawer-open")
    assert done["ok"] is True, done
    assert world.location_of("plate_1") == DRAWER


async def test_a_reader_that_never_reported_its_drawer_counts_as_closed(served: Any) -> None:
    session, _, world = served
    refused = await move(session, DRAWER, "drawer-unknown")
    assert error_code(refused) == "POLICY_DENIED"
    assert world.location_of("plate_1") == START


async def test_a_plate_is_not_taken_out_of_a_drawer_that_closed_or_a_busy_instrument(
    served: Any,
) -> None:
    session, _, world = served
    world.set_status("reader1", drawer_open=True)
    assert (await move(session, DRAWER, "in"))["ok"] is True
    world.set_status("reader1", drawer_open=False)
    refused = await move(session, "hotel:1", "out-closed")
    assert refused["error"]["extra"]["rule"] == "source_instrument_ready"
    world.set_status("reader1", drawer_open=True, busy=True)
    refused = await move(session, "hotel:1", "out-busy")
    assert refused["error"]["extra"]["rule"] == "source_instrument_ready"
    assert world.location_of("plate_1") == DRAWER


# --------------------------------------------------------------------------- faults


async def test_an_empty_grasp_is_grip_failed_and_the_world_keeps_the_plate_in_place(
    served: Any,
) -> None:
    session, _, world = served
    world.add_fault("arm1", {"kind": "empty_grasp", "match": {"op": "pick"}})
    failed = await move(session, "hotel:1", "grasp-1")
    assert error_code(failed) == "GRIP_FAILED"
    assert failed["error"]["defined"] is True and failed["error"]["fix_hint"]
    assert world.location_of("plate_1") == START and world.plate_at("hotel:1") is None
    snap = await state(session)
    assert snap["labware"]["plate_1"]["location"] == START and snap["holding"] is None
    assert snap["stale"] is None
    retried = await move(session, "hotel:1", "grasp-2")
    assert retried["ok"] is True and world.location_of("plate_1") == "hotel:1"


async def test_a_disconnect_leaves_the_twin_stale_until_read_back(served: Any) -> None:
    session, _, world = served
    world.add_fault("arm1", {"kind": "disconnect", "match": {"op": "place"}})
    lost = await move(session, "hotel:1", "dc-1")
    assert error_code(lost) == "CONNECTION_LOST" and lost["error"]["defined"] is False
    assert world.location_of("plate_1") == GRIPPER
    assert error_code(await move(session, "hotel:1", "dc-2")) == "STATE_STALE"
    back = await call(session, "read_back")
    assert back["ok"] is True and back["stale"] is None
    assert back["state"]["holding"] == "plate_1"
    done = await move(session, "hotel:1", "dc-3")
    assert done["ok"] is True and world.location_of("plate_1") == "hotel:1"
    assert moves(world) == [f"pick_plate {START}", "place_plate hotel:1"]


async def test_a_place_done_before_the_connection_dropped_is_found_by_read_back(
    served: Any,
) -> None:
    session, _, world = served
    world.add_fault(
        "arm1", {"kind": "disconnect", "match": {"op": "place"}, "params": {"after_effect": True}}
    )
    assert error_code(await move(session, "hotel:1", "dc-1")) == "CONNECTION_LOST"
    assert world.location_of("plate_1") == "hotel:1"
    back = await call(session, "read_back")
    assert back["deviations"] == [
        {"what": "plate_location", "labware": "plate_1", "expected": GRIPPER, "observed": "hotel:1"}
    ]
    assert back["state"]["labware"]["plate_1"]["location"] == "hotel:1"
    again = await move(session, "hotel:1", "dc-2")
    assert again["ok"] is True and len(moves(world)) == 2


async def test_a_hanging_pick_times_out_and_leaves_the_twin_stale_until_read_back(
    served: Any,
) -> None:
    session, _, world = served
    world.add_fault("arm1", {"kind": "hang", "match": {"op": "pick"}})
    with anyio.fail_after(10):
        hung = await move(session, "hotel:1", "hang-1")
    assert error_code(hung) == "HARDWARE_TIMEOUT"
    assert world.location_of("plate_1") == START
    assert (await state(session))["stale"]
    assert error_code(await move(session, "hotel:1", "hang-2")) == "STATE_STALE"
    assert (await call(session, "read_back"))["stale"] is None
    assert (await move(session, "hotel:1", "hang-3"))["ok"] is True


def quick_arm(arm: dict[str, Any]) -> None:
    arm["command_timeout_s"] = 0.5


TRAVEL_S = 8.0 / ARM["time_scale"]  # move_seconds (default) in wall seconds


async def test_a_host_stall_longer_than_the_command_time_does_not_time_out_a_simulated_move(
    tmp_path: Path,
) -> None:
    """The simulated arm's time limit counts its own waits, not how fast the host runs it."""
    async with arm_lab(tmp_path, quick_arm) as (session, rt, world):
        held, stall_s = threading.Event(), 2 * rt.config.command_timeout_s

        def hold_the_world() -> None:  # another writer holds the world (a loaded disk)
            conn = sqlite3.connect(world.path, isolation_level=None)
            conn.execute("BEGIN IMMEDIATE")
            held.set()
            time.sleep(stall_s)  # the stall itself, not a wait for something
            conn.execute("COMMIT")
            conn.close()

        stall = threading.Thread(target=hold_the_world)
        stall.start()
        assert held.wait(10)
        with anyio.fail_after(10):
            started = time.monotonic()
            done = await move(session, "hotel:1", "stalled")
            took = time.monotonic() - started
        stall.join()
        assert took >= stall_s  # the move really waited for the host
        assert done["ok"] is True, done
        assert world.location_of("plate_1") == "hotel:1"


@pytest.mark.parametrize(
    ("delay_s", "code"),
    [(0.5 - TRAVEL_S - 0.02, None), (0.5 - TRAVEL_S + 0.02, "HARDWARE_TIMEOUT")],
    ids=["within_its_time", "beyond_its_time"],
)
async def test_a_pick_times_out_when_its_travel_and_delay_exceed_the_command_time(
    tmp_path: Path, delay_s: float, code: str | None
) -> None:
    async with arm_lab(tmp_path, quick_arm) as (session, _, world):
        fault = {"kind": "delay", "match": {"op": "pick"}, "params": {"seconds": delay_s}}
        world.add_fault("arm1", fault)
        with anyio.fail_after(10):
            result = await move(session, "hotel:1", "slow-pick")
        if code is None:
            assert result["ok"] is True and world.location_of("plate_1") == "hotel:1"
        else:
            assert error_code(result) == code and world.location_of("plate_1") == START


async def test_the_emergency_stop_latches_until_a_person_resets_it(served: Any) -> None:
    session, rt, world = served
    assert (await call(session, "emergency_stop"))["estop"] is True
    assert error_code(await move(session, "hotel:1", "es-1")) == "ESTOP_ACTIVE"
    assert error_code(await call(session, "home", dry_run=False, action_id="es-h")) == (
        "ESTOP_ACTIVE"
    )
    assert (await call(session, "read_back"))["stale"]  # still latched
    assert error_code(await call(session, "reset_estop", action_id="es-reset")) == (
        "APPROVAL_REQUIRED"
    )
    assert world.location_of("plate_1") == START and moves(world) == []
    rt.approvals.grant("arm1", "es-reset", local_operator("at-the-arm"))
    reset = await call(session, "reset_estop", action_id="es-reset")
    assert reset["ok"] is True and reset["stale"]
    assert (await call(session, "read_back"))["stale"] is None
    assert (await move(session, "hotel:1", "es-2"))["ok"] is True


async def test_confirm_state_needs_a_person(served: Any) -> None:
    session, _, _ = served
    assert error_code(await call(session, "confirm_state", action_id="c-1")) == (
        "APPROVAL_REQUIRED"
    )


# --------------------------------------------------------------------------- a real process


@contextlib.asynccontextmanager
async def arm_over_stdio(
    lab_file: Path, errlog: IO[str], trace: StdioTrace
) -> AsyncIterator[ClientSession]:
    """``labwright serve arm1`` spawned over stdio."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "labwright", "serve", "arm1", "--config", str(lab_file)],
        env=server_env(),
        cwd=str(ROOT),
    )
    async with (
        stdio_client(params, errlog=errlog) as (read, write),
        ClientSession(read, write, message_handler=trace) as session,
    ):
        with anyio.fail_after(STARTUP_S):
            await session.initialize()
        yield session


async def test_a_crash_after_the_place_leaves_the_move_in_doubt_and_never_resends_it(
    tmp_path: Path,
) -> None:
    def crash_after_placing(arm: dict[str, Any]) -> None:
        arm["faults"] = [{"kind": "crash", "match": {"op": "place"}}]

    lab_file = arm_lab_file(tmp_path, crash_after_placing)
    world = SimWorld(load(lab_file).world_path)
    trace = StdioTrace()
    with (tmp_path / "arm.err").open("w") as errlog:
        async with arm_over_stdio(lab_file, errlog, trace) as session:
            with pytest.raises(McpError), anyio.fail_after(30):
                await session.call_tool(
                    "move_plate",
                    {
                        "plate": "plate_1",
                        "to_location": "hotel:1",
                        "dry_run": False,
                        "action_id": "m-1",
                    },
                )
        assert world.location_of("plate_1") == "hotel:1"

        async with arm_over_stdio(lab_file, errlog, trace) as session:
            snap = await state(session)
            assert snap["stale"] and snap["in_doubt"] == ["m-1"]
            assert error_code(await move(session, "hotel:1", "m-1")) == "ACTION_IN_DOUBT"
            back = await call(session, "read_back")
            assert back["in_doubt_actions"] == ["m-1"]
            assert back["state"]["labware"]["plate_1"]["location"] == "hotel:1"
            assert (await move(session, "hotel:2", "m-2"))["ok"] is True
    assert trace.garbage == []
    assert moves(world) == [
        f"pick_plate {START}",
        "place_plate hotel:1",
        "pick_plate hotel:1",
        "place_plate hotel:2",
    ]
