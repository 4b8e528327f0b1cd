"""Liquid-handler runs through a real MCP session: dry and real runs, the event log, run keys,
cancellation and the busy instrument. Outcomes are judged from the simulated world."""

from __future__ import annotations

from typing import Any

import pytest
from _lh import (
    RACK,
    SLOW,
    TRANSFER,
    all_events,
    assert_world_matches_twin,
    believed,
    twin_state,
    wait_for_event,
    wait_for_run,
    world_contents,
)
from conftest import call, error_code
from mcp import ClientSession

from device_servers.sim.world import SimWorld

pytestmark = pytest.mark.anyio

# Six steps, 4 + 2 + 1 + 1 + 2*2 + 2 = 14 physical operations when executed.
PROTOCOL: dict[str, Any] = {
    "name": "fill and mix",
    "steps": [
        {"command": "transfer", "args": {**TRANSFER, "destination_wells": ["A2"]}},
        {"command": "pick_up_tips", "args": {"rack": RACK, "channels": [0, 1]}},
        {"command": "aspirate", "args": {"labware": "plate_1", "wells": ["B1"], "volume_ul": 40}},
        {"command": "dispense", "args": {"labware": "plate_1", "wells": ["B2"], "volume_ul": 40}},
        {
            "command": "mix",
            "args": {"labware": "plate_1", "well": "B2", "volume_ul": 20, "repetitions": 2},
        },
        {"command": "drop_tips", "args": {}},
    ],
}
PROTOCOL_OPS = 14


def slow_protocol(transfers: int) -> dict[str, Any]:
    """One single-well transfer per step (four operations each), into column 3 onwards."""
    wells = [f"{row}{col}" for col in range(3, 13) for row in "ABCDEFGH"][:transfers]
    return {
        "name": "slow",
        "steps": [
            {"command": "transfer", "args": {**TRANSFER, "destination_wells": [w]}} for w in wells
        ],
    }


async def start(session: ClientSession, protocol: dict[str, Any], **args: Any) -> dict[str, Any]:
    started = await call(session, "start_run", protocol=protocol, **args)
    assert started["ok"] is True, started
    return started


# --------------------------------------------------------------------------- dry runs


async def test_a_dry_run_completes_on_the_twin_and_moves_nothing(
    session: ClientSession, world: SimWorld
) -> None:
    state, contents = believed(await twin_state(session)), world_contents(world)
    started = await start(session, PROTOCOL)
    assert started["status"] == "pending"
    assert started["simulated"] is True and started["dry_run"] is True
    info = await wait_for_run(session, started["run_id"])
    assert info["status"] == "completed" and info["error"] is None
    assert info["steps_done"] == info["steps_total"] == len(PROTOCOL["steps"])
    assert info["protocol_name"] == "fill and mix"
    events = await all_events(session, started["run_id"])
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert all(e["simulated"] is True for e in events)
    assert events[-1]["type"] == "protocol_completed"
    assert events[-1]["data"]["simulated"] is True
    kinds = [e["type"] for e in events]
    assert kinds.count("step_started") == kinds.count("step_completed") == len(PROTOCOL["steps"])
    assert kinds.count("tip_picked_up") == 3 and kinds.count("tip_dropped") == 3
    assert believed(await twin_state(session)) == state
    assert world_contents(world) == contents
    assert world.physical_ops() == []


async def test_each_simulated_step_says_what_labware_it_uses_and_its_instrument_seconds(
    session: ClientSession,
) -> None:
    started = await start(session, PROTOCOL)
    await wait_for_run(session, started["run_id"])
    whole = await call(session, "run_events", run_id=started["run_id"], max=1000)
    done = [e["data"] for e in whole["events"] if e["type"] == "step_completed"]
    # The transfer: its source, destination and rack; pick 4 s + aspirate 5 + dispense 5 +
    # drop 4. The pick-up uses the rack only (two channels at once: one motion); the mix is
    # two aspirate/dispense cycles.
    assert done[0]["labware"] == sorted({TRANSFER["source"], "plate_1", RACK})
    assert done[0]["seconds"] == 18.0
    assert done[1]["labware"] == [RACK] and done[1]["seconds"] == 4.0
    assert done[4]["labware"] == ["plate_1"] and done[4]["seconds"] == 20.0


