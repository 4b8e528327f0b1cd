"""The liquid handler's MCP surface through a real client session: tools, resources, prompts,
dry runs and idempotency. Physical outcomes are judged from the simulated world."""

from __future__ import annotations

import json
from typing import Any

import pytest
from _lh import (
    RACK,
    TRANSFER,
    assert_world_matches_twin,
    believed,
    twin_state,
    wait_for_run,
    world_contents,
)
from conftest import call, error_code
from mcp import ClientSession
from mcp.shared.exceptions import McpError
from pydantic import AnyUrl

from device_servers.sim.world import SimWorld

pytestmark = pytest.mark.anyio

COMMANDS = ("pick_up_tips", "aspirate", "dispense", "drop_tips", "transfer", "mix")
COMMON = (
    "get_state",
    "read_back",
    "start_run",
    "run_events",
    "get_run",
    "cancel_run",
    "emergency_stop",
    "reset_estop",
    "confirm_state",
)


async def execute(session: ClientSession, tool: str, action_id: str, **args: Any) -> dict:
    payload = await call(session, tool, **args, dry_run=False, action_id=action_id)
    assert payload["ok"] is True, payload
    assert payload["dry_run"] is False and payload["action_id"] == action_id
    return payload


async def read_json(session: ClientSession, uri: str) -> dict[str, Any]:
    result = await session.read_resource(AnyUrl(uri))
    assert result.contents[0].mimeType == "application/json"
    return dict(json.loads(result.contents[0].text))  # type: ignore[union-attr]


# --------------------------------------------------------------------------- listing


async def test_list_tools_names_every_tool_with_a_description_and_an_object_schema(
    session: ClientSession,
) -> None:
    tools = {t.name: t for t in (await session.list_tools()).tools}
    assert set(tools) == set(COMMON) | set(COMMANDS)
    for name, tool in tools.items():
        assert tool.description and len(tool.description) > 20, name
        assert tool.inputSchema["type"] == "object", name
        assert tool.inputSchema["additionalProperties"] is False, name


async def test_every_command_takes_an_action_id_and_dry_run_defaulting_to_true(
    session: ClientSession,
) -> None:
    tools = {t.name: t for t in (await session.list_tools()).tools}
    for name in COMMANDS:
        props = tools[name].inputSchema["properties"]
        assert props["action_id"]["type"] == "string", name
        assert props["dry_run"] == {**props["dry_run"], "type": "boolean", "default": True}, name
    assert tools["emergency_stop"].inputSchema.get("required", []) == []
    assert tools["reset_estop"].inputSchema["required"] == ["action_id"]


# --------------------------------------------------------------------------- state tools


async def test_get_state_reports_the_deck_exactly_as_the_world_holds_it(
    session: ClientSession, world: SimWorld
) -> None:
    state = await twin_state(session)
    assert state["instrument"] == "lh1" and state["simulated"] is True
    assert state["estop"] is False and state["stale"] is None and state["busy_with_run"] is None
    assert state["labware"]["reservoir"]["wells"]["A1"]["volume_ul"] == 10000
    assert state["labware"][RACK]["tips_remaining"] == 96
    assert_world_matches_twin(state, world)


async def test_read_back_adopts_the_world_and_lists_the_deviation(
    session: ClientSession, world: SimWorld
) -> None:
    world.set_well("plate_1", "B1", 120.0)
    world.remove_tip(RACK, "A1")
    result = await call(session, "read_back")
    assert result["ok"] is True and result["stale"] is None
    seen = {(d["what"], d.get("well")) for d in result["deviations"]}
    assert seen == {("well_volume", "B1"), ("tip_present", "A1")}
    state = await twin_state(session)
    assert state["labware"]["plate_1"]["wells"]["B1"]["volume_ul"] == pytest.approx(120)
    assert_world_matches_twin(state, world)
    assert world.physical_ops() == []


# --------------------------------------------------------------------------- commands


