"""Fuzz every tool's arguments through a real (in-memory) MCP session.

Whatever a client sends, the server answers with a structured result or a structured error
with a known code, keeps answering afterwards, and the simulated world never overflows or goes
negative.
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
from conftest import write_lab
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from mcp import ClientSession
from mcp.shared.memory import create_connected_server_and_client_session

from device_servers.errors import Code
from device_servers.factory import make_runtime, open_runtime
from device_servers.lab import LabConfig, load
from device_servers.server import DeviceServer, build_server
from device_servers.sim.world import SimWorld

KNOWN_CODES = {c.value for c in Code}
LABWARE = ["tips_1", "reservoir", "plate_1", "trash", ""]
WELLISH = ["A1", "B1", "H12", "A12", "I1", "A13", "a1", "A0", "Z99", "A1:H1", "A01", " A1"]


@functools.cache
def tool_properties() -> dict[str, tuple[str, ...]]:
    """Every tool's argument names, read from the schemas the server publishes."""
    tmp = Path(tempfile.mkdtemp(prefix="labwright-fuzz-schema-"))
    try:
        lab = load(write_lab(tmp))
        runtime = make_runtime(lab.instrument("lh1"), lab.db_path, lab.world_path)
        try:
            tools = DeviceServer(runtime).tools
            return {
                name: tuple(tool.inputSchema.get("properties", {}))
                for name, (tool, _, _) in tools.items()
            }
        finally:
            runtime.conn.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from([0, -1, 1, 7, 8, 16, 2**31, 2**63, -(2**63) - 1, 10**30, -(10**30)]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.5, 1e-9, 50.0, 300.0, 360.0, 1e308, -50.0, math.nan, math.inf]),
    st.text(max_size=20),
    st.sampled_from(LABWARE + WELLISH + ["always", "once", "rack", "true", "\u0000", "🧪"]),
)
json_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.text(max_size=8), children, max_size=4),
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
values = st.one_of(json_values, plausible)
volumes = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(0, 400),
    st.sampled_from([0, -1, 1, 50, 300, 361, 10**30]),
)
TYPED: dict[str, st.SearchStrategy[Any]] = {
    **dict.fromkeys(
        ["labware", "source", "destination", "rack", "tip_rack"], st.sampled_from(LABWARE)
    ),
    **dict.fromkeys(["well", "source_well"], st.sampled_from(WELLISH)),
    **dict.fromkeys(
        ["wells", "destination_wells", "spots"],
        st.lists(st.sampled_from(WELLISH), min_size=0, max_size=4),
    ),
    **dict.fromkeys(["volume_ul", "mix_volume_ul"], volumes),
    "channels": st.lists(st.integers(-2, 20), max_size=4),
    **dict.fromkeys(["channel", "repetitions", "mix_after"], st.integers(-2, 20)),
    "dry_run": st.booleans(),
    "action_id": st.one_of(st.sampled_from(["a-1", "a-2", "a-3"]), st.text(max_size=8)),
    "new_tip": st.sampled_from(["always", "once", "never"]),
    "destination_kind": st.sampled_from(["trash", "rack"]),
    "run_key": st.sampled_from(["k-1", "k-2"]),
    **dict.fromkeys(["since_seq", "max"], st.integers(-5, 2000)),
}


def argument(prop: str) -> st.SearchStrategy[Any]:
    """Mostly a value of the right kind (to reach the twin and backend), else anything."""
    typed = TYPED.get(prop, plausible)
    if prop == "destination":
        typed = st.one_of(typed, TYPED["destination_kind"])
    return st.integers(0, 9).flatmap(lambda roll: values if roll == 0 else typed)


@st.composite
def protocols(draw: st.DrawFn) -> Any:
    """Sometimes protocol-shaped, so runs get past the first check."""
    commands = [n for n in tool_properties() if "action_id" in tool_properties()[n]]
    steps = draw(
        st.lists(
            st.fixed_dictionaries(
                {
                    "command": st.one_of(st.sampled_from(commands), st.text(max_size=8)),
                    "args": st.sampled_from(commands).flatmap(_arguments_of),
                }
            ),
            max_size=4,
        )
    )
    return draw(st.one_of(st.just({"name": "fuzz", "steps": steps}), json_values))


def _arguments_of(command: str) -> st.SearchStrategy[dict[str, Any]]:
    props = [p for p in tool_properties()[command] if p not in ("action_id", "dry_run")]
    return st.fixed_dictionaries({}, optional={p: argument(p) for p in props})


@st.composite
def tool_calls(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    props = tool_properties()
    name = draw(st.one_of(st.sampled_from(sorted(props)), st.text(max_size=12)))
    args: dict[str, Any] = {}
    for prop in props.get(name, ()):
        if draw(st.integers(0, 4)):
            args[prop] = draw(protocols() if prop == "protocol" else argument(prop))
    if draw(st.integers(0, 7)) == 0:
        args.update(draw(st.dictionaries(st.text(max_size=10), json_values, max_size=2)))
    if name == "emergency_stop" and not args:
        # A latched e-stop would refuse everything after it; its own tests cover it.
        args["unexpected"] = draw(json_values)
    return name, args


def check_answer(name: str, args: dict[str, Any], result: Any) -> dict[str, Any]:
    payload = result.structuredContent
    assert payload is not None, (name, args)
    assert json.loads(result.content[0].text)["ok"] == payload["ok"]
    assert bool(result.isError) == (payload["ok"] is False), (name, args, payload)
    if payload["ok"] is False:
        error = payload["error"]
        assert error["code"] in KNOWN_CODES, (name, args, error)
        # ADAPTER_FAULT here would be an exception that escaped translation: no fault is armed.
        assert error["code"] != Code.ADAPTER_FAULT, (name, args, error)
        assert isinstance(error["defined"], bool) and isinstance(error["retriable"], bool)
        assert isinstance(error["fix_hint"], str) and error["fix_hint"], (name, args, error)
        assert isinstance(error["detail"], str)
        event(f"{name}: {error['code']}")
    else:
        event(f"{name}: ok{'' if payload.get('dry_run', True) else ' (executed)'}")
    return dict(payload)


def check_world(lab: LabConfig) -> None:
    world = SimWorld(lab.world_path)
    try:
        assert [i for i in world.incidents() if i["kind"] == "overflow"] == []
        lowest = world.conn.execute("SELECT MIN(volume) FROM wells").fetchone()[0]
        assert lowest >= 0
        over = world.conn.execute(
            "SELECT COUNT(*) FROM wells WHERE volume > max_volume + 1e-6"
        ).fetchone()[0]
        assert over == 0
    finally:
        world.close()


async def _exercise(lab: LabConfig, calls: list[tuple[str, dict[str, Any]]]) -> None:
    async with open_runtime(lab.instrument("lh1"), lab.db_path, lab.world_path) as runtime:
        session: ClientSession
        async with create_connected_server_and_client_session(build_server(runtime)) as session:
            with anyio.fail_after(30):
                for name, args in calls:
                    check_answer(name, args, await session.call_tool(name, args))
                alive = check_answer("get_state", {}, await session.call_tool("get_state", {}))
                assert alive["ok"] is True


@settings(
    max_examples=90,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(calls=st.lists(tool_calls(), min_size=1, max_size=8))
def test_any_arguments_get_a_structured_answer_and_never_break_the_server_or_world(
    calls: list[tuple[str, dict[str, Any]]],
) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="labwright-fuzz-"))
    try:
        lab = load(write_lab(tmp))
        anyio.run(_exercise, lab, calls, backend="asyncio")
        check_world(lab)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
