"""A first end-to-end look through a real MCP client session (in memory)."""

from __future__ import annotations

import pytest
from conftest import call, error_code
from mcp import ClientSession

pytestmark = pytest.mark.anyio


async def test_transfer_executes_once_and_replays_by_action_id(
    session: ClientSession, world
) -> None:
    args = dict(
        source="reservoir",
        source_well="A1",
        destination="plate_1",
        destination_wells=["A1"],
        volume_ul=50,
    )
    first = await call(session, "transfer", **args, dry_run=False, action_id="t-1")
    assert first["ok"] and first["simulated"] and not first["dry_run"]
    again = await call(session, "transfer", **args, dry_run=False, action_id="t-1")
    assert again["replayed"] is True
    assert world.well("plate_1", "A1")["volume_ul"] == pytest.approx(50)
    reused = await call(
        session, "transfer", **{**args, "volume_ul": 60}, dry_run=False, action_id="t-1"
    )
    assert error_code(reused) == "ACTION_ID_REUSED"