async def test_pick_up_tips_puts_a_real_tip_on_each_named_channel(
    session: ClientSession, world: SimWorld
) -> None:
    result = await execute(
        session, "pick_up_tips", "p-1", rack=RACK, spots=["C3", "D3"], channels=[2, 3]
    )
    assert result["simulated"] is True
    assert world.channel("lh1", 2)["tip"]["spot"] == "C3"
    assert world.channel("lh1", 3)["tip"]["spot"] == "D3"
    assert world.tips(RACK)["C3"] is False and world.tips(RACK)["D3"] is False
    assert [e["type"] for e in result["events"]] == ["tip_picked_up", "tip_picked_up"]
    assert_world_matches_twin(result["state"], world)


async def test_aspirate_then_dispense_moves_liquid_through_the_tip(
    session: ClientSession, world: SimWorld
) -> None:
    await execute(session, "pick_up_tips", "p-1", rack=RACK)
    await execute(session, "aspirate", "a-1", labware="reservoir", wells=["A1"], volume_ul=120)
    assert world.channel("lh1", 0)["contents"] == pytest.approx({"dye": 120})
    result = await execute(
        session, "dispense", "d-1", labware="plate_1", wells=["C1"], volume_ul=120
    )
    assert world.well("reservoir", "A1")["volume_ul"] == pytest.approx(10000 - 120)
    assert world.well("plate_1", "C1")["contents"] == pytest.approx({"dye": 120})
    assert world.channel("lh1", 0)["contents"] == {}
    assert_world_matches_twin(result["state"], world)


async def test_drop_tips_to_trash_and_to_rack_empties_the_channels(
    session: ClientSession, world: SimWorld
) -> None:
    await execute(session, "pick_up_tips", "p-1", rack=RACK, spots=["A1", "B1"], channels=[0, 1])
    await execute(session, "drop_tips", "d-0", channels=[0])
    await execute(session, "drop_tips", "d-1", channels=[1], destination="rack")
    assert [c["tip"] for c in world.channels("lh1")] == [None] * 8
    assert world.tips(RACK)["A1"] is False  # in the trash
    assert world.tips(RACK)["B1"] is True  # back where it came from
    assert_world_matches_twin(await twin_state(session), world)


async def test_transfer_fills_every_destination_with_a_new_tip_each(
    session: ClientSession, world: SimWorld
) -> None:
    result = await execute(
        session, "transfer", "t-1", **{**TRANSFER, "destination_wells": ["A2", "B2", "C2"]}
    )
    for well in ("A2", "B2", "C2"):
        assert world.well("plate_1", well)["contents"] == pytest.approx({"dye": 50})
    assert world.well("reservoir", "A1")["volume_ul"] == pytest.approx(10000 - 150)
    assert [op["op"] for op in world.physical_ops()].count("pick") == 3
    assert sum(not present for present in world.tips(RACK).values()) == 3
    assert_world_matches_twin(result["state"], world)


async def test_mix_keeps_the_well_volume_and_cycles_the_tip_repetitions_times(
    session: ClientSession, world: SimWorld
) -> None:
    await execute(session, "pick_up_tips", "p-1", rack=RACK)
    before = len(world.physical_ops())
    result = await execute(
        session, "mix", "m-1", labware="plate_1", well="B1", volume_ul=100, repetitions=4
    )
    ops = [op["op"] for op in world.physical_ops()[before:]]
    assert ops == ["aspirate", "dispense"] * 4
    assert world.well("plate_1", "B1")["volume_ul"] == pytest.approx(300)
    assert_world_matches_twin(result["state"], world)


async def test_emergency_stop_latches_and_refuses_every_real_command(
    session: ClientSession, world: SimWorld
) -> None:
    stopped = await call(session, "emergency_stop")
    assert stopped["ok"] is True and stopped["estop"] is True
    refused = await call(session, "pick_up_tips", rack=RACK, dry_run=False, action_id="p-1")
    assert error_code(refused) == "ESTOP_ACTIVE" and refused["error"]["fix_hint"]
    dry = await call(session, "pick_up_tips", rack=RACK)
    assert dry["ok"] is True and dry["warnings"]
    state = await twin_state(session)
    assert state["estop"] is True and state["stale"]
    assert world.physical_ops() == []
    again = await call(session, "emergency_stop")
    assert again["ok"] is True  # never gated, even when already latched


