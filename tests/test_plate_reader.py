"""The plate reader's MCP server, through a real client session, judged from the world.

The world is the physical truth: tests put plates in the reader's drawer and liquids in wells
directly in it (as a person or the plate mover would), and the reader must discover them by
reading back, exactly as it would with hardware.
"""

from __future__ import annotations

import contextlib
import itertools
import statistics
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from _servers import STARTUP_S, StdioTrace, server_env
from conftest import ROOT, call, error_code, write_lab
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import McpError
from mcp.shared.memory import create_connected_server_and_client_session

from device_servers.factory import open_runtime
from device_servers.lab import LabConfig, load
from device_servers.runtime import InstrumentRuntime
from device_servers.server import build_server
from device_servers.sim.world import SimWorld

pytestmark = pytest.mark.anyio

READER = "reader1"
DRAWER = f"{READER}:drawer"
WAIT_S = 20.0
_ACTIONS = itertools.count(1)  # action_ids stay unique across restarts of a lab
BLANK = 0.045
READER_CONFIG: dict[str, Any] = {
    "id": READER,
    "kind": "plate_reader",
    "command_timeout_s": 0.5,
    # Narrower than the policy's 300-900 nm so the twin's OUT_OF_RANGE can be reached.
    "wavelength_range_nm": [350, 850],
    "absorbance_blank": BLANK,
    "absorbance_per_fraction": {"dye": 2.0},
    "fluorescence_per_fraction": {"dye": 40000.0},
    "luminescence_per_fraction": {"luciferase": 9000.0},
    "noise_sd": 0.002,
    "seed": 7,
}


class Reader:
    """A served reader: its MCP session, runtime and the lab's world."""

    def __init__(self, session: ClientSession, rt: InstrumentRuntime, world: SimWorld) -> None:
        self.session = session
        self.rt = rt
        self.world = world

    async def call(self, tool: str, **args: Any) -> dict[str, Any]:
        with anyio.fail_after(WAIT_S):
            return await call(self.session, tool, **args)

    async def do(self, tool: str, **args: Any) -> dict[str, Any]:
        """Execute a command for real with a fresh action_id."""
        action_id = f"test.{next(_ACTIONS)}.{tool}"
        return await self.call(tool, dry_run=False, action_id=action_id, **args)

    def put_in_drawer(self, plate: str) -> None:
        if self.world.location_of(plate) is None:
            self.world.place_plate(plate, DRAWER)
        else:
            self.world.conn.execute("UPDATE plates SET location=? WHERE labware=?", (DRAWER, plate))

    def take_out(self, plate: str) -> None:
        self.world.conn.execute("UPDATE plates SET location=? WHERE labware=?", ("hotel:1", plate))

    def fault(self, kind: str, op: str, **params: Any) -> None:
        self.world.add_fault(READER, {"kind": kind, "match": {"op": op}, "params": params})

    async def load_plate(self, plate: str = "plate_1") -> None:
        """The plate is put in the drawer by hand; a read back lets the reader detect it."""
        self.put_in_drawer(plate)
        assert (await self.call("read_back"))["ok"]


def reader_lab(tmp_path: Path, **overrides: Any) -> LabConfig:
    def patch(data: dict[str, Any]) -> None:
        data["instruments"].append({**READER_CONFIG, **overrides})

    return load(write_lab(tmp_path, patch))


@contextlib.asynccontextmanager
async def served(tmp_path: Path, **overrides: Any) -> AsyncIterator[Reader]:
    lab = reader_lab(tmp_path, **overrides)
    # The liquid handler lays its plates and liquids into the world, as the lab would.
    async with open_runtime(lab.instrument("lh1"), lab.db_path, lab.world_path):
        pass
    world = SimWorld(lab.world_path)
    async with (
        open_runtime(lab.instrument(READER), lab.db_path, lab.world_path) as rt,
        create_connected_server_and_client_session(build_server(rt)) as session,
    ):
        yield Reader(session, rt, world)
    world.close()


@pytest.fixture
async def reader(tmp_path: Path) -> AsyncIterator[Reader]:
    async with served(tmp_path) as r:
        yield r


def _values(result: dict[str, Any]) -> dict[str, float]:
    (measurement,) = result["measurements"]
    return dict(measurement["values"])


# --------------------------------------------------------------------------- tools


