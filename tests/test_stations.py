"""How a plate reaches an instrument is one description each instrument publishes (its
stations, in get_state): the arm's gate, the simulated world, the planner and the task
simulation read it, and a place nobody describes is never ready."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, call, error_code
from test_plate_mover import DRAWER, START, arm_lab, move
from test_rule_planner import make_lab

from agents.task.planning import Refusal, RulePlanner
from device_servers.contract import (
    Requirement,
    Station,
    after_command,
    find_station,
    station_ready,
)
from device_servers.factory import open_runtime
from device_servers.lab import load
from device_servers.plate_reader.config import PlateReaderConfig
from device_servers.sim.world import PhysicalError, SimWorld

pytestmark = pytest.mark.anyio

DOOR = Station(
    place="inc1:door",
    instrument="inc1",
    requires=(Requirement(fact="door_open", made_by="open_door", undone_by="close_door"),),
)


def test_a_station_is_ready_only_when_every_fact_it_needs_holds() -> None:
    assert station_ready(DOOR, {"door_open": True}) is True
    assert station_ready(DOOR, {"door_open": False}) is False
    assert station_ready(DOOR, {}) is None  # cannot tell: not ready either
    assert station_ready(DOOR, None) is None
    assert station_ready(None, {"door_open": True}) is False  # nobody describes the place
    assert station_ready(Station(place="hotel:1", instrument="hotel", role="shelf"), None)
    (drawer,) = PlateReaderConfig(kind="plate_reader", id="reader1").stations()
    assert station_ready(drawer, {"drawer_open": True})  # busy is reported only while it acts
    assert not station_ready(drawer, {"drawer_open": True, "busy": True})


def test_the_commands_a_station_names_change_its_facts() -> None:
    facts: dict[str, Any] = {}
    after_command([DOOR], "open_door", facts)
    assert facts == {"door_open": True}
    after_command([DOOR], "close_door", facts)
    assert facts == {"door_open": False}


async def test_every_instrument_publishes_its_stations_and_their_facts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LABWRIGHT_STATE_DIR", str(tmp_path))
    lab = load(ROOT / "examples" / "lab.yaml")
    published: dict[str, dict[str, Any]] = {}
    for inst in lab.instruments:
        async with open_runtime(inst, lab.db_path, lab.world_path) as rt:
            published[inst.id] = rt.state()
    reader = published["reader1"]
    (drawer,) = [Station.model_validate(s) for s in reader["stations"]]
    assert drawer.place == "reader1:drawer" and drawer.after_enter == "close_drawer"
    assert {r.fact for r in drawer.requires} == {"drawer_open", "busy"}
    assert reader["facts"]["drawer_open"] is False and reader["facts"]["busy"] is False
    holder = Station.model_validate(published["hs1"]["stations"][0])
    assert {r.fact: r.equals for r in holder.requires} == {"locked": False, "shaking": False}
    assert published["hs1"]["facts"]["locked"] is False
    homes = [Station.model_validate(s) for s in published["lh1"]["stations"]]
    slot = find_station(homes, "lh1:plate_carrier:3")  # an empty slot of a carrier
    assert slot is not None and slot.role == "home" and not slot.requires
    assert {s["role"] for s in published["arm1"]["stations"]} == {"shelf"}
    # Every place the arm reaches is described by someone.
    described = [Station.model_validate(s) for st in published.values() for s in st["stations"]]
    for where in lab.instrument("arm1").locations:  # type: ignore[attr-defined]
        assert find_station(described, where) is not None, where


async def test_a_closed_drawer_stops_the_arm_and_an_open_one_lets_it_in(tmp_path: Path) -> None:
    async with arm_lab(tmp_path) as (session, _, world):
        world.set_status("reader1", drawer_open=False, busy=False)
        refused = await move(session, DRAWER, "m-1")
        assert error_code(refused) == "POLICY_DENIED"
        assert refused["error"]["extra"]["rule"] == "destination_instrument_ready"
        assert world.location_of("plate_1") == START and not world.physical_ops("arm1")
        world.set_status("reader1", drawer_open=True)
        assert (await move(session, DRAWER, "m-2"))["ok"] is True
        assert world.location_of("plate_1") == DRAWER


async def test_a_place_no_instrument_describes_is_not_ready(tmp_path: Path) -> None:
    def add_tray(arm: dict[str, Any]) -> None:
        arm["locations"] = [*arm["locations"], "reader1:tray"]

    async with arm_lab(tmp_path, add_tray) as (session, _, world):
        world.set_status("reader1", drawer_open=True, busy=False)
        refused = await move(session, "reader1:tray", "m-1")
        assert error_code(refused) == "POLICY_DENIED"
        assert refused["error"]["extra"]["rule"] == "destination_instrument_ready"
        assert world.location_of("plate_1") == START and not world.physical_ops("arm1")
        dry = await call(session, "move_plate", plate="plate_1", to_location="reader1:tray")
        assert error_code(dry) == "POLICY_DENIED"


def test_the_world_refuses_a_plate_through_a_closed_place(tmp_path: Path) -> None:
    world = SimWorld(tmp_path / "world.sqlite")
    world.set_stations("reader1", PlateReaderConfig(kind="plate_reader", id="reader1").stations())
    world.set_status("reader1", drawer_open=False, busy=False)
    world.place_plate("plate_1", "arm1:gripper")
    with pytest.raises(PhysicalError) as info:
        world.put_plate("plate_1", "arm1:gripper", "reader1:drawer")
    assert info.value.kind == "blocked"
    assert world.location_of("plate_1") == "arm1:gripper"
    assert [i["kind"] for i in world.incidents("arm1")] == ["blocked_place"]
    world.set_status("reader1", drawer_open=True)
    world.put_plate("plate_1", "arm1:gripper", "reader1:drawer")
    assert world.plate_at("reader1:drawer") == "plate_1"


def test_the_planner_refuses_to_send_the_arm_where_no_instrument_says_how() -> None:
    lab = make_lab()
    undescribed = lab.model_copy(
        update={"stations": {p: s for p, s in lab.stations.items() if p != "hotel:1"}}
    )
    result = RulePlanner().plan("move plate_1 to hotel 1", undescribed)
    assert isinstance(result, Refusal)
    assert "hotel:1" in result.reason
    assert not isinstance(RulePlanner().plan("move plate_1 to hotel 1", lab), Refusal)