async def test_reset_estop_without_a_persons_approval_is_refused_and_stays_latched(
    session: ClientSession, world: SimWorld
) -> None:
    await call(session, "emergency_stop")
    refused = await call(session, "reset_estop", action_id="reset-1")
    assert error_code(refused) == "APPROVAL_REQUIRED"
    assert refused["error"]["defined"] is True and refused["error"]["fix_hint"]
    assert refused["error"]["action_id"] == "reset-1"
    assert (await twin_state(session))["estop"] is True
    missing = await call(session, "reset_estop")
    assert error_code(missing) == "INVALID_ARGUMENT"


# --------------------------------------------------------------------------- resources


async def test_resources_list_state_policy_labware_and_tip_racks(session: ClientSession) -> None:
    uris = {str(r.uri) for r in (await session.list_resources()).resources}
    assert uris == {
        "lab://lh1/state",
        "lab://lh1/policy",
        "lab://lh1/labware/plate_1",
        "lab://lh1/labware/reservoir",
        "lab://lh1/tips/tips_1",
    }
    templates = {t.uriTemplate for t in (await session.list_resource_templates()).resourceTemplates}
    assert templates == {
        "lab://lh1/labware/{labware_id}",
        "lab://lh1/tips/{rack_id}",
        "lab://lh1/runs/{run_id}",
    }


async def test_state_and_policy_resources_match_the_tools(session: ClientSession) -> None:
    await execute(session, "pick_up_tips", "p-1", rack=RACK)
    state = await read_json(session, "lab://lh1/state")
    assert believed(state) == believed(await twin_state(session))
    policy = await read_json(session, "lab://lh1/policy")
    assert policy["instrument"] == "lh1"
    assert "max_volume_per_operation" in {r["id"] for r in policy["rules"]}


async def test_labware_and_tip_rack_resources_describe_the_twin(session: ClientSession) -> None:
    await execute(session, "transfer", "t-1", **TRANSFER)
    plate = await read_json(session, "lab://lh1/labware/plate_1")
    assert plate["id"] == "plate_1" and plate["kind"] == "plate"
    assert plate["wells"]["A1"]["volume_ul"] == pytest.approx(50)
    rack = await read_json(session, "lab://lh1/tips/tips_1")
    assert rack["kind"] == "tip_rack" and rack["tips_remaining"] == 95
    for wrong in ("lab://lh1/tips/plate_1", "lab://lh1/labware/tips_1", "lab://lh1/nothing"):
        with pytest.raises(McpError):
            await session.read_resource(AnyUrl(wrong))


async def test_run_resource_reports_the_run_as_get_run_does(session: ClientSession) -> None:
    started = await call(
        session, "start_run", protocol={"steps": [{"command": "transfer", "args": TRANSFER}]}
    )
    info = await wait_for_run(session, started["run_id"])
    resource = await read_json(session, f"lab://lh1/runs/{started['run_id']}")
    assert resource == {k: v for k, v in info.items() if k != "ok"}
    with pytest.raises(McpError):
        await session.read_resource(AnyUrl("lab://lh1/runs/run-missing"))


# --------------------------------------------------------------------------- prompts


async def test_prompts_list_the_standard_procedures(session: ClientSession) -> None:
    prompts = {p.name: p for p in (await session.list_prompts()).prompts}
    assert set(prompts) == {"serial_dilution", "recover_from_error"}
    required = {a.name for a in prompts["serial_dilution"].arguments or [] if a.required}
    assert required == {"plate", "row", "final_volume_ul"}


async def test_serial_dilution_prompt_names_the_plate_row_and_volumes(
    session: ClientSession,
) -> None:
    result = await session.get_prompt(
        "serial_dilution", {"plate": "plate_1", "row": "c", "final_volume_ul": "100"}
    )
    text = result.messages[0].content.text  # type: ignore[union-attr]
    assert "plate_1" in text and "C12" in text and "200 uL" in text  # 100 + 100 moved (2-fold)
    with pytest.raises(McpError):
        await session.get_prompt("serial_dilution", {"plate": "plate_1"})


# --------------------------------------------------------------------------- dry runs