async def test_every_reader_command_is_a_tool_whose_description_states_units_and_errors(
    reader: Reader,
) -> None:
    with anyio.fail_after(WAIT_S):
        tools = {t.name: t for t in (await reader.session.list_tools()).tools}
    for name in ("open_drawer", "close_drawer", "read_absorbance", "read_fluorescence"):
        assert name in tools
    assert "read_luminescence" in tools and "emergency_stop" in tools
    absorbance = tools["read_absorbance"].description or ""
    assert "OD" in absorbance and "nm" in absorbance
    for code in ("PRECONDITION_FAILED", "UNKNOWN_LABWARE", "SENSOR_INVALID", "OUT_OF_RANGE"):
        assert code in absorbance
    assert set(tools["read_fluorescence"].inputSchema["properties"]) >= {
        "plate",
        "excitation_nm",
        "emission_nm",
        "wells",
        "action_id",
        "dry_run",
    }


async def test_a_fresh_reader_has_its_drawer_closed_and_does_not_yet_know_its_plate(
    reader: Reader,
) -> None:
    state = (await reader.call("get_state"))["state"]
    assert state["kind"] == "plate_reader"
    assert state["drawer_open"] is False
    assert state["plate_in_reader"] is None and state["plate_known"] is False
    assert "plate_1" in state["readable_plates"] and "tips_1" not in state["readable_plates"]


async def test_reading_before_the_reader_has_detected_a_plate_is_refused_with_fix_hint(
    reader: Reader,
) -> None:
    reader.put_in_drawer("plate_1")
    result = await reader.call("read_absorbance", plate="plate_1", wavelength_nm=600)
    assert error_code(result) == "UNKNOWN_LABWARE"
    assert "read_back" in result["error"]["fix_hint"]


async def test_opening_and_closing_the_drawer_moves_the_real_drawer_and_detects_the_plate(
    reader: Reader,
) -> None:
    opened = await reader.do("open_drawer")
    assert opened["ok"] and opened["state"]["drawer_open"] is True
    assert reader.world.status(READER)["drawer_open"] is True
    reader.put_in_drawer("plate_1")  # the plate mover sets the plate on the open drawer
    closed = await reader.do("close_drawer")
    assert reader.world.status(READER)["drawer_open"] is False
    assert closed["state"]["plate_in_reader"] == "plate_1"
    assert closed["deviations"] == []  # the belief was "unknown", not wrong


async def test_close_drawer_reports_a_deviation_when_the_expected_plate_is_not_there(
    reader: Reader,
) -> None:
    await reader.do("open_drawer")
    predicted = await reader.call("close_drawer", expect_plate="plate_1")
    assert predicted["state"]["plate_in_reader"] == "plate_1"  # the dry run trusts the caller
    closed = await reader.do("close_drawer", expect_plate="plate_1")
    assert closed["deviations"] == [
        {"what": "plate_in_reader", "labware": "plate_1", "expected": "plate_1", "observed": None}
    ]
    assert closed["state"]["plate_in_reader"] is None


# --------------------------------------------------------------------------- readings


async def test_a_two_fold_dilution_reads_as_a_halving_series_above_blank(reader: Reader) -> None:
    dye = [200.0, 100.0, 50.0, 25.0, 12.5, 6.25]
    for i, volume in enumerate(dye):
        reader.world.set_well(
            "plate_1", f"A{i + 1}", 200.0, {"dye": volume, "buffer": 200 - volume}
        )
    await reader.load_plate("plate_1")
    result = await reader.do("read_absorbance", plate="plate_1", wavelength_nm=600, wells=["row A"])
    values = _values(result)
    assert list(values) == [f"A{c}" for c in range(1, 13)]
    above = [values[f"A{i + 1}"] - BLANK for i in range(len(dye))]
    for stronger, weaker in itertools.pairwise(above):
        assert stronger / weaker == pytest.approx(2.0, rel=0.1)
    assert above[0] == pytest.approx(2.0, abs=0.01)
    empty = [values[f"A{c}"] for c in range(7, 13)]
    assert statistics.mean(empty) == pytest.approx(BLANK, abs=0.003)


async def test_a_reading_says_simulated_and_is_logged_and_remembered(reader: Reader) -> None:
    await reader.load_plate("plate_1")
    result = await reader.do("read_absorbance", plate="plate_1", wavelength_nm=450, wells=["B1"])
    (measurement,) = result["measurements"]
    assert measurement["simulated"] is True and result["simulated"] is True
    assert measurement["mode"] == "absorbance" and measurement["unit"] == "OD"
    assert measurement["wavelength_nm"] == 450 and measurement["plate"] == "plate_1"
    assert measurement["values"]["B1"] == pytest.approx(BLANK, abs=0.01)  # buffer only
    log = await reader.call("run_events", run_id=f"{READER}:direct")
    assert [e["type"] for e in log["events"]].count("reading_taken") == 1
    with anyio.fail_after(WAIT_S):
        resource = await reader.session.read_resource(f"lab://{READER}/labware/plate_1")  # type: ignore[arg-type]
    assert '"absorbance@450"' in resource.contents[0].text  # type: ignore[union-attr]


