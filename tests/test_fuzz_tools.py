"""Fuzz every tool of every instrument kind through a real (in-memory) MCP session.

Whatever a client sends, the server answers with a structured result or a structured error
with a known code (never ADAPTER_FAULT: no fault is armed, so one would be an exception that
escaped), keeps answering afterwards, moves nothing unless ``dry_run`` is exactly JSON
``false``, and the simulated world never overflows or goes negative. Values include what
strict inputs must refuse: numbers as strings, booleans as numbers, lone surrogates,
integers beyond 2^53, non-finite floats. ``make fuzz`` runs this with >= 10,000 tool calls.
"""

from __future__ import annotations

import functools
import json
import math
import shutil
import tempfile
from pathlib import Path
from typing import Any

import anyio
from _fuzz import Tally, fuzz_settings
from _task_lab import task_lab_file
from hypothesis import event, given
from hypothesis import strategies as st
from mcp import ClientSession
from mcp.shared.memory import create_connected_server_and_client_session

from device_servers.errors import Code
from device_servers.factory import make_runtime, open_runtime
from device_servers.lab import LabConfig, load
from device_servers.server import DeviceServer
from device_servers.sim.world import SimWorld

KNOWN_CODES = {c.value for c in Code}
INSTRUMENTS = ("lh1", "reader1", "hs1", "arm1")
LABWARE = ["tips_1", "reservoir", "plate_1", "trash", ""]
WELLISH = ["A1", "B1", "H12", "A12", "I1", "A13", "a1", "A0", "Z99", "A1:H1", "A01", " A1"]
PLACES = ["lh1:plate_carrier:1", "reader1:drawer", "hs1:holder", "hotel:1", "nowhere:1", ""]
CALLS = Tally("tools")


@functools.cache
def tool_properties() -> dict[str, dict[str, tuple[str, ...]]]:
    """Every instrument's tools and their argument names, from the schemas it publishes."""
    tmp = Path(tempfile.mkdtemp(prefix="labwright-fuzz-schema-"))
    try:
        lab = load(task_lab_file(tmp))
        found: dict[str, dict[str, tuple[str, ...]]] = {}
        for instrument in INSTRUMENTS:
            runtime = make_runtime(lab.instrument(instrument), lab.db_path, lab.world_path)
            try:
                found[instrument] = {
                    name: tuple(tool.inputSchema.get("properties", {}))
                    for name, (tool, _, _) in DeviceServer(runtime).tools.items()
                }
            finally:
                runtime.conn.close()
        return found
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


