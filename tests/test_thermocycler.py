"""The thermocycler device server through a real MCP client session.

The simulated block ramps at 3 C per second and the lab runs it 600 times faster than the wall
clock, so a 35-cycle PCR profile takes seconds. Outcomes are judged from the simulated world
(ground truth), never from what the server says about itself.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import (
    call,
    error_code,
    execute,
    finished_run,
    labwright,
    served_instrument,
    write_lab,
)
from mcp import ClientSession
from mcp.shared.memory import create_connected_server_and_client_session

from device_servers.factory import open_runtime
from device_servers.lab import load
from device_servers.runtime import InstrumentRuntime
from device_servers.server import build_server
from device_servers.sim.world import PhysicalError, SimWorld

pytestmark = pytest.mark.anyio

TC = "tc1"
BLOCK = "tc1:block"
PLATE = "plate_1"
COMMANDS = (
    "open_lid",
    "close_lid",
    "set_block_temperature",
    "set_lid_temperature",
    "run_profile",
    "stop",
)
PCR = [
    {"steps": [{"celsius": 95, "hold_s": 120}], "repeats": 1},
    {"steps": [{"celsius": 95, "hold_s": 15}, {"celsius": 60, "hold_s": 30}], "repeats": 3},
]


@contextlib.asynccontextmanager
async def served(
    tmp_path: Path, plate: bool = True, **fields: Any
) -> AsyncIterator[tuple[ClientSession, InstrumentRuntime, SimWorld, Path]]:
    """The test lab plus a fast thermocycler, served over MCP. With ``plate``, plate_1 sits on
    the block (the world says so) and the server has read it back."""
    entry = {"id": TC, "kind": "thermocycler", "time_scale": 600, "command_timeout_s": 2, **fields}
    async with served_instrument(tmp_path, entry, BLOCK if plate else None) as served_:
        yield served_


def profile_run(**args: Any) -> dict[str, Any]:
    return {"name": "pcr", "steps": [{"command": "run_profile", "args": {"stages": PCR, **args}}]}


def refused(payload: dict[str, Any], code: str) -> dict[str, Any]:
    assert error_code(payload) == code, payload
    assert payload["error"]["fix_hint"], payload
    return dict(payload["error"])


# --------------------------------------------------------------------------- surface


async def test_its_commands_are_tools_and_its_block_is_a_station(tmp_path: Path) -> None:
    async with served(tmp_path, plate=False) as (session, _, _, _):
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert set(COMMANDS) <= tools.keys()
        assert "cycle_completed" in (tools["run_profile"].description or "")
        state = (await call(session, "get_state"))["state"]
        (station,) = state["stations"]
        assert station["place"] == BLOCK
        assert {r["fact"] for r in station["requires"]} == {"lid_open", "running"}
        assert state["facts"]["lid_open"] is True and state["facts"]["running"] is False


# --------------------------------------------------------------------------- lid and heaters


async def test_lid_and_temperatures_act_on_the_world(tmp_path: Path) -> None:
    async with served(tmp_path) as (session, _, world, _):
        assert (await execute(session, "close_lid", "c-1"))["ok"] is True
        assert world.status(TC)["lid_open"] is False
        await execute(session, "set_lid_temperature", "l-1", celsius=105)
        await execute(session, "set_block_temperature", "b-1", celsius=4)
        assert world.status(TC)["block_target"] == 4 and world.status(TC)["lid_target"] == 105
        stopped = await execute(session, "stop", "s-1")
        assert stopped["state"]["block_target_c"] is None
        assert world.status(TC)["block_target"] is None and world.status(TC)["lid_target"] is None


@pytest.mark.parametrize(
    ("tool", "celsius", "code"),
    [
        ("set_block_temperature", 100, "POLICY_DENIED"),  # the rules: 4 to 99 C
        ("set_block_temperature", 2, "POLICY_DENIED"),
        ("set_block_temperature", 120, "POLICY_DENIED"),  # the rule comes before the range
        ("set_lid_temperature", 112, "POLICY_DENIED"),  # the rules: lid at most 110 C
        ("set_lid_temperature", 10, "OUT_OF_RANGE"),  # below what the lid can do
    ],
)
async def test_temperatures_beyond_the_rules_or_the_machine_are_refused(
    tmp_path: Path, tool: str, celsius: float, code: str
) -> None:
    async with served(tmp_path, plate=False) as (session, _, world, _):
        refused(await call(session, tool, celsius=celsius), code)
        refused(await execute(session, tool, "t-1", celsius=celsius), code)
        assert world.status(TC).get("block_target") is None


# --------------------------------------------------------------------------- profiles


async def test_a_profile_runs_fire_and_poll_with_an_event_per_cycle(tmp_path: Path) -> None:
    async with served(tmp_path) as (session, _, world, _):
        await execute(session, "close_lid", "c-1")
        started = await call(
            session,
            "start_run",
            protocol=profile_run(lid_celsius=105),
            dry_run=False,
            run_key="pcr-1",
        )
        assert started["ok"] is True and started["status"] == "pending"
        run = await finished_run(session, started["run_id"])
        assert run["status"] == "completed", run
        cycles = [e["data"] for e in run["events"] if e["type"] == "cycle_completed"]
        assert [(c["stage"], c["cycle"], c["of"]) for c in cycles] == [
            (1, 1, 1),
            (2, 1, 3),
            (2, 2, 3),
            (2, 3, 3),
        ]
        assert all("predicted" not in c for c in cycles)  # measured by the instrument
        status = world.status(TC)
        assert status["cycles_done"] == 4 and status["running"] is False
        assert status["block_target"] == 60 and status["lid_target"] == 105
        again = await call(
            session,
            "start_run",
            protocol=profile_run(lid_celsius=105),
            dry_run=False,
            run_key="pcr-1",
        )
        assert again["existing"] is True and world.status(TC)["cycles_done"] == 4


async def test_a_dry_run_predicts_every_cycle_and_moves_nothing(tmp_path: Path) -> None:
    async with served(tmp_path) as (session, _, world, _):
        await execute(session, "close_lid", "c-1")
        predicted = await call(session, "run_profile", stages=PCR)
        assert predicted["ok"] is True and predicted["operations"] == 4
        kinds = [e["type"] for e in predicted["events"]]
        assert kinds.count("cycle_completed") == 4
        assert world.status(TC)["cycles_done"] == 0


async def test_a_profile_needs_the_lid_closed_and_a_plate(tmp_path: Path) -> None:
    async with served(tmp_path) as (session, _, world, _):
        refused(await execute(session, "run_profile", "p-1", stages=PCR), "POLICY_DENIED")
        assert world.status(TC)["cycles_done"] == 0
    (tmp_path / "empty").mkdir()
    async with served(tmp_path / "empty", plate=False) as (session, _, world, _):
        await execute(session, "close_lid", "c-1")
        refused(await execute(session, "run_profile", "p-1", stages=PCR), "PRECONDITION_FAILED")


async def test_a_profile_step_beyond_the_rules_is_denied(tmp_path: Path) -> None:
    hot = [{"steps": [{"celsius": 95, "hold_s": 15}, {"celsius": 101, "hold_s": 5}]}]
    async with served(tmp_path) as (session, _, world, _):
        await execute(session, "close_lid", "c-1")
        error = refused(await execute(session, "run_profile", "p-1", stages=hot), "POLICY_DENIED")
        assert error["extra"]["rule"] == "block_temperature_range"
        refused(
            await execute(session, "run_profile", "p-2", stages=PCR, lid_celsius=115),
            "POLICY_DENIED",
        )
        assert world.status(TC)["cycles_done"] == 0


async def test_a_profile_longer_than_the_limit_waits_for_a_person(tmp_path: Path) -> None:
    long = [
        {"steps": [{"celsius": 95, "hold_s": 60}, {"celsius": 60, "hold_s": 60}], "repeats": 61}
    ]
    async with served(tmp_path) as (session, _, world, lab_file):
        await execute(session, "close_lid", "c-1")
        dry = await call(session, "run_profile", stages=long)
        assert dry["ok"] is True and dry["needs_approval"] is True
        refused(await execute(session, "run_profile", "long-1", stages=long), "APPROVAL_REQUIRED")
        assert world.status(TC)["cycles_done"] == 0
        done = await anyio.to_thread.run_sync(
            lambda: labwright("approve-action", TC, "long-1", "--config", str(lab_file))
        )
        assert done.returncode == 0, done.stderr
        # Approved: it runs (61 cycles of 2 min at 600x: about 12 s of wall time is too slow
        # for a unit test, so the approval's effect is shown by the gate letting it through).
        started = await call(
            session,
            "start_run",
            dry_run=False,
            protocol={
                "name": "long",
                "steps": [{"command": "run_profile", "args": {"stages": long}}],
            },
        )
        refused(started, "APPROVAL_REQUIRED")  # a run needs per-action approval


async def test_cancelling_a_profile_stops_between_cycles_and_reports_how_far(
    tmp_path: Path,
) -> None:
    slow = [
        {"steps": [{"celsius": 95, "hold_s": 600}, {"celsius": 60, "hold_s": 600}], "repeats": 5}
    ]
    async with served(tmp_path, time_scale=100) as (session, _, world, _):
        await execute(session, "close_lid", "c-1")
        started = await call(
            session,
            "start_run",
            protocol={
                "name": "slow",
                "steps": [{"command": "run_profile", "args": {"stages": slow}}],
            },
            dry_run=False,
        )
        with anyio.fail_after(10):
            while not world.status(TC).get("running"):
                await anyio.sleep(0.01)
        cancelled = await call(session, "cancel_run", run_id=started["run_id"])
        assert cancelled["status"] == "cancelled"
        status = world.status(TC)
        assert status["running"] is False and status["block_target"] is None  # heaters off
        assert status["cycles_done"] < 5


@contextlib.asynccontextmanager
async def with_arm(tmp_path: Path) -> AsyncIterator[tuple[ClientSession, ClientSession, SimWorld]]:
    """The test lab with tc1 and an arm whose workspace has the block: both served."""

    def patch(data: dict[str, Any]) -> None:
        data["instruments"] += [
            {"id": TC, "kind": "thermocycler", "time_scale": 600, "command_timeout_s": 2},
            {
                "id": "arm1",
                "kind": "plate_mover",
                "locations": ["lh1:plate_carrier:1", BLOCK, "hotel:1"],
                "plates": [PLATE],
                "time_scale": 100,
                "command_timeout_s": 2,
            },
        ]

    lab = load(write_lab(tmp_path, patch))
    async with open_runtime(lab.instrument("lh1"), lab.db_path, lab.world_path):
        pass  # lays out lh1's deck in the world: plate_1 starts on it
    async with (
        open_runtime(lab.instrument(TC), lab.db_path, lab.world_path) as tc_rt,
        open_runtime(lab.instrument("arm1"), lab.db_path, lab.world_path) as arm_rt,
        create_connected_server_and_client_session(build_server(tc_rt)) as tc,
        create_connected_server_and_client_session(build_server(arm_rt)) as arm,
    ):
        yield tc, arm, SimWorld(lab.world_path)


async def test_a_closed_lid_stops_the_arm_and_an_open_one_lets_the_plate_in(
    tmp_path: Path,
) -> None:
    async with with_arm(tmp_path) as (tc, arm, world):
        await execute(tc, "close_lid", "c-1")
        move = {"plate": PLATE, "to_location": BLOCK}
        error = refused(await execute(arm, "move_plate", "m-1", **move), "POLICY_DENIED")
        assert error["extra"]["rule"] == "destination_instrument_ready"
        assert world.location_of(PLATE) == "lh1:plate_carrier:1"
        await execute(tc, "open_lid", "o-1")
        assert (await execute(arm, "move_plate", "m-2", **move))["ok"] is True
        assert world.location_of(PLATE) == BLOCK
        assert (await call(tc, "read_back"))["state"]["plate"] == PLATE
        await execute(tc, "close_lid", "c-2")
        out = {"plate": PLATE, "to_location": "hotel:1"}
        refused(await execute(arm, "move_plate", "m-3", **out), "POLICY_DENIED")
        assert world.location_of(PLATE) == BLOCK


def test_the_world_keeps_a_plate_in_while_the_lid_is_closed(tmp_path: Path) -> None:
    from device_servers.thermocycler.config import ThermocyclerConfig

    world = SimWorld(tmp_path / "world.sqlite")
    world.set_stations(TC, ThermocyclerConfig(kind="thermocycler", id=TC).stations())
    world.place_plate(PLATE, BLOCK)
    world.set_status(TC, lid_open=False, running=False)
    with pytest.raises(PhysicalError) as info:
        world.take_plate(PLATE, BLOCK, "arm1:gripper")
    assert info.value.kind == "blocked" and world.location_of(PLATE) == BLOCK
    world.set_status(TC, lid_open=True, running=True)  # a profile runs: still closed to arms
    with pytest.raises(PhysicalError):
        world.take_plate(PLATE, BLOCK, "arm1:gripper")
