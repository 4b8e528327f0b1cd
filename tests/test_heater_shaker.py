"""The heater-shaker device server through a real MCP client session.

The simulated block ramps at 10 C per minute in instrument time; the lab runs it 600 times
faster than the wall clock, so a ten-minute ramp takes one real second. Outcomes are judged
from the simulated world (ground truth), never from what the server says about itself.
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from _servers import STARTUP_S, StdioTrace, server_env
from conftest import ROOT, call, error_code, execute, finished_run, labwright, served_instrument
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import McpError
from mcp.shared.memory import create_connected_server_and_client_session

from device_servers.factory import open_runtime
from device_servers.lab import load
from device_servers.runtime import InstrumentRuntime
from device_servers.server import build_server
from device_servers.sim.world import SimWorld

pytestmark = pytest.mark.anyio

HS = "hs1"
HOLDER = "hs1:holder"
PLATE = "plate_1"
COMMANDS = (
    "set_temperature",
    "wait_for_temperature",
    "shake",
    "hold",
    "stop",
    "lock_plate",
    "unlock_plate",
)


@contextlib.asynccontextmanager
async def served(
    tmp_path: Path, plate: bool = True, **fields: Any
) -> AsyncIterator[tuple[ClientSession, InstrumentRuntime, SimWorld, Path]]:
    """A lab with the test liquid handler and a fast heater-shaker, served over MCP.

    With ``plate``, plate_1 physically sits on the holder and the server has read it back.
    """
    entry = {"id": HS, "kind": "heater_shaker", "time_scale": 600, "command_timeout_s": 2, **fields}
    async with served_instrument(tmp_path, entry, HOLDER if plate else None) as served_:
        yield served_


async def state(session: ClientSession) -> dict[str, Any]:
    return dict((await call(session, "get_state"))["state"])


def refused(payload: dict[str, Any], code: str) -> dict[str, Any]:
    """Assert a structured refusal with that code and a fix_hint; return the error."""
    assert error_code(payload) == code, payload
    assert payload["error"]["fix_hint"], payload
    return dict(payload["error"])


async def approve(lab_file: Path, action_id: str) -> None:
    """A person approves through the real ``labwright`` command in a subprocess."""
    done = await anyio.to_thread.run_sync(
        lambda: labwright("approve-action", HS, action_id, "--config", str(lab_file))
    )
    assert done.returncode == 0, done.stderr


async def wait_until(check: Callable[[], Any], timeout: float = 5) -> None:
    with anyio.fail_after(timeout):
        while not check():
            await anyio.sleep(0.01)


def types_of(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events]


def protocol(*steps: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {"name": "hs", "steps": [{"command": c, "args": a} for c, a in steps]}


# --------------------------------------------------------------------------- tools


async def test_every_command_is_a_tool_whose_description_gives_units_ranges_and_codes(
    tmp_path: Path,
) -> None:
    async with served(tmp_path, plate=False) as (s, _, _, _):
        tools = {t.name: t for t in (await s.list_tools()).tools}
    assert set(COMMANDS) <= tools.keys()
    assert {"get_state", "read_back", "start_run", "run_events", "emergency_stop"} <= tools.keys()
    assert "degrees Celsius" in (tools["set_temperature"].description or "")
    assert "revolutions per minute" in (tools["shake"].description or "")
    assert "HARDWARE_TIMEOUT" in (tools["wait_for_temperature"].description or "")
    assert "PRECONDITION_FAILED" in (tools["unlock_plate"].description or "")
    for name in COMMANDS:
        props = tools[name].inputSchema["properties"]
        assert props["dry_run"]["default"] is True and "action_id" in props


async def test_a_plate_put_on_the_holder_is_learned_by_read_back_as_a_deviation(
    tmp_path: Path,
) -> None:
    async with served(tmp_path, plate=False) as (s, _, world, _):
        assert (await state(s))["plate"] is None
        world.place_plate(PLATE, HOLDER)
        back = await call(s, "read_back")
        assert {"what": "plate", "expected": None, "observed": PLATE} in back["deviations"]
        after = await state(s)
        assert after["plate"] == PLATE
        assert after["labware"][PLATE]["type"] == "cor_96_wellplate_360uL_Fb"


async def test_lock_and_unlock_move_the_clamp_in_the_world(tmp_path: Path) -> None:
    async with served(tmp_path) as (s, _, world, _):
        locked = await execute(s, "lock_plate", "lock-1")
        assert locked["state"]["locked"] is True and world.status(HS)["locked"] is True
        unlocked = await execute(s, "unlock_plate", "unlock-1")
        assert unlocked["state"]["locked"] is False and world.status(HS)["locked"] is False


async def test_set_temperature_returns_at_once_while_the_block_ramps(tmp_path: Path) -> None:
    async with served(tmp_path) as (s, _, world, _):
        done = await execute(s, "set_temperature", "heat-1", celsius=50)
        assert done["state"]["target_c"] == 50 and world.status(HS)["target_c"] == 50
        assert done["state"]["current_c"] < 30  # 28 C to climb at 10 C/min: minutes, not done


async def test_stop_switches_the_heater_and_the_motor_off(tmp_path: Path) -> None:
    async with served(tmp_path) as (s, _, world, _):
        await execute(s, "set_temperature", "heat-1", celsius=45)
        world.set_status(HS, shaking=True, rpm=500)  # started at the instrument's panel
        stopped = await execute(s, "stop", "stop-1")
        assert stopped["state"]["target_c"] is None and stopped["state"]["shaking"] is False
        assert world.status(HS)["target_c"] is None and world.status(HS)["shaking"] is False


async def test_setting_37_c_and_waiting_in_a_run_reports_temperature_reached(
    tmp_path: Path,
) -> None:
    async with served(tmp_path) as (s, rt, world, _):
        warm = protocol(("set_temperature", {"celsius": 37}), ("wait_for_temperature", {}))
        started = await call(s, "start_run", protocol=warm, dry_run=False, run_key="warm")
        run = await finished_run(s, started["run_id"])
        assert run["status"] == "completed"
        reached = [e for e in run["events"] if e["type"] == "temperature_reached"]
        assert len(reached) == 1 and reached[0]["data"]["target_c"] == 37
        assert abs(reached[0]["data"]["current_c"] - 37) <= 0.5
        assert "protocol_completed" in types_of(run["events"])
        assert world.status(HS)["target_c"] == 37
        assert abs(await rt.driver.adapter.backend.get_current_temperature() - 37) <= 0.5


async def test_a_dry_run_of_a_warm_up_predicts_the_same_events_and_moves_nothing(
    tmp_path: Path,
) -> None:
    async with served(tmp_path) as (s, _, world, _):
        before = world.status(HS)
        warm = protocol(("set_temperature", {"celsius": 37}), ("wait_for_temperature", {}))
        started = await call(s, "start_run", protocol=warm)
        run = await finished_run(s, started["run_id"])
        assert run["status"] == "completed"
        assert "temperature_reached" in types_of(run["events"])
        assert world.status(HS) == before


async def test_a_dry_run_says_what_each_step_uses_and_how_long_it_takes(tmp_path: Path) -> None:
    """The footprint the task agent's timeline is built from: the plate on the holder, and
    instrument seconds (a wait is the ramp from the believed temperature, a shake its own
    duration), on each step_completed event of a dry run."""
    async with served(tmp_path) as (s, _, _, _):
        steps = protocol(
            ("set_temperature", {"celsius": 37}),
            ("wait_for_temperature", {}),
            ("lock_plate", {}),
            ("shake", {"rpm": 600, "duration_s": 120}),
        )
        run = await finished_run(s, (await call(s, "start_run", protocol=steps))["run_id"])
        done = [e["data"] for e in run["events"] if e["type"] == "step_completed"]
        assert [d["labware"] for d in done] == [[PLATE]] * 4
        # 22 C -> 37 C at the default 10 C/min: 90 s.
        assert [d["seconds"] for d in done] == [1.0, 90.0, 2.0, 120.0]


async def test_a_timed_shake_at_37_c_shakes_the_locked_plate_and_ends_stopped(
    tmp_path: Path,
) -> None:
    async with served(tmp_path) as (s, _, world, _):
        steps = protocol(
            ("lock_plate", {}),
            ("set_temperature", {"celsius": 37}),
            ("wait_for_temperature", {"tolerance_c": 0.5}),
            ("shake", {"rpm": 800, "duration_s": 300}),
            ("unlock_plate", {}),
        )
        started = await call(s, "start_run", protocol=steps, dry_run=False)
        await wait_until(lambda: world.status(HS).get("shaking") is True)
        assert world.status(HS)["rpm"] == 800 and world.status(HS)["locked"] is True
        run = await finished_run(s, started["run_id"])
        assert run["status"] == "completed", run["events"][-2:]
        shaken = [e["data"] for e in run["events"] if e["type"] == "shake_completed"]
        assert shaken and shaken[0]["rpm"] == 800 and shaken[0]["duration_s"] == 300
        final = world.status(HS)
        assert final["shaking"] is False and final["locked"] is False and final["target_c"] == 37
        assert world.incidents(HS) == []


async def test_a_timed_hold_at_37_c_incubates_the_plate_without_shaking(tmp_path: Path) -> None:
    async with served(tmp_path) as (s, _, world, _):
        steps = protocol(
            ("set_temperature", {"celsius": 37}),
            ("wait_for_temperature", {}),
            ("hold", {"duration_s": 600}),
            ("stop", {}),
        )
        started = await call(s, "start_run", protocol=steps, dry_run=False)
        run = await finished_run(s, started["run_id"])
        assert run["status"] == "completed", run["events"][-2:]
        held = [e["data"] for e in run["events"] if e["type"] == "hold_completed"]
        assert [(h["duration_s"], h["target_c"]) for h in held] == [(600, 37)]
        assert world.status(HS)["shaking"] is False and world.incidents(HS) == []


async def test_holding_with_no_plate_on_the_holder_is_a_failed_precondition(
    tmp_path: Path,
) -> None:
    async with served(tmp_path, plate=False) as (s, _, _, _):
        refused(await call(s, "hold", duration_s=60), "PRECONDITION_FAILED")


# --------------------------------------------------------------------------- validation


async def test_a_temperature_outside_the_block_range_is_out_of_range(tmp_path: Path) -> None:
    async with served(tmp_path) as (s, _, world, _):
        refused(await call(s, "set_temperature", celsius=2), "OUT_OF_RANGE")
        refused(await execute(s, "set_temperature", "cold", celsius=2), "OUT_OF_RANGE")
        assert world.status(HS)["target_c"] is None


async def test_a_speed_outside_the_shaker_range_is_out_of_range(tmp_path: Path) -> None:
    async with served(tmp_path) as (s, _, world, _):
        await execute(s, "lock_plate", "lock-1")
        refused(await execute(s, "shake", "slow", rpm=100, duration_s=10), "OUT_OF_RANGE")
        assert world.status(HS)["shaking"] is False


async def test_locking_with_no_plate_on_the_holder_is_a_failed_precondition(
    tmp_path: Path,
) -> None:
    async with served(tmp_path, plate=False) as (s, _, world, _):
        refused(await execute(s, "lock_plate", "lock-1"), "PRECONDITION_FAILED")
        assert world.status(HS)["locked"] is False


async def test_shaking_after_the_plate_was_taken_away_is_a_failed_precondition(
    tmp_path: Path,
) -> None:
    async with served(tmp_path) as (s, _, world, _):
        await execute(s, "lock_plate", "lock-1")
        world.conn.execute("UPDATE plates SET location=? WHERE labware=?", ("hotel:1", PLATE))
        await call(s, "read_back")
        refused(await execute(s, "shake", "shake-1", rpm=500, duration_s=10), "PRECONDITION_FAILED")
        assert world.status(HS)["shaking"] is False


async def test_waiting_with_no_target_is_a_failed_precondition(tmp_path: Path) -> None:
    async with served(tmp_path) as (s, _, _, _):
        refused(await execute(s, "wait_for_temperature", "wait-1"), "PRECONDITION_FAILED")


async def test_a_badly_typed_argument_is_an_invalid_argument(tmp_path: Path) -> None:
    async with served(tmp_path) as (s, _, _, _):
        refused(await call(s, "set_temperature", celsius="hot"), "INVALID_ARGUMENT")
        refused(await call(s, "shake", rpm=500), "INVALID_ARGUMENT")


async def test_dry_runs_leave_the_twin_and_the_world_untouched(tmp_path: Path) -> None:
    async with served(tmp_path) as (s, _, world, _):
        before, world_before = await state(s), world.status(HS)
        for tool, args in [
            ("lock_plate", {}),
            ("set_temperature", {"celsius": 37}),
            ("stop", {}),
            ("unlock_plate", {}),
        ]:
            dry = await call(s, tool, **args)
            assert dry["ok"] is True and dry["dry_run"] is True
        predicted = (await call(s, "set_temperature", celsius=37))["state"]
        assert predicted["target_c"] == 37
        assert await state(s) == before and world.status(HS) == world_before


async def test_a_restarted_server_is_stale_until_read_back_and_keeps_its_belief(
    tmp_path: Path,
) -> None:
    async with served(tmp_path) as (s, _, _, lab_file):
        await execute(s, "lock_plate", "lock-1")
    lab = load(lab_file)
    async with (
        open_runtime(lab.instrument(HS), lab.db_path, lab.world_path) as rt,
        create_connected_server_and_client_session(build_server(rt)) as s,
    ):
        believed = await state(s)
        assert believed["stale"] and believed["locked"] is True and believed["plate"] == PLATE
        refused(await execute(s, "unlock_plate", "unlock-1"), "STATE_STALE")
        assert (await call(s, "read_back"))["deviations"] == []
        assert (await execute(s, "unlock_plate", "unlock-1"))["ok"] is True


# --------------------------------------------------------------------------- policies


async def test_a_temperature_above_the_hard_limit_is_denied_even_as_a_dry_run(
    tmp_path: Path,
) -> None:
    async with served(tmp_path) as (s, _, world, _):
        for payload in (
            await call(s, "set_temperature", celsius=90),
            await execute(s, "set_temperature", "hot", celsius=90),
        ):
            assert refused(payload, "POLICY_DENIED")["extra"]["rule"] == "temperature_hard_limit"
        assert world.status(HS)["target_c"] is None


async def test_a_warm_temperature_runs_only_after_a_person_approves_it(tmp_path: Path) -> None:
    async with served(tmp_path) as (s, _, world, lab_file):
        dry = await call(s, "set_temperature", celsius=65)
        assert dry["ok"] is True and dry["warnings"]
        first = await execute(s, "set_temperature", "warm-65", celsius=65)
        assert refused(first, "APPROVAL_REQUIRED")["extra"]["rule"] == (
            "warm_temperature_needs_person"
        )
        assert world.status(HS)["target_c"] is None
        in_run = protocol(("set_temperature", {"celsius": 65}))
        refused(await call(s, "start_run", protocol=in_run, dry_run=False), "APPROVAL_REQUIRED")
        await approve(lab_file, "warm-65")
        again = await execute(s, "set_temperature", "warm-65", celsius=65)
        assert again["ok"] is True and world.status(HS)["target_c"] == 65


async def test_shaking_an_unlocked_plate_is_denied_by_policy(tmp_path: Path) -> None:
    async with served(tmp_path) as (s, _, world, _):
        payload = await execute(s, "shake", "shake-1", rpm=500, duration_s=10)
        assert refused(payload, "POLICY_DENIED")["extra"]["rule"] == "shake_only_locked_plate"
        unlocked = protocol(("shake", {"rpm": 500, "duration_s": 10}))
        refused(await call(s, "start_run", protocol=unlocked), "POLICY_DENIED")
        assert world.status(HS)["shaking"] is False and world.incidents(HS) == []


async def test_a_run_that_locks_before_it_shakes_passes_the_lock_rule(tmp_path: Path) -> None:
    async with served(tmp_path) as (s, _, _, _):
        steps = protocol(("lock_plate", {}), ("shake", {"rpm": 500, "duration_s": 10}))
        started = await call(s, "start_run", protocol=steps)
        assert (await finished_run(s, started["run_id"]))["status"] == "completed"


async def test_shaking_faster_than_the_policy_allows_is_denied(tmp_path: Path) -> None:
    async with served(tmp_path) as (s, _, _, _):
        await execute(s, "lock_plate", "lock-1")
        payload = await execute(s, "shake", "fast", rpm=2500, duration_s=10)
        assert refused(payload, "POLICY_DENIED")["extra"]["rule"] == "max_shake_speed"


async def test_the_policy_resource_lists_the_heater_shaker_rules(tmp_path: Path) -> None:
    async with served(tmp_path, plate=False) as (s, _, _, _):
        res = await s.read_resource(f"lab://{HS}/policy")  # type: ignore[arg-type]
        rules = {r["id"] for r in json.loads(res.contents[0].text)["rules"]}  # type: ignore[union-attr]
    assert {
        "temperature_hard_limit",
        "warm_temperature_needs_person",
        "max_shake_speed",
        "shake_only_locked_plate",
    } <= rules


# --------------------------------------------------------------------------- faults


async def test_a_block_that_never_reaches_its_target_times_out_and_stales_the_twin(
    tmp_path: Path,
) -> None:
    async with served(tmp_path) as (s, _, world, _):
        stall = {"kind": "temperature_never_reached", "match": {"op": "set_temperature"}}
        world.add_fault(HS, stall)
        await execute(s, "set_temperature", "heat-1", celsius=37)
        with anyio.fail_after(10):  # 600 s of instrument time is one real second
            waited = await execute(s, "wait_for_temperature", "wait-1", timeout_s=600)
        error = refused(waited, "HARDWARE_TIMEOUT")
        assert error["defined"] is False
        refused(await execute(s, "stop", "stop-1"), "STATE_STALE")
        back = await call(s, "read_back")
        assert back["stale"] is None and back["state"]["current_c"] < 36.5
        assert (await execute(s, "stop", "stop-1"))["ok"] is True


async def test_a_lost_connection_is_reported_and_the_twin_is_stale(tmp_path: Path) -> None:
    async with served(tmp_path) as (s, _, world, _):
        world.add_fault(HS, {"kind": "disconnect", "match": {"op": "lock_plate"}})
        error = refused(await execute(s, "lock_plate", "lock-1"), "CONNECTION_LOST")
        assert error["defined"] is False and world.status(HS)["locked"] is False
        refused(await execute(s, "lock_plate", "lock-2"), "STATE_STALE")
        await call(s, "read_back")
        assert (await execute(s, "lock_plate", "lock-2"))["state"]["locked"] is True


async def test_a_hanging_instrument_times_out_within_the_command_timeout(tmp_path: Path) -> None:
    async with served(tmp_path, command_timeout_s=0.3) as (s, _, world, _):
        world.add_fault(HS, {"kind": "hang", "match": {"op": "set_temperature"}})
        with anyio.fail_after(10):  # the hang itself lasts an hour
            payload = await execute(s, "set_temperature", "heat-1", celsius=37)
        assert refused(payload, "HARDWARE_TIMEOUT")["defined"] is False
        assert (await state(s))["stale"]


@pytest.mark.parametrize(
    ("delay_s", "code"), [(0.25, None), (0.35, "HARDWARE_TIMEOUT")], ids=["within", "beyond"]
)
async def test_a_shake_times_out_when_a_slow_start_and_its_duration_exceed_its_time(
    tmp_path: Path, delay_s: float, code: str | None
) -> None:
    """A shake may take its duration (60 s: 0.1 real s) + command_timeout_s (0.3 s) of the
    instrument's time; a start slower than 0.3 s leaves too little for the shake itself."""
    async with served(tmp_path, command_timeout_s=0.3) as (s, _, world, _):
        await execute(s, "lock_plate", "lock-1")
        slow = {"kind": "delay", "match": {"op": "start_shaking"}, "params": {"seconds": delay_s}}
        world.add_fault(HS, slow)
        with anyio.fail_after(10):
            shaken = await execute(s, "shake", "shake-1", rpm=700, duration_s=60)
        if code is None:
            assert shaken["ok"] is True and world.status(HS)["shaking"] is False
        else:
            assert refused(shaken, code)["defined"] is False


