"""The whole small lab at once: four MCP device servers on one simulated world.

Liquid handler (lh1), plate reader (reader1), heater-shaker (hs1) and plate mover (arm1) are
each served by their own MCP server over a real in-memory client session, all on one lab file
and so on one SimWorld. The world is the physical truth every outcome is judged from; each
server's twin is only belief and must discover what the others did by reading back.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import call, error_code, write_lab
from mcp import ClientSession
from mcp.shared.memory import create_connected_server_and_client_session

from device_servers.factory import open_runtime
from device_servers.lab import load
from device_servers.server import build_server
from device_servers.sim.world import SimWorld

pytestmark = pytest.mark.anyio

DECK = "lh1:plate_carrier:1"
DRAWER = "reader1:drawer"
HOLDER = "hs1:holder"
BLANK = 0.045
OD_PER_DYE_FRACTION = 2.0
NOISE_SD = 0.002
WAIT_S = 20.0
ROW = [f"A{c}" for c in range(1, 7)]  # a 2-fold dilution of dye: A1 pure .. A6 1/32
EMPTY_WELL = "H12"


def add_instruments(data: dict[str, Any]) -> None:
    lh = data["instruments"][0]
    lh["liquids"].append(
        {"labware": "reservoir", "wells": "A2", "liquid": "buffer", "volume_ul": 8000}
    )
    data["instruments"] += [
        {
            "id": "reader1",
            "kind": "plate_reader",
            "wavelength_range_nm": [230, 1000],
            "absorbance_blank": BLANK,
            "absorbance_per_fraction": {"dye": OD_PER_DYE_FRACTION},
            "noise_sd": NOISE_SD,
            "seed": 7,
        },
        {"id": "hs1", "kind": "heater_shaker", "time_scale": 600},
        {
            "id": "arm1",
            "kind": "plate_mover",
            "locations": [
                "lh1:plate_carrier:1",
                "lh1:plate_carrier:2",
                "lh1:plate_carrier:3",
                DRAWER,
                HOLDER,
                "hotel:1",
                "hotel:2",
            ],
            "plates": ["plate_1"],
            "time_scale": 200,
        },
    ]


class Lab:
    """The four served instruments and the world they share."""

    def __init__(self, sessions: dict[str, ClientSession], world: SimWorld) -> None:
        self.s = sessions
        self.world = world
        self._ids = itertools.count(1)

    async def act(self, instrument: str, tool: str, **args: Any) -> dict[str, Any]:
        """Execute (dry_run false) with a fresh action_id; return the payload, ok or not."""
        with anyio.fail_after(WAIT_S):
            return await call(
                self.s[instrument],
                tool,
                **args,
                dry_run=False,
                action_id=f"{instrument}-{tool}-{next(self._ids)}",
            )

    async def dry(self, instrument: str, tool: str, **args: Any) -> dict[str, Any]:
        with anyio.fail_after(WAIT_S):
            return await call(self.s[instrument], tool, **args)

    async def ok(self, instrument: str, tool: str, **args: Any) -> dict[str, Any]:
        done = await self.act(instrument, tool, **args)
        assert done["ok"] is True, done
        return done

    async def state(self, instrument: str) -> dict[str, Any]:
        return dict((await self.dry(instrument, "get_state"))["state"])

    async def move(self, to: str) -> dict[str, Any]:
        return await self.act("arm1", "move_plate", plate="plate_1", to_location=to)

    async def to_reader(self) -> None:
        """The sequence that puts plate_1 in the reader: open, move, close."""
        await self.ok("reader1", "open_drawer")
        await self.ok("arm1", "move_plate", plate="plate_1", to_location=DRAWER)
        await self.ok("reader1", "close_drawer")

    async def run(self, instrument: str, steps: list[dict[str, Any]]) -> dict[str, Any]:
        """A dry-run protocol on one instrument, waited for; its get_run."""
        started = await self.dry(
            instrument, "start_run", protocol={"name": "cross", "steps": steps}, dry_run=True
        )
        assert started["ok"] is True, started
        with anyio.fail_after(WAIT_S):
            while True:
                info = await call(self.s[instrument], "get_run", run_id=started["run_id"])
                if info["status"] not in ("pending", "running"):
                    return info
                await anyio.sleep(0.02)

    async def direct_events(self, instrument: str, kind: str) -> list[dict[str, Any]]:
        page = await self.dry(instrument, "run_events", run_id=f"{instrument}:direct", max=1000)
        return [e["data"] for e in page["events"] if e["type"] == kind]


@contextlib.asynccontextmanager
async def lab_of_four(tmp_path: Path) -> AsyncIterator[Lab]:
    lab = load(write_lab(tmp_path, add_instruments))
    async with contextlib.AsyncExitStack() as stack:
        sessions: dict[str, ClientSession] = {}
        # lh1 first: it lays out its deck, so the world knows where plate_1 starts.
        for inst in ("lh1", "reader1", "hs1", "arm1"):
            rt = await stack.enter_async_context(
                open_runtime(lab.instrument(inst), lab.db_path, lab.world_path)
            )
            sessions[inst] = await stack.enter_async_context(
                create_connected_server_and_client_session(build_server(rt))
            )
        world = SimWorld(lab.world_path)
        stack.callback(world.close)
        yield Lab(sessions, world)


@pytest.fixture
async def lab(tmp_path: Path) -> AsyncIterator[Lab]:
    with anyio.fail_after(60):
        async with lab_of_four(tmp_path) as served:
            yield served


async def dilute_row_a(lab: Lab) -> None:
    """A 2-fold serial dilution of dye along A1..A6 of plate_1, 100 uL per well at the end."""
    await lab.ok(
        "lh1",
        "transfer",
        source="reservoir",
        source_well="A2",
        destination="plate_1",
        destination_wells=ROW[1:],
        volume_ul=100,
        new_tip="once",
    )
    await lab.ok(
        "lh1",
        "transfer",
        source="reservoir",
        source_well="A1",
        destination="plate_1",
        destination_wells=["A1"],
        volume_ul=200,
    )
    for src, dst in itertools.pairwise(ROW):
        await lab.ok(
            "lh1",
            "transfer",
            source="plate_1",
            source_well=src,
            destination="plate_1",
            destination_wells=[dst],
            volume_ul=100,
            mix_after=3,
        )


def dye_fraction(well: dict[str, Any]) -> float:
    return float(well["contents"].get("dye", 0.0) / well["volume_ul"]) if well["volume_ul"] else 0.0


async def read_row(lab: Lab) -> dict[str, float]:
    read = await lab.ok(
        "reader1", "read_absorbance", plate="plate_1", wavelength_nm=600, wells=[*ROW, EMPTY_WELL]
    )
    (reading,) = read["measurements"]
    assert reading["plate"] == "plate_1" and reading["simulated"] is True
    return {w: float(v) for w, v in reading["values"].items()}


# --------------------------------------------------------------------------- contents travel


async def test_the_reader_measures_exactly_what_the_liquid_handler_put_in_the_plate(
    lab: Lab,
) -> None:
    await dilute_row_a(lab)
    wells = lab.world.wells("plate_1")
    fractions = [dye_fraction(wells[w]) for w in ROW]
    assert fractions == pytest.approx([1 / 2**i for i in range(6)], rel=1e-6)

    await lab.to_reader()
    assert lab.world.location_of("plate_1") == DRAWER
    assert lab.world.wells("plate_1") == wells  # the move carried the contents unchanged

    values = await read_row(lab)
    noise = 4 * NOISE_SD
    assert values[EMPTY_WELL] == pytest.approx(BLANK, abs=noise)
    for well, fraction in zip(ROW, fractions, strict=True):
        assert values[well] == pytest.approx(BLANK + OD_PER_DYE_FRACTION * fraction, abs=noise)
    above = [values[w] - values[EMPTY_WELL] for w in ROW]
    for previous, current in itertools.pairwise(above[:5]):  # A6 (0.06 OD) is near the noise
        assert current / previous == pytest.approx(0.5, abs=0.03)


async def test_each_server_offers_only_the_procedures_of_its_own_instrument(lab: Lab) -> None:
    prompts = {i: {p.name for p in (await s.list_prompts()).prompts} for i, s in lab.s.items()}
    assert prompts["lh1"] == {"serial_dilution", "recover_from_error"}
    for other in ("reader1", "hs1", "arm1"):
        assert prompts[other] == {"recover_from_error"}


# --------------------------------------------------------------------------- a failed grip


async def test_a_failed_grip_leaves_the_plate_where_it_is_and_the_reader_cannot_read_it(
    lab: Lab,
) -> None:
    # The next grip closes on nothing. The arm is not homed yet: its homing, the first motion,
    # must not use the fault up (an empty grasp can only happen on a pick).
    assert (await lab.state("arm1"))["homed"] is False
    lab.world.add_fault("arm1", {"kind": "empty_grasp", "times": 1})
    await lab.ok("reader1", "open_drawer")
    failed = await lab.move(DRAWER)
    assert error_code(failed) == "GRIP_FAILED"
    assert lab.world.location_of("plate_1") == DECK and lab.world.plate_at(DRAWER) is None
    assert (await lab.state("arm1"))["labware"]["plate_1"]["location"] == DECK

    await lab.ok("reader1", "close_drawer")
    assert (await lab.state("reader1"))["plate_in_reader"] is None
    assert (
        error_code(await lab.act("reader1", "read_absorbance", plate="plate_1", wavelength_nm=600))
        == "UNKNOWN_LABWARE"
    )

    # A retry of the same move (a new action) brings the plate, and then it reads.
    await lab.to_reader()
    assert lab.world.location_of("plate_1") == DRAWER
    assert (await lab.state("reader1"))["plate_in_reader"] == "plate_1"
    values = await read_row(lab)
    assert values["A1"] == pytest.approx(BLANK, abs=4 * NOISE_SD)  # nothing dispensed yet


# --------------------------------------------------------------------------- reader and plates


async def test_the_reader_cannot_read_a_plate_that_is_not_in_it(lab: Lab) -> None:
    # The plate is on the liquid handler's deck: the reader detects an empty drawer.
    seen = await lab.dry("reader1", "read_back")
    assert seen["state"]["plate_in_reader"] is None
    absent = await lab.act("reader1", "read_absorbance", plate="plate_1", wavelength_nm=600)
    assert error_code(absent) == "UNKNOWN_LABWARE" and absent["error"]["fix_hint"]

    # A caller who only claims the plate is there is corrected by the reader's own sensor.
    await lab.ok("reader1", "open_drawer")
    closed = await lab.ok("reader1", "close_drawer", expect_plate="plate_1")
    assert [d["what"] for d in closed["deviations"]] == ["plate_in_reader"]
    assert closed["deviations"][0]["expected"] == "plate_1"
    assert closed["deviations"][0]["observed"] is None
    refused = await lab.act("reader1", "read_absorbance", plate="plate_1", wavelength_nm=600)
    assert error_code(refused) == "UNKNOWN_LABWARE"

    # With plate_1 in the drawer, another plate of the lab still cannot be read.
    await lab.to_reader()
    other = await lab.act("reader1", "read_absorbance", plate="reservoir", wavelength_nm=600)
    assert error_code(other) == "UNKNOWN_LABWARE"
    assert lab.world.location_of("reservoir") != DRAWER


async def test_the_liquid_handler_refuses_a_plate_on_the_heater_shaker_until_it_is_back(
    lab: Lab,
) -> None:
    await lab.ok("lh1", "pick_up_tips", rack="tips_1")
    await lab.ok("lh1", "aspirate", labware="reservoir", wells=["A1"], volume_ul=50)
    await lab.ok("arm1", "move_plate", plate="plate_1", to_location=HOLDER)
    assert lab.world.location_of("plate_1") == HOLDER

    # The heater-shaker learns of the plate by reading back: a deviation from its belief.
    seen = await lab.dry("hs1", "read_back")
    assert {"what": "plate", "expected": None, "observed": "plate_1"} in seen["deviations"]

    before = lab.world.well("plate_1", "A3")
    refused = await lab.act("lh1", "dispense", labware="plate_1", wells=["A3"], volume_ul=50)
    assert error_code(refused) == "UNKNOWN_LABWARE"
    assert lab.world.well("plate_1", "A3") == before  # nothing dispensed onto the shaker
    # The twin now believes the plate gone: even the dry run is refused.
    assert (
        error_code(await lab.dry("lh1", "dispense", labware="plate_1", wells=["A3"], volume_ul=50))
        == "UNKNOWN_LABWARE"
    )

    await lab.ok("arm1", "move_plate", plate="plate_1", to_location=DECK)
    assert lab.world.location_of("plate_1") == DECK
    back = await lab.dry("lh1", "read_back")
    assert any(
        d["what"] == "labware_present" and d["labware"] == "plate_1" and d["observed"] is True
        for d in back["deviations"]
    )
    await lab.ok("lh1", "dispense", labware="plate_1", wells=["A3"], volume_ul=50)
    a3 = lab.world.well("plate_1", "A3")
    assert a3["volume_ul"] == pytest.approx(50) and a3["contents"] == {"dye": pytest.approx(50)}


# --------------------------------------------------------------------------- simulations


async def test_a_dry_run_assuming_the_plate_arrives_lets_the_reader_simulate_its_part(
    lab: Lab,
) -> None:
    read: list[dict[str, Any]] = [
        {"command": "close_drawer"},
        {"command": "read_absorbance", "args": {"plate": "plate_1", "wavelength_nm": 600}},
    ]
    arrives: dict[str, Any] = {
        "command": "assume",
        "args": {"plate": "plate_1", "location": DRAWER},
    }
    done = await lab.run("reader1", [arrives, *read])
    assert done["status"] == "completed" and done["steps_done"] == 3 and done["simulated"]

    # Without the assumption the reader does not know its plate: the simulation says so.
    alone = await lab.run("reader1", read)
    assert alone["status"] == "failed" and alone["error"]["code"] == "UNKNOWN_LABWARE"

    # Assumptions are for simulations only: a real run with one is refused, nothing moves.
    real = await lab.dry(
        "reader1",
        "start_run",
        protocol={"name": "cross", "steps": [arrives, *read]},
        dry_run=False,
    )
    assert error_code(real) == "INVALID_ARGUMENT"
    assert lab.world.location_of("plate_1") == DECK
    assert lab.world.status("reader1").get("drawer_open") in (None, False)
    assert (await lab.state("reader1"))["plate_in_reader"] is None


async def test_a_dry_run_assuming_the_drawer_open_lets_the_arm_simulate_the_move(
    lab: Lab,
) -> None:
    into_drawer = {"command": "move_plate", "args": {"plate": "plate_1", "to_location": DRAWER}}
    closed = await lab.dry(
        "arm1", "start_run", protocol={"name": "cross", "steps": [into_drawer]}, dry_run=True
    )
    assert error_code(closed) == "POLICY_DENIED"

    drawer_open = {"command": "assume", "args": {"status": {"reader1": {"drawer_open": True}}}}
    done = await lab.run("arm1", [drawer_open, into_drawer])
    assert done["status"] == "completed" and done["steps_done"] == 2
    assert lab.world.location_of("plate_1") == DECK  # a simulation moves nothing
    assert (await lab.state("arm1"))["labware"]["plate_1"]["location"] == DECK


# --------------------------------------------------------------------------- deviations


async def test_a_twin_that_disagrees_with_the_world_after_a_command_emits_a_deviation(
    lab: Lab,
) -> None:
    lab.world.add_fault(
        "lh1",
        {
            "kind": "less_liquid",
            "match": {"op": "aspirate", "labware": "reservoir"},
            "params": {"volume_ul": 3000},
        },
    )
    await lab.ok("lh1", "pick_up_tips", rack="tips_1")
    done = await lab.ok("lh1", "aspirate", labware="reservoir", wells=["A1"], volume_ul=50)

    observed = lab.world.well("reservoir", "A1")["volume_ul"]
    assert observed == pytest.approx(2950)
    (deviation,) = [d for d in done["deviations"] if d.get("labware") == "reservoir"]
    assert deviation["what"] == "well_volume" and deviation["well"] == "A1"
    assert deviation["expected"] == pytest.approx(9950)
    assert deviation["observed"] == pytest.approx(observed)
    logged = await lab.direct_events("lh1", "deviation")
    assert any(
        d["expected"] == deviation["expected"] and d["observed"] == deviation["observed"]
        for d in logged
    )
    # The twin adopted the world's volume.
    twin = (await lab.state("lh1"))["labware"]["reservoir"]["wells"]["A1"]["volume_ul"]
    assert twin == pytest.approx(observed)