async def test_fluorescence_and_luminescence_follow_their_tables_over_a_zero_floor(
    reader: Reader,
) -> None:
    reader.world.set_well("plate_1", "C1", 100.0, {"dye": 50.0, "buffer": 50.0})
    await reader.load_plate("plate_1")
    fl = await reader.do(
        "read_fluorescence", plate="plate_1", excitation_nm=485, emission_nm=528, wells=["C1:D1"]
    )
    values = _values(fl)
    assert values["C1"] == pytest.approx(20000.0, rel=0.01)
    assert 0.0 <= values["D1"] < 0.05
    lum = await reader.do("read_luminescence", plate="plate_1", wells=["C1"])
    (measurement,) = lum["measurements"]
    assert measurement["unit"] == "RLU" and 0.0 <= measurement["values"]["C1"] < 0.05


# --------------------------------------------------------------------------- refusals


async def test_reading_with_the_drawer_open_fails_its_precondition(reader: Reader) -> None:
    await reader.load_plate("plate_1")
    await reader.do("open_drawer")
    result = await reader.do("read_absorbance", plate="plate_1", wavelength_nm=600)
    assert error_code(result) == "PRECONDITION_FAILED"
    assert "close_drawer" in result["error"]["fix_hint"]


async def test_a_plate_that_is_not_in_the_reader_cannot_be_read(reader: Reader) -> None:
    await reader.load_plate("plate_1")
    result = await reader.call("read_absorbance", plate="reservoir", wavelength_nm=600)
    assert error_code(result) == "UNKNOWN_LABWARE"
    assert DRAWER in result["error"]["fix_hint"]
    assert "plate mover" in result["error"]["fix_hint"]
    not_a_plate = await reader.call("read_absorbance", plate="tips_1", wavelength_nm=600)
    assert error_code(not_a_plate) == "UNKNOWN_LABWARE"


async def test_a_plate_taken_away_behind_the_readers_back_is_refused_by_the_instrument(
    reader: Reader,
) -> None:
    await reader.load_plate("plate_1")
    reader.take_out("plate_1")
    result = await reader.do("read_absorbance", plate="plate_1", wavelength_nm=600)
    assert error_code(result) == "UNKNOWN_LABWARE"
    assert result["error"]["extra"]["deviations"][0]["what"] == "plate_in_reader"
    state = (await reader.call("get_state"))["state"]
    assert state["plate_in_reader"] is None and state["stale"] is None
    incidents = [i["kind"] for i in reader.world.incidents(READER)]
    assert incidents == ["read_without_plate"]


async def test_a_wavelength_outside_the_readers_range_is_out_of_range(reader: Reader) -> None:
    await reader.load_plate("plate_1")
    result = await reader.call("read_absorbance", plate="plate_1", wavelength_nm=320)
    assert error_code(result) == "OUT_OF_RANGE"
    assert "350" in result["error"]["fix_hint"]
    fl = await reader.call("read_fluorescence", plate="plate_1", excitation_nm=485, emission_nm=870)
    assert error_code(fl) == "OUT_OF_RANGE"


async def test_an_unknown_well_is_refused_with_the_plates_grid(reader: Reader) -> None:
    await reader.load_plate("plate_1")
    for wells in (["A13"], ["Z1"], ["row Q"], ["nonsense"]):
        result = await reader.call(
            "read_luminescence", plate="plate_1", wells=wells, dry_run=False, action_id="w"
        )
        assert error_code(result) == "UNKNOWN_WELL"
        assert "H12" in result["error"]["fix_hint"]


async def test_emission_no_longer_than_excitation_is_an_invalid_argument(reader: Reader) -> None:
    await reader.load_plate("plate_1")
    result = await reader.call(
        "read_fluorescence", plate="plate_1", excitation_nm=528, emission_nm=485
    )
    assert error_code(result) == "INVALID_ARGUMENT"
    assert result["error"]["fix_hint"]


