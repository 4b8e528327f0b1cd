"""A tip holds what its rack's type says it may, not PyLabRobot's larger maximal volume
(``hamilton_96_tiprack_300uL`` tips are 400 uL there): the twin refuses more, the planner
splits by it, and the lab file can set it per tip-rack type."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _lh import RACK, other_lab, twin_state
from conftest import call, error_code, labwright, write_lab
from mcp import ClientSession

from agents.task.lab_view import build_lab_view
from agents.task.planning.models import Plan
from agents.task.planning.rules import RulePlanner

RACK_TYPE = "hamilton_96_tiprack_300uL"


async def _aspirate(session: ClientSession, volume: float, action: str) -> dict[str, Any]:
    return await call(
        session, "aspirate", labware="reservoir", wells=["A1"], volume_ul=volume,
        dry_run=False, action_id=action,
    )  # fmt: skip


async def _with_tip(session: ClientSession) -> None:
    got = await call(session, "pick_up_tips", rack=RACK, dry_run=False, action_id="p-1")
    assert got["ok"] is True, got


@pytest.mark.anyio
async def test_a_300_ul_tip_holds_300_ul_though_pylabrobot_says_400(
    session: ClientSession,
) -> None:
    assert (await twin_state(session))["labware"][RACK]["tip_max_volume_ul"] == 300
    await _with_tip(session)
    assert error_code(await _aspirate(session, 350, "a-350")) == "VOLUME_EXCEEDS_TIP"
    assert (await _aspirate(session, 300, "a-300"))["ok"] is True


@pytest.mark.anyio
async def test_the_lab_file_sets_a_tip_racks_usable_volume(tmp_path: Path) -> None:
    def patch(lab: dict[str, Any]) -> None:
        lab["instruments"][0]["tip_usable_volume_ul"] = {RACK_TYPE: 250}

    async with other_lab(tmp_path, patch) as (session, _world):
        assert (await twin_state(session))["labware"][RACK]["tip_max_volume_ul"] == 250
        await _with_tip(session)
        assert error_code(await _aspirate(session, 260, "a-260")) == "VOLUME_EXCEEDS_TIP"


def test_a_usable_volume_above_what_the_tip_holds_fails_check_in_one_line(tmp_path: Path) -> None:
    def patch(lab: dict[str, Any]) -> None:
        lab["instruments"][0]["tip_usable_volume_ul"] = {RACK_TYPE: 450}

    done = labwright("check", "--config", str(write_lab(tmp_path, patch)), env={"COLUMNS": "300"})
    assert done.returncode == 2
    assert "tip_usable_volume_ul" in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.anyio
async def test_the_planner_splits_by_the_usable_volume_the_server_reports(
    session: ClientSession,
) -> None:
    tools = [t.name for t in (await session.list_tools()).tools]
    lab = build_lab_view({"lh1": await twin_state(session)}, {"lh1": tools})
    result = RulePlanner().plan("transfer 350 uL from reservoir A1 to plate_1 A2", lab)
    assert isinstance(result, Plan), result
    assert [s.args["volume_ul"] for s in result.steps if s.command == "aspirate"] == [175, 175]


@pytest.mark.parametrize(
    ("name", "volume"),
    [
        ("hamilton_96_tiprack_300uL", 300),
        ("opentrons_96_tiprack_20ul", 20),
        ("tiprack_1mL_filter", 1000),
        ("HTF_L", None),
        ("hamilton_96_tiprack_50uL_NTR", 50),
    ],
)
def test_the_nominal_volume_is_read_from_the_types_name(name: str, volume: float | None) -> None:
    from device_servers.liquid_handler.catalogue import nominal_volume

    assert nominal_volume(name) == volume