async def test_an_unknown_firmware_state_is_an_adapter_fault(tmp_path: Path) -> None:
    async with served(tmp_path) as (s, _, world, _):
        world.add_fault(HS, {"kind": "adapter_fault", "match": {"op": "unlock_plate"}})
        assert refused(await execute(s, "unlock_plate", "u-1"), "ADAPTER_FAULT")["defined"] is False


async def test_a_shake_that_lost_the_connection_keeps_shaking_so_unlock_waits_for_stop(
    tmp_path: Path,
) -> None:
    async with served(tmp_path) as (s, _, world, _):
        world.add_fault(HS, {"kind": "disconnect", "match": {"op": "stop_shaking"}})
        await execute(s, "lock_plate", "lock-1")
        refused(await execute(s, "shake", "shake-1", rpm=600, duration_s=60), "CONNECTION_LOST")
        assert world.status(HS)["shaking"] is True
        back = await call(s, "read_back")
        assert {"what": "shaking", "expected": False, "observed": True} in back["deviations"]
        refused(await execute(s, "unlock_plate", "unlock-1"), "PRECONDITION_FAILED")
        assert world.status(HS)["locked"] is True
        await execute(s, "stop", "stop-1")
        assert (await execute(s, "unlock_plate", "unlock-1"))["ok"] is True
        assert world.status(HS)["shaking"] is False and world.status(HS)["locked"] is False