async def test_a_dry_run_leaves_world_and_twin_untouched(reader: Reader) -> None:
    await reader.load_plate("plate_1")
    before_state = (await reader.call("get_state"))["state"]
    before_status = reader.world.status(READER)
    opened = await reader.call("open_drawer")
    assert opened["dry_run"] is True and opened["state"]["drawer_open"] is True
    read = await reader.call("read_absorbance", plate="plate_1", wavelength_nm=600)
    assert read["ok"] and "measurements" not in read
    assert reader.world.status(READER) == before_status
    assert (await reader.call("get_state"))["state"] == before_state


# --------------------------------------------------------------------------- faults


async def test_a_nan_reading_is_sensor_invalid_and_no_value_is_returned(reader: Reader) -> None:
    await reader.load_plate("plate_1")
    reader.fault("nan_reading", "read_absorbance", wells=["A2"])
    result = await reader.do("read_absorbance", plate="plate_1", wavelength_nm=600, wells=["row A"])
    assert error_code(result) == "SENSOR_INVALID"
    assert result["error"]["defined"] is True and result["error"]["fix_hint"]
    assert "measurements" not in result
    state = (await reader.call("get_state"))["state"]
    assert state["labware"]["plate_1"]["readings"] == {}
    log = await reader.call("run_events", run_id=f"{READER}:direct")
    assert "reading_taken" not in [e["type"] for e in log["events"]]
    again = await reader.do("read_absorbance", plate="plate_1", wavelength_nm=600, wells=["A2"])
    assert again["ok"] and set(_values(again)) == {"A2"}


async def test_a_value_outside_the_physical_range_is_sensor_invalid(reader: Reader) -> None:
    await reader.load_plate("plate_1")
    reader.fault("nan_reading", "read_absorbance", value=7.5)
    result = await reader.do("read_absorbance", plate="plate_1", wavelength_nm=600)
    assert error_code(result) == "SENSOR_INVALID"


async def test_a_hang_times_out_and_the_reader_stays_stale_until_read_back(reader: Reader) -> None:
    await reader.load_plate("plate_1")
    reader.fault("hang", "read_absorbance")
    result = await reader.do("read_absorbance", plate="plate_1", wavelength_nm=600)
    assert error_code(result) == "HARDWARE_TIMEOUT"
    assert result["error"]["defined"] is False
    stale = await reader.do("read_absorbance", plate="plate_1", wavelength_nm=600)
    assert error_code(stale) == "STATE_STALE"
    assert "read_back" in stale["error"]["fix_hint"]
    assert (await reader.call("read_back"))["stale"] is None
    assert (await reader.do("read_absorbance", plate="plate_1", wavelength_nm=600))["ok"]


@pytest.mark.parametrize(
    ("kind", "code"), [("disconnect", "CONNECTION_LOST"), ("adapter_fault", "ADAPTER_FAULT")]
)
async def test_an_instrument_failure_is_translated_to_its_code(
    reader: Reader, kind: str, code: str
) -> None:
    reader.fault(kind, "open_drawer")
    result = await reader.do("open_drawer")
    assert error_code(result) == code
    assert result["error"]["fix_hint"]
    assert reader.world.status(READER)["drawer_open"] is False


async def test_a_slow_drawer_is_busy_while_it_moves_so_the_plate_mover_keeps_out(
    reader: Reader,
) -> None:
    reader.fault("delay", "open_drawer", seconds=0.2)  # within the 0.5 s timeout
    busy_seen = anyio.Event()

    async def watch() -> None:
        while reader.world.status(READER).get("busy") is not True:
            await anyio.sleep(0.01)
        assert reader.world.status(READER)["drawer_open"] is False
        busy_seen.set()

    with anyio.fail_after(WAIT_S):
        async with anyio.create_task_group() as tg:
            tg.start_soon(watch)
            opened = await reader.do("open_drawer")
    assert busy_seen.is_set() and opened["ok"], opened
    status = reader.world.status(READER)
    assert status["drawer_open"] is True and status["busy"] is False


# --------------------------------------------------------------------------- safety


@pytest.mark.parametrize(
    ("command", "args", "rule"),
    [
        ("read_absorbance", {"wavelength_nm": 250}, "absorbance_wavelength_range"),
        ("read_absorbance", {"wavelength_nm": 950}, "absorbance_wavelength_range"),
        (
            "read_fluorescence",
            {"excitation_nm": 260, "emission_nm": 520},
            "excitation_wavelength_range",
        ),
        (
            "read_fluorescence",
            {"excitation_nm": 485, "emission_nm": 950},
            "emission_wavelength_range",
        ),
    ],
)
@pytest.mark.parametrize("dry_run", [True, False])
async def test_the_reader_policy_denies_wavelengths_outside_the_labs_range(
    reader: Reader, command: str, args: dict[str, Any], rule: str, dry_run: bool
) -> None:
    await reader.load_plate("plate_1")
    result = await reader.call(
        command, plate="plate_1", dry_run=dry_run, action_id=f"policy.{dry_run}", **args
    )
    assert error_code(result) == "POLICY_DENIED"
    assert result["error"]["extra"]["rule"] == rule
    assert result["error"]["fix_hint"]
    log = await reader.call("run_events", run_id=f"{READER}:direct")
    assert "reading_taken" not in [e["type"] for e in log["events"]]


