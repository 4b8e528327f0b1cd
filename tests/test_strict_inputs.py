"""Strict inputs at every server: JSON types as they are, never coerced, and an answer (a
structured INVALID_ARGUMENT) for whatever a client sends."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _lh import RACK, TRANSFER, all_events, twin_state
from _servers import RawStdio
from conftest import call, error_code, write_lab
from mcp import ClientSession

from device_servers.sim.world import SimWorld

PROTOCOL = {"name": "one transfer", "steps": [{"command": "transfer", "args": TRANSFER}]}
NOT_BOOLEANS = ["false", "true", 0, 1, "no", "off", "0", None, [], {}]
NOT_NUMBERS = [True, False, "50", "1e2", None, [50], {"v": 50}]


@pytest.mark.anyio
@pytest.mark.parametrize("dry_run", NOT_BOOLEANS, ids=repr)
async def test_start_run_takes_dry_run_only_as_a_json_boolean(
    session: ClientSession, world: SimWorld, dry_run: Any
) -> None:
    payload = await call(session, "start_run", protocol=PROTOCOL, dry_run=dry_run)
    assert error_code(payload) == "INVALID_ARGUMENT"
    assert world.physical_ops() == []


@pytest.mark.anyio
@pytest.mark.parametrize("dry_run", NOT_BOOLEANS, ids=repr)
async def test_a_command_takes_dry_run_only_as_a_json_boolean(
    session: ClientSession, world: SimWorld, dry_run: Any
) -> None:
    payload = await call(session, "pick_up_tips", rack=RACK, dry_run=dry_run, action_id="p-1")
    assert error_code(payload) == "INVALID_ARGUMENT"
    assert world.physical_ops() == []


@pytest.mark.anyio
@pytest.mark.parametrize("volume", NOT_NUMBERS, ids=repr)
async def test_a_volume_is_only_a_json_number(
    session: ClientSession, world: SimWorld, volume: Any
) -> None:
    args = {**TRANSFER, "volume_ul": volume, "dry_run": False, "action_id": "t-1"}
    assert error_code(await call(session, "transfer", **args)) == "INVALID_ARGUMENT"
    assert world.physical_ops() == []


@pytest.mark.anyio
async def test_a_protocol_steps_arguments_are_as_strict_as_a_commands(
    session: ClientSession, world: SimWorld
) -> None:
    bad = {"name": "p", "steps": [{"command": "transfer", "args": {**TRANSFER, "volume_ul": True}}]}
    payload = await call(session, "start_run", protocol=bad, dry_run=False)
    assert error_code(payload) == "INVALID_ARGUMENT"
    assert world.physical_ops() == []


@pytest.mark.anyio
@pytest.mark.parametrize("since", [2**53 + 1, 2**63, 2**64, -(2**63)], ids=str)
async def test_since_seq_beyond_its_bounds_is_invalid_not_a_fault(
    session: ClientSession, since: int
) -> None:
    started = await call(session, "start_run", protocol=PROTOCOL)
    payload = await call(session, "run_events", run_id=started["run_id"], since_seq=since)
    assert error_code(payload) == "INVALID_ARGUMENT"


@pytest.mark.anyio
@pytest.mark.parametrize("count", [2**53 + 1, 10**30], ids=str)
async def test_an_integer_beyond_what_json_carries_exactly_is_invalid(
    session: ClientSession, count: int
) -> None:
    payload = await call(
        session, "mix", labware="plate_1", well="B1", volume_ul=20, repetitions=count
    )
    assert error_code(payload) == "INVALID_ARGUMENT"


@pytest.mark.anyio
async def test_emergency_stop_takes_a_reason_and_latches(session: ClientSession) -> None:
    payload = await call(session, "emergency_stop", reason="smoke from the deck")
    assert payload["ok"] is True and payload["estop"] is True
    assert (await twin_state(session))["estop"] is True
    events = await all_events(session, "lh1:direct")
    assert [e["data"].get("reason") for e in events if e["type"] == "estop"] == [
        "smoke from the deck"
    ]


@pytest.mark.anyio
@pytest.mark.parametrize(
    "args",
    [{"reason": 7}, {"now": True}, {"reason": "x" * 5000}, {"reason": None, "extra": [1]}],
    ids=["reason-not-text", "unknown", "long-reason", "extra"],
)
async def test_emergency_stop_is_never_refused_whatever_comes_with_it(
    session: ClientSession, args: dict[str, Any]
) -> None:
    payload = await call(session, "emergency_stop", **args)
    assert payload["ok"] is True and payload["estop"] is True
    assert (await twin_state(session))["estop"] is True


# --- what no client library sends: raw JSON-RPC over a real stdio server ---------------------


@pytest.fixture
def raw(tmp_path: Path) -> Any:
    server = RawStdio(write_lab(tmp_path))
    try:
        server.initialize()
        yield server
    finally:
        server.close()


def _tool_error(answer: dict[str, Any] | None) -> str:
    assert answer is not None, "the server did not answer"
    result = answer["result"]
    assert result["isError"] is True
    return str(result["structuredContent"]["error"]["code"])


@pytest.mark.slow
@pytest.mark.parametrize(
    "params",
    [
        '{"name":"get_run","arguments":{"run_id":"a\\ud800b"}}',
        '{"name":"transfer","arguments":{"source":"\\udfff","source_well":"A1",'
        '"destination":"plate_1","destination_wells":["A1"],"volume_ul":5}}',
        '{"name":"get_state","arguments":{"\\ud83d":1}}',
        '{"name":"get_\\ud800state","arguments":{}}',
        '{"name":"pick_up_tips","arguments":{"rack":"tips_1","action_id":"\\udc80"}}',
    ],
    ids=["value", "command-value", "key", "tool-name", "action-id"],
)
def test_a_lone_surrogate_anywhere_gets_an_invalid_argument_answer(raw: Any, params: str) -> None:
    assert _tool_error(raw.request("tools/call", params)) == "INVALID_ARGUMENT"
    alive = raw.request("tools/call", '{"name":"get_state","arguments":{}}')
    assert alive is not None and alive["result"]["structuredContent"]["ok"] is True


@pytest.mark.slow
def test_non_finite_numbers_in_raw_json_are_invalid(raw: Any) -> None:
    args = {**TRANSFER, "volume_ul": "__NAN__"}
    params = json.dumps({"name": "transfer", "arguments": args}).replace('"__NAN__"', "NaN")
    answer = raw.request("tools/call", params)
    assert answer is not None
    if "error" in answer:  # the SDK's JSON reader refused the message itself: also an answer
        return
    assert _tool_error(answer) == "INVALID_ARGUMENT"