async def test_run_events_pages_rebuild_the_full_log(session: ClientSession) -> None:
    started = await start(session, PROTOCOL)
    await wait_for_run(session, started["run_id"])
    whole = await call(session, "run_events", run_id=started["run_id"], max=1000)
    assert whole["status"] == "completed"
    assert whole["next_seq"] == whole["events"][-1]["seq"]
    for page in (1, 3, 7):
        assert await all_events(session, started["run_id"], page=page) == whole["events"]
    tail = await call(session, "run_events", run_id=started["run_id"], since_seq=whole["next_seq"])
    assert tail["events"] == [] and tail["next_seq"] == whole["next_seq"]


async def test_a_dry_run_with_a_failing_step_fails_naming_that_step(
    session: ClientSession, world: SimWorld
) -> None:
    bad = {"steps": [*PROTOCOL["steps"][:2], PROTOCOL["steps"][1]]}
    started = await start(session, bad)
    info = await wait_for_run(session, started["run_id"])
    assert info["status"] == "failed" and info["steps_done"] == 2
    assert info["error"]["code"] == "TIP_ALREADY_ATTACHED"
    events = await all_events(session, started["run_id"])
    assert events[-1]["type"] == "error"
    assert events[-1]["data"]["code"] == "TIP_ALREADY_ATTACHED"
    assert events[-1]["data"]["extra"]["step"] == 2
    assert world.physical_ops() == []


# --------------------------------------------------------------------------- real runs


async def test_a_real_run_executes_every_step_and_the_world_matches_the_twin(
    session: ClientSession, world: SimWorld
) -> None:
    started = await start(session, PROTOCOL, dry_run=False)
    assert started["simulated"] is True and started["dry_run"] is False
    info = await wait_for_run(session, started["run_id"])
    assert info["status"] == "completed", info
    assert info["steps_done"] == len(PROTOCOL["steps"])
    assert len(world.physical_ops()) == PROTOCOL_OPS
    assert world.well("plate_1", "A2")["contents"] == pytest.approx({"dye": 50})
    assert world.well("plate_1", "B2")["contents"] == pytest.approx({"buffer": 40})
    assert world.well("plate_1", "B1")["volume_ul"] == pytest.approx(260)
    state = await twin_state(session)
    assert state["busy_with_run"] is None
    assert_world_matches_twin(state, world)
    events = await all_events(session, started["run_id"])
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert events[-1]["type"] == "protocol_completed"
    step_ids = [e["data"]["action_id"] for e in events if e["type"] == "step_started"]
    assert step_ids == [f"{started['run_id']}.{i}" for i in range(len(PROTOCOL["steps"]))]
    assert not [e for e in events if e["type"] in ("deviation", "error")]


async def test_a_protocol_with_a_structural_mistake_is_refused_before_anything_moves(
    session: ClientSession, world: SimWorld
) -> None:
    protocol = {
        "steps": [
            {"command": "pick_up_tips", "args": {"rack": RACK, "channels": list(range(8))}},
            {"command": "pick_up_tips", "args": {"rack": RACK, "channels": [0, 1, 2, 3]}},
            {"command": "drop_tips", "args": {}},
        ]
    }
    state, contents = believed(await twin_state(session)), world_contents(world)
    result = await call(session, "start_run", protocol=protocol, dry_run=False, run_key="k-1")
    assert error_code(result) == "TIP_ALREADY_ATTACHED"
    assert result["error"]["defined"] is True and result["error"]["fix_hint"]
    assert result["error"]["extra"]["step"] == 1
    assert world.physical_ops() == []
    assert world_contents(world) == contents
    assert believed(await twin_state(session)) == state
    assert (await twin_state(session))["busy_with_run"] is None


async def test_the_same_run_key_returns_the_same_run_and_executes_once(
    session: ClientSession, world: SimWorld
) -> None:
    first = await start(session, PROTOCOL, dry_run=False, run_key="fill-1")
    while_running = await start(session, PROTOCOL, dry_run=False, run_key="fill-1")
    assert while_running["run_id"] == first["run_id"] and while_running["existing"] is True
    await wait_for_run(session, first["run_id"])
    after = await start(session, PROTOCOL, dry_run=False, run_key="fill-1")
    assert after["run_id"] == first["run_id"] and after["status"] == "completed"
    assert len(world.physical_ops()) == PROTOCOL_OPS
    assert world.well("plate_1", "A2")["volume_ul"] == pytest.approx(50)
    other = await call(
        session, "start_run", protocol=slow_protocol(1), dry_run=False, run_key="fill-1"
    )
    assert error_code(other) == "ACTION_ID_REUSED" and other["error"]["fix_hint"]
    assert len(world.physical_ops()) == PROTOCOL_OPS


