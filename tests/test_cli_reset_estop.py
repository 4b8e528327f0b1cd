"""``labwright reset-estop``: a person at the instrument clears a latched e-stop while no run
serves it; the instrument stays stale, so nothing moves before a read back."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from conftest import call, error_code, labwright
from test_estop_and_faults import TRANSFER, served

pytestmark = pytest.mark.anyio


async def test_a_person_resets_a_latched_estop_and_the_instrument_stays_stale(
    tmp_path: Path,
) -> None:
    async with served(tmp_path) as (s, _, _, lab_file):
        await call(s, "emergency_stop")
    done = await anyio.to_thread.run_sync(
        lambda: labwright("reset-estop", "lh1", "--config", str(lab_file))
    )
    assert done.returncode == 0, done.stderr
    async with served(tmp_path) as (s, rt, world, _):
        assert rt.estop is False and rt.stale_reason
        refused = await call(s, "transfer", **TRANSFER, dry_run=False, action_id="t-1")
        assert error_code(refused) == "STATE_STALE"
        assert world.physical_ops("lh1") == []
        events = (await call(s, "run_events", run_id="lh1:direct", max=1000))["events"]
        assert "estop_reset" in {e["type"] for e in events}