surrogates = st.text(st.characters(categories=["Cs"]), min_size=1, max_size=2)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from([0, -1, 1, 7, 8, 16, 2**31, 2**53, 2**53 + 1, 2**63, -(2**63) - 1, 10**30]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.5, 1e-9, 50.0, 300.0, 360.0, 1e308, -50.0, math.nan, math.inf]),
    st.text(max_size=20),
    st.sampled_from(["50", "1e2", "true", "false", "no", "off", "0", "1", "null", "NaN"]),
    st.builds(lambda a, s, b: a + s + b, st.text(max_size=3), surrogates, st.text(max_size=3)),
    st.sampled_from(LABWARE + WELLISH + PLACES + ["always", "once", "\u0000", "🧪"]),
)
json_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.one_of(st.text(max_size=8), surrogates), children, max_size=4),
    ),
    max_leaves=12,
)
plausible = st.one_of(
    st.sampled_from(LABWARE),
    st.lists(st.sampled_from(WELLISH), min_size=1, max_size=3),
    st.lists(st.integers(-2, 9), min_size=1, max_size=3),
    st.floats(-10, 500),
    st.sampled_from(WELLISH),
)
numbers = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(0, 400),
    st.integers(-10, 5000),
    st.sampled_from([0, -1, 1, 50, 300, 361, 10**30, True, "50"]),
)
TYPED: dict[str, st.SearchStrategy[Any]] = {
    **dict.fromkeys(
        ["labware", "source", "destination", "rack", "tip_rack", "plate", "expect_plate"],
        st.sampled_from(LABWARE),
    ),
    **dict.fromkeys(["well", "source_well"], st.sampled_from(WELLISH)),
    **dict.fromkeys(
        ["wells", "destination_wells", "spots"],
        st.lists(st.sampled_from(WELLISH), min_size=0, max_size=4),
    ),
    **dict.fromkeys(
        ["volume_ul", "mix_volume_ul", "celsius", "tolerance_c", "timeout_s", "duration_s"],
        numbers,
    ),
    **dict.fromkeys(["wavelength_nm", "excitation_nm", "emission_nm", "rpm"], numbers),
    "to_location": st.sampled_from(PLACES),
    "channels": st.lists(st.integers(-2, 20), max_size=4),
    **dict.fromkeys(["channel", "repetitions", "mix_after"], st.integers(-2, 20)),
    "dry_run": st.one_of(st.booleans(), st.sampled_from(["false", 0, "no", "off", None])),
    "action_id": st.one_of(st.sampled_from(["a-1", "a-2", "a-3"]), st.text(max_size=8)),
    "new_tip": st.sampled_from(["always", "once", "never"]),
    "run_key": st.sampled_from(["k-1", "k-2"]),
    "reason": st.one_of(st.text(max_size=20), json_values),
    **dict.fromkeys(["since_seq", "max"], st.integers(-5, 2000)),
}


def argument(prop: str) -> st.SearchStrategy[Any]:
    """Mostly a value of the right kind (to reach the twin and backend), else anything."""
    return st.integers(0, 9).flatmap(
        lambda roll: json_values if roll == 0 else TYPED.get(prop, plausible)
    )


def _arguments_of(props: tuple[str, ...]) -> st.SearchStrategy[dict[str, Any]]:
    wanted = [p for p in props if p not in ("action_id", "dry_run")]
    return st.fixed_dictionaries({}, optional={p: argument(p) for p in wanted})


@st.composite
def protocols(draw: st.DrawFn, instrument: str) -> Any:
    """Sometimes protocol-shaped, so runs get past the first check."""
    props = tool_properties()[instrument]
    commands = sorted(
        n for n in props if "action_id" in props[n] and n not in ("reset_estop", "confirm_state")
    )
    steps = draw(
        st.lists(
            st.sampled_from(commands).flatmap(
                lambda c: st.fixed_dictionaries(
                    {"command": st.just(c), "args": _arguments_of(props[c])}
                )
            ),
            max_size=4,
        )
    )
    return draw(st.one_of(st.just({"name": "fuzz", "steps": steps}), json_values))


@st.composite
def tool_calls(draw: st.DrawFn, instrument: str) -> tuple[str, dict[str, Any]]:
    props = tool_properties()[instrument]
    name = draw(st.one_of(st.sampled_from(sorted(props)), st.text(max_size=12), surrogates))
    if name == "emergency_stop" and draw(st.integers(0, 3)):
        name = "get_state"  # a latched e-stop refuses the rest of the example: rarely
    args: dict[str, Any] = {}
    for prop in props.get(name, ()):
        if draw(st.integers(0, 4)):
            args[prop] = draw(protocols(instrument) if prop == "protocol" else argument(prop))
    if draw(st.integers(0, 7)) == 0:
        args.update(
            draw(
                st.dictionaries(
                    st.one_of(st.text(max_size=10), surrogates), json_values, max_size=2
                )
            )
        )
    return name, args


@st.composite
def sessions(draw: st.DrawFn) -> tuple[str, list[tuple[str, dict[str, Any]]]]:
    instrument = draw(st.sampled_from(INSTRUMENTS))
    return instrument, draw(st.lists(tool_calls(instrument), min_size=1, max_size=8))


