"""agents.task.runner.TaskRunner: real server processes, started when a run first uses them.

The lab of the task tests (lh1, reader1, hs1, arm1); which servers run is read from this
process's children (``python -m labwright serve <instrument>``).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from _task_lab import Crash, FakePlanner, make_plan, step, task_lab_file, transfer

from agents.task.runner import TaskRunner
from device_servers.lab import load

pytestmark = [pytest.mark.slow, pytest.mark.anyio]


def serving() -> set[str]:
    """The instruments whose server processes this process has running now."""
    found = set()
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        for pid in (task / "children").read_text().split():
            with contextlib.suppress(OSError):
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                if b"serve" in argv:
                    found.add(argv[argv.index(b"serve") + 1].decode())
    return found


def crash_at(step_id: str) -> Any:
    def progress(what: str, data: dict[str, Any]) -> None:
        if what == "dispatch" and data["step"] == step_id:
            raise Crash(f"the task process died before dispatching {step_id}")

    return progress


async def test_a_resumed_run_starts_only_the_servers_of_the_steps_it_has_left(
    tmp_path: Path,
) -> None:
    lab = load(task_lab_file(tmp_path))
    assert lab.source is not None
    second = step(
        "s2",
        "lh1",
        "transfer",
        None,
        source="reservoir",
        source_well="A1",
        destination="plate_1",
        destination_wells=["A2"],
        volume_ul=50.0,
        new_tip="once",
    )
    planner = FakePlanner(make_plan(transfer("s1", ["A1"]), second))
    first = TaskRunner(
        list(lab.instruments), lab.source, lab.db_path, planner, progress=crash_at("s2")
    )
    with anyio.fail_after(120):
        async with first:
            assert serving() == set()  # none before the run asks
            assert (await first.start("fill A1, then A2", run_id="run-1")).status == (
                "waiting_approval"
            )
            # Planning reads every instrument.
            assert serving() == {"lh1", "reader1", "hs1", "arm1"}
            with pytest.raises(Crash):
                await first.resume("run-1", {"decision": "approve"})

        again = TaskRunner(list(lab.instruments), lab.source, lab.db_path, planner)
        async with again:
            assert (await again.resume("run-1")).status == "done"
            assert serving() == {"lh1"}
            # An instrument not used yet is reached when asked: the e-stop gets there.
            assert (await again.context.agents["hs1"].call("emergency_stop"))["ok"] is True
            assert serving() == {"lh1", "hs1"}


async def test_a_warmed_runner_has_started_those_servers_before_anything_asks(
    tmp_path: Path,
) -> None:
    lab = load(task_lab_file(tmp_path))
    assert lab.source is not None
    planner = FakePlanner(make_plan(transfer("s1", ["A1"])))
    # A resumed run's instruments; a name the lab does not have is left alone.
    warm = ["arm1", "lh1", "not-in-this-lab"]
    runner = TaskRunner(list(lab.instruments), lab.source, lab.db_path, planner, warm=warm)
    with anyio.fail_after(120):
        async with runner:
            assert serving() == {"arm1", "lh1"}  # spawned while the graph was compiled
            state = await runner.context.agents["lh1"].state()
            assert state["kind"] == "liquid_handler"
            assert serving() == {"arm1", "lh1"}  # the warmed session is the one used
    assert serving() == set()