async def test_a_configured_delay_slows_an_action_but_it_completes(tmp_path: Path) -> None:
    faults = [{"kind": "delay", "match": {"op": "lock_plate"}, "params": {"seconds": 0.1}}]
    async with served(tmp_path, faults=faults) as (s, _, world, _):
        assert (await execute(s, "lock_plate", "lock-1"))["ok"] is True
        assert world.status(HS)["locked"] is True


# --------------------------------------------------------------------------- stops


async def test_emergency_stop_stops_a_shake_in_the_world_and_latches(tmp_path: Path) -> None:
    async with served(tmp_path) as (s, _, world, lab_file):
        await execute(s, "lock_plate", "lock-1")
        await execute(s, "set_temperature", "heat-1", celsius=37)
        long = protocol(("shake", {"rpm": 700, "duration_s": 6000}))  # ten real seconds
        started = await call(s, "start_run", protocol=long, dry_run=False)
        await wait_until(lambda: world.status(HS).get("shaking") is True)
        with anyio.fail_after(10):
            stopped = await call(s, "emergency_stop")
        assert started["run_id"] in stopped["cancelled_runs"]
        assert world.status(HS)["shaking"] is False and world.status(HS)["target_c"] is None
        run = await finished_run(s, started["run_id"])
        assert run["status"] == "cancelled" and "estop" in types_of(run["events"])
        refused(await execute(s, "lock_plate", "lock-2"), "ESTOP_ACTIVE")
        refused(await call(s, "reset_estop", action_id="reset-1"), "APPROVAL_REQUIRED")
        await approve(lab_file, "reset-1")
        assert (await call(s, "reset_estop", action_id="reset-1"))["ok"] is True
        refused(await execute(s, "stop", "stop-1"), "STATE_STALE")
        await call(s, "read_back")
        assert (await execute(s, "stop", "stop-1"))["ok"] is True