def check_answer(name: str, args: dict[str, Any], result: Any) -> dict[str, Any]:
    payload = result.structuredContent
    assert payload is not None, (name, args)
    assert json.loads(result.content[0].text)["ok"] == payload["ok"]
    assert bool(result.isError) == (payload["ok"] is False), (name, args, payload)
    json.dumps(payload).encode("utf-8")  # writable as UTF-8: no lone surrogate echoed back
    if payload["ok"] is False:
        error = payload["error"]
        assert error["code"] in KNOWN_CODES, (name, args, error)
        # ADAPTER_FAULT here would be an exception that escaped translation: no fault is armed.
        assert error["code"] != Code.ADAPTER_FAULT, (name, args, error)
        assert isinstance(error["defined"], bool) and isinstance(error["retriable"], bool)
        assert isinstance(error["fix_hint"], str) and error["fix_hint"], (name, args, error)
        assert isinstance(error["detail"], str)
        kind = str(error["code"])
    else:
        kind = f"ok{'' if payload.get('dry_run', True) else ' (executed)'}"
    outcome = f"{name}: {kind}"
    event(
        outcome if name in tool_properties()["lh1"] or name in ("move_plate", "shake") else "other"
    )
    CALLS.add(kind)
    return dict(payload)


def _executes(name: str, args: dict[str, Any]) -> bool:
    """Whether a call may move anything: an explicit JSON false, or a control command."""
    if name == "start_run":
        return args.get("dry_run") is False
    return args.get("dry_run") is False or name in (
        "reset_estop",
        "confirm_state",
        "emergency_stop",
    )


def check_world(lab: LabConfig) -> None:
    world = SimWorld(lab.world_path)
    try:
        assert [i for i in world.incidents() if i["kind"] == "overflow"] == []
        lowest = world.conn.execute("SELECT MIN(volume) FROM wells").fetchone()[0]
        assert lowest is None or lowest >= 0
        over = world.conn.execute(
            "SELECT COUNT(*) FROM wells WHERE volume > max_volume + 1e-6"
        ).fetchone()[0]
        assert over == 0
    finally:
        world.close()


def _sendable(name: str, args: dict[str, Any]) -> bool:
    """Whether the MCP client library can encode the call (it refuses lone surrogates)."""
    try:
        json.dumps([name, args], ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


async def _exercise(
    lab: LabConfig, instrument: str, calls: list[tuple[str, dict[str, Any]]]
) -> None:
    world = SimWorld(lab.world_path)
    try:
        async with open_runtime(lab.instrument(instrument), lab.db_path, lab.world_path) as runtime:
            server = DeviceServer(runtime)
            session: ClientSession
            async with create_connected_server_and_client_session(server.server) as session:
                with anyio.fail_after(30):
                    for name, args in calls:
                        before = len(world.physical_ops())
                        # What a client library cannot send (a raw peer can: see
                        # test_strict_inputs) goes to the server's tool dispatch directly.
                        if _sendable(name, args):
                            result = await session.call_tool(name, args)
                        else:
                            result = await server.call(name, args)
                        check_answer(name, args, result)
                        if not _executes(name, args) and runtime.status.active_run is None:
                            assert len(world.physical_ops()) == before, (name, args)
                    alive = await session.call_tool("get_state", {})
                    assert check_answer("get_state", {}, alive)["ok"] is True
    finally:
        world.close()


@fuzz_settings(small=40, per_example=4)
@given(example=sessions())
def test_any_arguments_get_a_structured_answer_and_never_break_the_server_or_world(
    example: tuple[str, list[tuple[str, dict[str, Any]]]],
) -> None:
    instrument, calls = example
    tmp = Path(tempfile.mkdtemp(prefix="labwright-fuzz-"))
    try:
        lab = load(task_lab_file(tmp))
        anyio.run(_exercise, lab, instrument, calls, backend="asyncio")
        check_world(lab)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def teardown_module() -> None:
    CALLS.write()