async def test_a_lab_can_protect_a_plate_from_the_reader(tmp_path: Path) -> None:
    async with served(tmp_path, policy={"protected_labware": ["plate_1"]}) as reader:
        await reader.load_plate("plate_1")
        result = await reader.call("read_luminescence", plate="plate_1")
        assert error_code(result) == "POLICY_DENIED"
        assert result["error"]["extra"]["rule"] == "protected_labware"


async def test_the_emergency_stop_latches_until_a_person_resets_it(reader: Reader) -> None:
    await reader.load_plate("plate_1")
    stopped = await reader.call("emergency_stop")
    assert stopped["estop"] is True
    for tool, args in (
        ("open_drawer", {}),
        ("read_absorbance", {"plate": "plate_1", "wavelength_nm": 600}),
    ):
        assert error_code(await reader.do(tool, **args)) == "ESTOP_ACTIVE"
    await reader.call("read_back")
    assert error_code(await reader.do("close_drawer")) == "ESTOP_ACTIVE"
    assert reader.world.status(READER)["drawer_open"] is False


async def test_a_restarted_reader_remembers_its_plate_but_is_stale_until_read_back(
    tmp_path: Path,
) -> None:
    async with served(tmp_path) as reader:
        await reader.load_plate("plate_1")
        await reader.do("read_absorbance", plate="plate_1", wavelength_nm=600, wells=["A1"])
    async with served(tmp_path) as reader:
        state = (await reader.call("get_state"))["state"]
        assert state["plate_in_reader"] == "plate_1" and state["stale"]
        assert "absorbance@600" in state["labware"]["plate_1"]["readings"]
        result = await reader.do("read_absorbance", plate="plate_1", wavelength_nm=600)
        assert error_code(result) == "STATE_STALE"
        await reader.call("read_back")
        assert (await reader.do("read_absorbance", plate="plate_1", wavelength_nm=600))["ok"]


# --------------------------------------------------------------------------- real process


@contextlib.asynccontextmanager
async def reader_process(lab: LabConfig, errlog: Any, trace: Any) -> AsyncIterator[ClientSession]:
    """``labwright serve reader1`` spawned over stdio."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "labwright", "serve", READER, "--config", str(lab.source)],
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
async def test_a_reader_process_that_crashes_mid_read_leaves_the_read_in_doubt(
    tmp_path: Path,
) -> None:
    lab = reader_lab(tmp_path)
    async with open_runtime(lab.instrument("lh1"), lab.db_path, lab.world_path):
        pass
    world = SimWorld(lab.world_path)
    world.conn.execute("UPDATE plates SET location=? WHERE labware=?", (DRAWER, "plate_1"))
    world.add_fault(READER, {"kind": "crash", "match": {"op": "read_absorbance"}})
    read = {"plate": "plate_1", "wavelength_nm": 600, "dry_run": False, "action_id": "crash.1"}
    trace = StdioTrace()
    with (tmp_path / "server.log").open("w") as errlog:
        async with reader_process(lab, errlog, trace) as session:
            assert (await call(session, "read_back"))["state"]["plate_in_reader"] == "plate_1"
            with pytest.raises(McpError), anyio.fail_after(WAIT_S):
                await session.call_tool("read_absorbance", read)
        async with reader_process(lab, errlog, trace) as session:
            with anyio.fail_after(WAIT_S):
                again = await call(session, "read_absorbance", **read)
                assert error_code(again) == "ACTION_IN_DOUBT"
                state = (await call(session, "get_state"))["state"]
                assert state["stale"] and state["in_doubt"] == ["crash.1"]
                assert (await call(session, "read_back"))["in_doubt_actions"] == ["crash.1"]
                fresh = {**read, "action_id": "crash.2"}
                assert (await call(session, "read_absorbance", **fresh))["ok"]
    assert trace.garbage == []  # nothing but MCP on the server's stdout
    world.close()