# --------------------------------------------------------------------------- busy, cancel


async def test_a_direct_command_while_a_real_run_executes_is_refused_as_busy(
    session: ClientSession, world: SimWorld
) -> None:
    world.add_fault("lh1", SLOW)
    started = await start(session, slow_protocol(3), dry_run=False)
    await wait_for_run(session, started["run_id"], ("running",))
    pick = {"rack": RACK, "spots": ["H12"], "channels": [7]}
    busy = await call(session, "pick_up_tips", **pick, dry_run=False, action_id="p-7")
    assert error_code(busy) == "DEVICE_BUSY"
    assert busy["error"]["retriable"] is True and busy["error"]["fix_hint"]
    assert (await call(session, "pick_up_tips", **pick))["ok"] is True  # dry runs still answer
    second = await call(session, "start_run", protocol=slow_protocol(1), dry_run=False)
    assert error_code(second) == "DEVICE_BUSY"
    info = await wait_for_run(session, started["run_id"])
    assert info["status"] == "completed"
    assert world.tips(RACK)["H12"] is True
    assert len(world.physical_ops()) == 12
    # DEVICE_BUSY recorded nothing: the same call now executes, once.
    retried = await call(session, "pick_up_tips", **pick, dry_run=False, action_id="p-7")
    assert retried["ok"] is True and not retried.get("replayed")
    assert world.channel("lh1", 7)["tip"]["spot"] == "H12"


async def test_cancelling_a_running_run_stops_it_with_run_cancelled(
    session: ClientSession, world: SimWorld
) -> None:
    world.add_fault("lh1", SLOW)
    protocol = slow_protocol(20)
    started = await start(session, protocol, dry_run=False)
    await wait_for_event(session, started["run_id"], "step_completed")
    cancelled = await call(session, "cancel_run", run_id=started["run_id"])
    assert cancelled["ok"] is True and cancelled["status"] == "cancelled", cancelled
    assert 1 <= cancelled["steps_done"] < len(protocol["steps"])
    events = await all_events(session, started["run_id"])
    assert [e["type"] for e in events].count("run_cancelled") == 1
    assert "protocol_completed" not in [e["type"] for e in events]
    ops = len(world.physical_ops())
    assert ops < 4 * len(protocol["steps"])
    again = await call(session, "cancel_run", run_id=started["run_id"])
    assert again == cancelled
    assert await all_events(session, started["run_id"]) == events
    assert len(world.physical_ops()) == ops
    # An operation interrupted by the abort leaves its outcome unknown: the twin says so
    # (stale) until read back, which then finds belief and world in agreement.
    state = await twin_state(session)
    assert state["busy_with_run"] is None
    assert (state["stale"] is not None) == (cancelled["error"] is not None)
    back = await call(session, "read_back")
    assert back["ok"] is True and back["stale"] is None
    assert_world_matches_twin(back["state"], world)


async def test_emergency_stop_during_a_run_cancels_it_and_latches(
    session: ClientSession, world: SimWorld
) -> None:
    world.add_fault("lh1", SLOW)
    started = await start(session, slow_protocol(20), dry_run=False)
    await wait_for_event(session, started["run_id"], "step_completed")
    stopped = await call(session, "emergency_stop")
    assert stopped["cancelled_runs"] == [started["run_id"]]
    info = await wait_for_run(session, started["run_id"])
    assert info["status"] == "cancelled"
    ops = len(world.physical_ops())
    assert ops < 4 * 20
    types = [e["type"] for e in await all_events(session, started["run_id"])]
    assert "estop" in types and types[-1] == "run_cancelled"
    refused = await call(session, "start_run", protocol=slow_protocol(1), dry_run=False)
    assert error_code(refused) == "ESTOP_ACTIVE"
    assert len(world.physical_ops()) == ops


async def test_cancelling_a_finished_run_returns_it_unchanged(
    session: ClientSession, world: SimWorld
) -> None:
    started = await start(session, PROTOCOL, dry_run=False)
    finished = await wait_for_run(session, started["run_id"])
    events = await all_events(session, started["run_id"])
    cancelled = await call(session, "cancel_run", run_id=started["run_id"])
    assert cancelled == finished and cancelled["status"] == "completed"
    assert await all_events(session, started["run_id"]) == events
    assert len(world.physical_ops()) == PROTOCOL_OPS