async def _assert_dry_run_changes_nothing(
    session: ClientSession, world: SimWorld, tool: str, **args: Any
) -> dict[str, Any]:
    state_before, world_before = await twin_state(session), world_contents(world)
    ops_before = len(world.physical_ops())
    result = await call(session, tool, **args)
    assert result["ok"] is True, result
    assert result["simulated"] is True and result["dry_run"] is True
    assert believed(result["state"]) != believed(state_before), f"{tool} predicted no change"
    assert believed(await twin_state(session)) == believed(state_before), tool
    assert world_contents(world) == world_before, tool
    assert len(world.physical_ops()) == ops_before, tool
    return result


async def test_dry_run_is_the_default_and_moves_nothing_for_every_command(
    session: ClientSession, world: SimWorld
) -> None:
    await _assert_dry_run_changes_nothing(session, world, "pick_up_tips", rack=RACK)
    await _assert_dry_run_changes_nothing(session, world, "transfer", **TRANSFER)
    # Aspirate, dispense, mix and drop need a tip holding liquid: put one there for real.
    await execute(session, "pick_up_tips", "p-1", rack=RACK)
    await execute(session, "aspirate", "a-1", labware="reservoir", wells=["A1"], volume_ul=100)
    aspirated = await _assert_dry_run_changes_nothing(
        session, world, "aspirate", labware="reservoir", wells=["A1"], volume_ul=50
    )
    assert aspirated["state"]["channels"][0]["volume_ul"] == pytest.approx(150)
    await _assert_dry_run_changes_nothing(
        session, world, "dispense", labware="plate_1", wells=["A1"], volume_ul=50
    )
    await _assert_dry_run_changes_nothing(
        session, world, "mix", labware="plate_1", well="B1", volume_ul=50, repetitions=2
    )
    await _assert_dry_run_changes_nothing(session, world, "drop_tips", dry_run=True)


# --------------------------------------------------------------------------- idempotency


async def test_same_action_id_and_arguments_replays_the_outcome_and_acts_once(
    session: ClientSession, world: SimWorld
) -> None:
    first = await execute(session, "transfer", "t-1", **TRANSFER)
    ops = len(world.physical_ops())
    assert ops == 4
    again = await execute(session, "transfer", "t-1", **TRANSFER)
    assert again["replayed"] is True and not first.get("replayed")
    assert again["state"] == first["state"]
    assert len(world.physical_ops()) == ops
    assert world.well("plate_1", "A1")["volume_ul"] == pytest.approx(50)


async def test_same_action_id_with_other_arguments_is_refused_as_reused(
    session: ClientSession, world: SimWorld
) -> None:
    await execute(session, "transfer", "t-1", **TRANSFER)
    reused = await call(
        session, "transfer", **{**TRANSFER, "volume_ul": 60}, dry_run=False, action_id="t-1"
    )
    assert error_code(reused) == "ACTION_ID_REUSED"
    assert reused["error"]["defined"] is True and reused["error"]["fix_hint"]
    other_tool = await call(session, "pick_up_tips", rack=RACK, dry_run=False, action_id="t-1")
    assert error_code(other_tool) == "ACTION_ID_REUSED"
    assert world.well("plate_1", "A1")["volume_ul"] == pytest.approx(50)
    assert len(world.physical_ops()) == 4


async def test_a_failed_action_replays_its_recorded_error_without_acting_again(
    session: ClientSession, world: SimWorld
) -> None:
    # The world fails the next pick once; a second dispatch would succeed, so a replayed
    # NO_TIP proves the action was not sent again.
    world.add_fault("lh1", {"kind": "tip_pickup_fail", "times": 1})
    failed = await call(session, "pick_up_tips", rack=RACK, dry_run=False, action_id="p-1")
    assert error_code(failed) == "NO_TIP" and failed["error"]["action_id"] == "p-1"
    again = await call(session, "pick_up_tips", rack=RACK, dry_run=False, action_id="p-1")
    assert error_code(again) == "NO_TIP"
    assert again["error"]["extra"]["replayed"] is True
    assert world.physical_ops() == []
    assert world.channel("lh1", 0)["tip"] is None
    fresh = await execute(session, "pick_up_tips", "p-2", rack=RACK)
    assert fresh["state"]["channels"][0]["tip"] is not None
    assert [op["op"] for op in world.physical_ops()] == ["pick"]
