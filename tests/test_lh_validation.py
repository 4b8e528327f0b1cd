"""Every refusal the liquid handler's twin and gate produce, through a real MCP session: the
code, ``defined``, a fix_hint, and nothing moved in the simulated world."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _lh import RACK, TRANSFER, believed, other_lab, twin_state, world_contents
from conftest import call, error_code
from mcp import ClientSession

from device_servers.sim.world import SimWorld

pytestmark = pytest.mark.anyio


def refused(payload: dict[str, Any], code: str) -> dict[str, Any]:
    """Assert a defined refusal with ``code`` and a fix_hint; return the error."""
    assert error_code(payload) == code, payload
    error = payload["error"]
    assert error["defined"] is True, error
    assert error["fix_hint"].strip(), error
    return dict(error)


async def execute(session: ClientSession, tool: str, action_id: str, **args: Any) -> None:
    payload = await call(session, tool, **args, dry_run=False, action_id=action_id)
    assert payload["ok"] is True, payload


async def refused_both_ways(
    session: ClientSession, world: SimWorld, code: str, tool: str, **args: Any
) -> dict[str, Any]:
    """The call is refused with ``code`` as a dry run and for real, and changes nothing."""
    state, contents = believed(await twin_state(session)), world_contents(world)
    ops = len(world.physical_ops())
    refused(await call(session, tool, **args), code)
    error = refused(await call(session, tool, **args, dry_run=False, action_id="x-1"), code)
    assert error["action_id"] == "x-1"
    assert believed(await twin_state(session)) == state
    assert world_contents(world) == contents
    assert len(world.physical_ops()) == ops
    return error


# --------------------------------------------------------------------------- INVALID_ARGUMENT


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("aspirate", {"labware": "plate_1", "wells": ["B1"], "volume_ul": "lots"}),
        ("aspirate", {"labware": "plate_1", "wells": "B1", "volume_ul": 10}),
        ("aspirate", {"labware": "plate_1", "wells": ["B1"], "volume_ul": 10, "speed": 3}),
        ("pick_up_tips", {"rack": RACK, "channels": []}),
        ("transfer", {**TRANSFER, "new_tip": "sometimes"}),
        ("mix", {"labware": "plate_1", "well": "B1"}),
        ("aspirate", {"labware": "plate_1", "wells": ["B1"], "volume_ul": 10, "dry_run": "no"}),
        ("pick_up_tips", {"rack": RACK, "spots": ["A1", "B1"], "channels": [0]}),
        ("pick_up_tips", {"rack": RACK, "channels": [1, 1]}),
    ],
)
async def test_malformed_command_arguments_are_refused_as_invalid(
    session: ClientSession, world: SimWorld, tool: str, args: dict[str, Any]
) -> None:
    refused(await call(session, tool, **args), "INVALID_ARGUMENT")
    assert world.physical_ops() == []


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("get_state", {"verbose": True}),
        # (emergency_stop is never refused: tests/test_strict_inputs.py)
        ("get_run", {"run_id": 7}),
        ("get_run", {"run_id": "r", "extra": 1}),
        ("run_events", {"run_id": "r", "max": 0}),
        ("run_events", {"run_id": "r", "since_seq": -1}),
        ("start_run", {"protocol": {"steps": []}}),
        ("start_run", {"protocol": {"steps": [{"command": "fly"}]}}),
        ("start_run", {"protocol": {"steps": [{"command": "drop_tips", "args": {"x": 1}}]}}),
        ("start_run", {"protocol": {"steps": [{"command": "drop_tips", "args": {"dry_run": 0}}]}}),
        ("start_run", {"protocol": {"steps": [{"command": "drop_tips"}]}, "dry_run": "false"}),
        ("run_events", {"run_id": "r", "since_seq": 2**63}),
        ("cancel_run", {}),
    ],
)
async def test_malformed_arguments_of_common_tools_are_refused_as_invalid(
    session: ClientSession, tool: str, args: dict[str, Any]
) -> None:
    refused(await call(session, tool, **args), "INVALID_ARGUMENT")


async def test_an_unknown_tool_is_refused_as_invalid_naming_the_tools(
    session: ClientSession,
) -> None:
    refused(await call(session, "fly_to_the_moon"), "INVALID_ARGUMENT")


async def test_executing_without_an_action_id_is_refused_and_moves_nothing(
    session: ClientSession, world: SimWorld
) -> None:
    refused(await call(session, "pick_up_tips", rack=RACK, dry_run=False), "INVALID_ARGUMENT")
    refused(
        await call(session, "pick_up_tips", rack=RACK, dry_run=False, action_id=""),
        "INVALID_ARGUMENT",
    )
    assert world.physical_ops() == []
    assert world.channel("lh1", 0)["tip"] is None


# --------------------------------------------------------------------------- deck names


async def test_unknown_labware_is_refused_with_the_known_names(
    session: ClientSession, world: SimWorld
) -> None:
    await refused_both_ways(
        session, world, "UNKNOWN_LABWARE", "aspirate", labware="plate_9", wells=["A1"], volume_ul=5
    )
    # A plate is not a tip rack, and the other way round.
    await refused_both_ways(session, world, "UNKNOWN_LABWARE", "pick_up_tips", rack="plate_1")
    await refused_both_ways(
        session, world, "UNKNOWN_LABWARE", "transfer", **{**TRANSFER, "source": RACK}
    )


async def test_unknown_wells_and_tip_spots_are_refused(
    session: ClientSession, world: SimWorld
) -> None:
    await refused_both_ways(
        session, world, "UNKNOWN_WELL", "aspirate", labware="plate_1", wells=["Z99"], volume_ul=5
    )
    await refused_both_ways(session, world, "UNKNOWN_WELL", "pick_up_tips", rack=RACK, spots=["Q1"])
    await refused_both_ways(
        session, world, "UNKNOWN_WELL", "transfer", **{**TRANSFER, "destination_wells": ["A13"]}
    )


# --------------------------------------------------------------------------- tips & volumes


async def test_aspirate_without_tip_is_refused_with_fix_hint(
    session: ClientSession, world: SimWorld
) -> None:
    await refused_both_ways(
        session, world, "NO_TIP", "aspirate", labware="plate_1", wells=["B1"], volume_ul=10
    )
    await refused_both_ways(session, world, "NO_TIP", "drop_tips")
    await refused_both_ways(session, world, "NO_TIP", "drop_tips", channels=[3])
    await refused_both_ways(
        session, world, "NO_TIP", "mix", labware="plate_1", well="B1", volume_ul=5
    )


async def test_picking_up_onto_a_channel_that_holds_a_tip_is_refused(
    session: ClientSession, world: SimWorld
) -> None:
    await execute(session, "pick_up_tips", "p-1", rack=RACK)
    await refused_both_ways(session, world, "TIP_ALREADY_ATTACHED", "pick_up_tips", rack=RACK)
    # transfer picks up its own tip on channel 0
    await refused_both_ways(session, world, "TIP_ALREADY_ATTACHED", "transfer", **TRANSFER)


async def test_picking_a_spot_already_emptied_is_refused_as_tiprack_empty(
    session: ClientSession, world: SimWorld
) -> None:
    await execute(session, "pick_up_tips", "p-1", rack=RACK, spots=["A1"], channels=[0])
    error = await refused_both_ways(
        session, world, "TIPRACK_EMPTY", "pick_up_tips", rack=RACK, spots=["A1"], channels=[1]
    )
    assert error["retriable"] is False


async def test_an_empty_rack_seen_by_read_back_is_refused_as_tiprack_empty(
    session: ClientSession, world: SimWorld
) -> None:
    for spot, present in world.tips(RACK).items():
        if present:
            world.remove_tip(RACK, spot)
    back = await call(session, "read_back")
    assert len([d for d in back["deviations"] if d["what"] == "tip_present"]) == 96
    await refused_both_ways(session, world, "TIPRACK_EMPTY", "pick_up_tips", rack=RACK)
    await refused_both_ways(session, world, "TIPRACK_EMPTY", "transfer", **TRANSFER)


async def test_aspirating_more_than_the_well_holds_is_refused(
    session: ClientSession, world: SimWorld
) -> None:
    await execute(session, "pick_up_tips", "p-1", rack=RACK)
    await refused_both_ways(
        session,
        world,
        "INSUFFICIENT_VOLUME",
        "aspirate",
        labware="plate_1",
        wells=["A1"],
        volume_ul=10,
    )
    await refused_both_ways(
        session, world, "INSUFFICIENT_VOLUME", "mix", labware="plate_1", well="C5", volume_ul=10
    )


async def test_dispensing_more_than_the_tip_holds_is_refused(
    session: ClientSession, world: SimWorld
) -> None:
    await execute(session, "pick_up_tips", "p-1", rack=RACK)
    await execute(session, "aspirate", "a-1", labware="reservoir", wells=["A1"], volume_ul=20)
    await refused_both_ways(
        session,
        world,
        "INSUFFICIENT_VOLUME",
        "dispense",
        labware="plate_1",
        wells=["A1"],
        volume_ul=30,
    )


async def test_dispensing_past_the_wells_capacity_is_refused_as_overflow(
    session: ClientSession, world: SimWorld
) -> None:
    # plate_1:B1 holds 300 of 360 uL.
    await refused_both_ways(
        session,
        world,
        "WELL_OVERFLOW",
        "transfer",
        **{**TRANSFER, "destination_wells": ["B1"], "volume_ul": 61},
    )
    await execute(session, "pick_up_tips", "p-1", rack=RACK)
    await execute(session, "aspirate", "a-1", labware="reservoir", wells=["A1"], volume_ul=100)
    await refused_both_ways(
        session, world, "WELL_OVERFLOW", "dispense", labware="plate_1", wells=["B1"], volume_ul=61
    )


async def test_aspirating_more_than_the_tip_can_hold_is_refused(
    session: ClientSession, world: SimWorld
) -> None:
    tip_max = (await twin_state(session))["labware"][RACK]["tip_max_volume_ul"]
    await refused_both_ways(
        session, world, "VOLUME_EXCEEDS_TIP", "transfer", **{**TRANSFER, "volume_ul": tip_max + 1}
    )
    await execute(session, "pick_up_tips", "p-1", rack=RACK)
    await execute(session, "aspirate", "a-1", labware="reservoir", wells=["A1"], volume_ul=100)
    await refused_both_ways(
        session,
        world,
        "VOLUME_EXCEEDS_TIP",
        "aspirate",
        labware="reservoir",
        wells=["A1"],
        volume_ul=tip_max - 99,
    )


# --------------------------------------------------------------------------- ranges


async def test_a_channel_that_does_not_exist_is_out_of_range(
    session: ClientSession, world: SimWorld
) -> None:
    await refused_both_ways(
        session, world, "OUT_OF_RANGE", "pick_up_tips", rack=RACK, channels=[99]
    )
    await refused_both_ways(session, world, "OUT_OF_RANGE", "drop_tips", channels=[8])
    await refused_both_ways(
        session, world, "OUT_OF_RANGE", "mix", labware="plate_1", well="B1", volume_ul=5, channel=99
    )


async def test_zero_mix_repetitions_are_out_of_range(
    session: ClientSession, world: SimWorld
) -> None:
    await execute(session, "pick_up_tips", "p-1", rack=RACK)
    for reps in (0, -1, 51):
        await refused_both_ways(
            session,
            world,
            "OUT_OF_RANGE",
            "mix",
            labware="plate_1",
            well="B1",
            volume_ul=5,
            repetitions=reps,
        )


async def test_zero_or_negative_mix_volume_in_a_transfer_is_out_of_range(
    session: ClientSession, world: SimWorld
) -> None:
    for volume in (0, -5):
        await refused_both_ways(
            session,
            world,
            "OUT_OF_RANGE",
            "transfer",
            **{**TRANSFER, "mix_after": 2, "mix_volume_ul": volume},
        )
    await refused_both_ways(session, world, "OUT_OF_RANGE", "transfer", **TRANSFER, mix_after=-1)


async def test_zero_or_negative_volumes_are_refused_by_the_default_policy(
    session: ClientSession, world: SimWorld
) -> None:
    await execute(session, "pick_up_tips", "p-1", rack=RACK)
    for volume in (0, -10):
        error = await refused_both_ways(
            session,
            world,
            "POLICY_DENIED",
            "aspirate",
            labware="reservoir",
            wells=["A1"],
            volume_ul=volume,
        )
        assert error["extra"]["rule"] == "max_volume_per_operation"


async def test_zero_or_negative_volumes_are_out_of_range_on_the_twin_without_a_policy(
    tmp_path: Path,
) -> None:
    rules = tmp_path / "no_rules.yaml"
    rules.write_text("kind: liquid_handler\nrules: []\n")

    def no_volume_limits(data: dict[str, Any]) -> None:
        data["instruments"][0]["policy"]["rules_file"] = str(rules)

    async with other_lab(tmp_path / "lab", no_volume_limits) as (session, world):
        await execute(session, "pick_up_tips", "p-1", rack=RACK)
        for volume in (0, -10):
            for tool in ("aspirate", "dispense"):
                await refused_both_ways(
                    session,
                    world,
                    "OUT_OF_RANGE",
                    tool,
                    labware="plate_1",
                    wells=["B1"],
                    volume_ul=volume,
                )
            await refused_both_ways(
                session,
                world,
                "OUT_OF_RANGE",
                "mix",
                labware="plate_1",
                well="B1",
                volume_ul=volume,
            )


# --------------------------------------------------------------------------- gate & ids


@pytest.mark.parametrize("tool", ["get_run", "run_events", "cancel_run"])
async def test_an_unknown_run_is_refused_as_not_found(session: ClientSession, tool: str) -> None:
    refused(await call(session, tool, run_id="run-does-not-exist"), "RUN_NOT_FOUND")


async def test_reusing_an_action_id_for_other_arguments_is_refused(
    session: ClientSession, world: SimWorld
) -> None:
    await execute(session, "pick_up_tips", "p-1", rack=RACK, spots=["A1"])
    error = refused(
        await call(
            session, "pick_up_tips", rack=RACK, spots=["B1"], dry_run=False, action_id="p-1"
        ),
        "ACTION_ID_REUSED",
    )
    assert error["action_id"] == "p-1"
    assert world.tips(RACK)["B1"] is True
    assert [op["op"] for op in world.physical_ops()] == ["pick"]


async def test_executing_on_a_lab_with_execution_disabled_is_refused(tmp_path: Path) -> None:
    def disable(data: dict[str, Any]) -> None:
        data["instruments"][0]["allow_execution"] = False

    async with other_lab(tmp_path / "lab", disable) as (session, world):
        assert (await twin_state(session))["execution_allowed"] is False
        before = world_contents(world)
        dry = await call(session, "transfer", **TRANSFER)
        assert dry["ok"] is True and dry["dry_run"] is True
        refused(
            await call(session, "transfer", **TRANSFER, dry_run=False, action_id="t-1"),
            "REAL_EXECUTION_DISABLED",
        )
        protocol = {"steps": [{"command": "transfer", "args": TRANSFER}]}
        refused(
            await call(session, "start_run", protocol=protocol, dry_run=False),
            "REAL_EXECUTION_DISABLED",
        )
        assert world_contents(world) == before
        assert world.physical_ops() == []
