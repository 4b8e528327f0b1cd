"""Crash and resume of a whole task (the task process and its servers, kill -9), through the
real CLI: the crash harness's core on a one-row serial dilution. Judged from the simulated
world and the ledgers against an uninterrupted run, never from what the agent printed."""

from __future__ import annotations

import random
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import crash_harness as harness  # noqa: E402

pytestmark = pytest.mark.slow

# One row: 23 transfers in 16 steps (one transfer step of 24 operations, the rest smaller).
REQUEST = harness.QUICK_REQUEST
# Enough simulated time per operation that most kills land while an action is executing.
DELAY_S = 0.02


def test_kills_at_random_points_then_resume_leave_the_world_of_an_uninterrupted_run(
    tmp_path: Path,
) -> None:
    base_lab = harness.write_lab(tmp_path / "uninterrupted", DELAY_S)
    crash_lab = harness.write_lab(tmp_path / "crashed", DELAY_S)
    base: list[harness.Segment] = []
    errors: list[BaseException] = []

    def reference() -> None:
        try:
            base.append(harness.uninterrupted(base_lab, REQUEST))
        except BaseException as exc:  # surfaced below, in the test's thread
            errors.append(exc)

    worker = threading.Thread(target=reference)
    worker.start()
    tally = harness.crash_run(
        crash_lab, REQUEST, 4, random.Random(7), span_s=0.8, early=0.0, recovery_kills=1
    )
    worker.join(timeout=120)
    assert not errors, errors
    verdict = harness.judge(crash_lab, base_lab, tally.segments)

    assert tally.kills == 4
    # One resume after a kill was itself killed as it completed what the kill left (or it
    # had nothing in doubt to complete): either way the run ends as an uninterrupted one.
    assert tally.recovery_kills + tally.recovery_kills_missed == 1
    assert tally.interventions == []  # no person was needed
    assert verdict["final_status"] == "done"
    assert verdict["duplicated"] == []
    assert verdict["ledger_rows_not_unique"] == 0
    assert verdict["lost"] == []
    assert verdict["volume_diffs"] == [] and verdict["content_diffs"] == []
    assert verdict["tips_left"] == verdict["tips_left_uninterrupted"]
    assert verdict["tips_on_channels"] == 0
    assert verdict["ops_per_kind"] == verdict["ops_per_kind_uninterrupted"]
    assert verdict["incidents"] == 0
    # Kills landed inside actions, and each was resolved by reading the instrument back.
    assert verdict["in_doubt"], "no kill landed while an action was executing"
    for action_id in verdict["in_doubt"]:
        assert action_id.split("/")[1] in verdict["resolutions"], action_id
    assert harness.ok(verdict)


def test_a_run_killed_at_the_approval_prompt_is_approved_from_another_process(
    tmp_path: Path,
) -> None:
    result = harness.kill_while_waiting_for_approval(tmp_path, REQUEST, random.Random(3))

    assert result["killed_at_prompt"] is True
    assert result["physical_ops_before_approval"] == 0
    assert result["approve_exit"] == 0
    assert result["status"] == "done"
    assert result["physical_ops"] > 0
    assert harness.approval_ok(result)