async def test_cancelling_a_shaking_run_stops_the_motor(tmp_path: Path) -> None:
    async with served(tmp_path) as (s, _, world, _):
        await execute(s, "lock_plate", "lock-1")
        long = protocol(("shake", {"rpm": 700, "duration_s": 6000}), ("unlock_plate", {}))
        started = await call(s, "start_run", protocol=long, dry_run=False)
        await wait_until(lambda: world.status(HS).get("shaking") is True)
        with anyio.fail_after(10):
            info = await call(s, "cancel_run", run_id=started["run_id"])
        assert info["status"] == "cancelled" and info["steps_done"] == 0
        assert (await call(s, "get_run", run_id=started["run_id"]))["status"] == "cancelled"
        assert world.status(HS)["shaking"] is False and world.status(HS)["locked"] is True


# --------------------------------------------------------------------------- a real process


@contextlib.asynccontextmanager
async def hs_process(
    lab_file: Path, errlog: Any, trace: StdioTrace
) -> AsyncIterator[ClientSession]:
    """``labwright serve hs1`` spawned over stdio, initialized."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "labwright", "serve", HS, "--config", str(lab_file)],
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


@pytest.mark.slow
async def test_a_process_that_crashes_mid_shake_leaves_the_shake_in_doubt(
    tmp_path: Path,
) -> None:
    async with served(tmp_path) as (s, _, world, lab_file):
        await execute(s, "lock_plate", "lock-1")
    world.add_fault(HS, {"kind": "crash", "match": {"op": "start_shaking"}})
    shake = {"rpm": 600, "duration_s": 60, "dry_run": False, "action_id": "crash-1"}
    trace = StdioTrace()
    with (tmp_path / "server.log").open("w") as errlog:
        async with hs_process(lab_file, errlog, trace) as session:
            assert (await call(session, "read_back"))["state"]["locked"] is True
            with pytest.raises(McpError), anyio.fail_after(STARTUP_S):
                await session.call_tool("shake", shake)
        assert world.status(HS)["shaking"] is True  # the motor started before the crash
        async with hs_process(lab_file, errlog, trace) as session:
            with anyio.fail_after(STARTUP_S):
                refused(await call(session, "shake", **shake), "ACTION_IN_DOUBT")
                back = await call(session, "read_back")
                assert back["in_doubt_actions"] == ["crash-1"]
                assert back["state"]["shaking"] is True
                assert (await execute(session, "stop", "stop-1"))["ok"] is True
    assert world.status(HS)["shaking"] is False
    assert trace.garbage == []  # nothing but MCP on the server's stdout
