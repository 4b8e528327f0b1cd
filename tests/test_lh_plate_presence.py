"""The liquid handler notices, by reading back, that a plate left its deck or came back."""

from __future__ import annotations

import pytest
from conftest import call, error_code
from mcp import ClientSession

from device_servers.sim.world import SimWorld

pytestmark = pytest.mark.anyio

FILL = dict(labware="plate_1", wells=["B1"], volume_ul=50)


async def test_plates_are_placed_in_the_world_at_their_deck_slots(
    session: ClientSession, world: SimWorld
) -> None:
    assert world.location_of("plate_1") == "lh1:plate_carrier:1"
    state = (await call(session, "get_state"))["state"]
    assert state["labware"]["plate_1"]["location"] == "lh1:plate_carrier:1"
    assert state["labware"]["plate_1"]["present"] is True


async def test_acting_on_a_plate_that_was_taken_away_is_refused_and_the_twin_learns_it(
    session: ClientSession, world: SimWorld
) -> None:
    await call(session, "pick_up_tips", rack="tips_1", dry_run=False, action_id="pick")
    world.conn.execute("UPDATE plates SET location='hotel:1' WHERE labware='plate_1'")
    before = world.well("plate_1", "B1")

    refused = await call(session, "aspirate", **FILL, dry_run=False, action_id="asp")
    assert error_code(refused) == "UNKNOWN_LABWARE"
    deviations = refused["error"]["extra"]["deviations"]
    assert {"what": "labware_present", "labware": "plate_1"}.items() <= deviations[0].items()
    assert world.well("plate_1", "B1") == before  # nothing aspirated from a plate not there

    # The twin now knows: even a dry run is refused before anything is sent.
    dry = await call(session, "aspirate", **FILL)
    assert error_code(dry) == "UNKNOWN_LABWARE"
    assert dry["error"]["fix_hint"]


async def test_a_plate_brought_back_is_usable_again_after_read_back(
    session: ClientSession, world: SimWorld
) -> None:
    await call(session, "pick_up_tips", rack="tips_1", dry_run=False, action_id="pick")
    world.conn.execute("UPDATE plates SET location='hotel:1' WHERE labware='plate_1'")
    await call(session, "aspirate", **FILL, dry_run=False, action_id="asp-1")
    world.conn.execute("UPDATE plates SET location='lh1:plate_carrier:1' WHERE labware='plate_1'")

    back = await call(session, "read_back")
    assert any(d["what"] == "labware_present" and d["observed"] is True for d in back["deviations"])
    done = await call(session, "aspirate", **FILL, dry_run=False, action_id="asp-2")
    assert done["ok"] is True
    assert world.well("plate_1", "B1")["volume_ul"] == pytest.approx(250)
