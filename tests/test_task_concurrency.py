"""Steps on different instruments run at the same time, in the order the simulation derives.

The two-plate plan (prepare, shake and read plate_1, then plate_2) on the four-instrument lab:
the simulation's timeline (dependencies, per-instrument start/end, critical path, makespan),
branches that overlap, a strictly sequential run, a fault and an e-stop in one branch while
another is under way. Outcomes are judged from the world and the ledgers.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import anyio
import pytest
from _task_lab import Crash, FakePlanner, TaskLab, process, question, task_lab, waiting_for
from _two_plates import HOLDER, HOMES, WELLS, index_of, two_plate_lab_file, two_plate_plan
from mcp import ClientSession

from device_servers.lab import load

pytestmark = pytest.mark.anyio

PLAN = two_plate_plan()
PREP_2 = index_of(PLAN, "lh1", "transfer", "plate_2")
SHAKE_1 = index_of(PLAN, "hs1", "shake")
MOVE_1_OUT = index_of(PLAN, "arm1", "move_plate", "plate_1")  # plate_1 off the deck


@pytest.fixture
async def lab(tmp_path: Path) -> AsyncIterator[TaskLab]:
    async with task_lab(tmp_path, lab_file=two_plate_lab_file) as served:
        yield served


def order(lab: TaskLab) -> list[tuple[str, str]]:
    """(what, step) of every dispatch and end, in the order they happened."""
    return [(w, d["step"]) for w, d in lab.events if w in ("dispatch", "ended")]


def after(lab: TaskLab, first: tuple[str, str], then: tuple[str, str]) -> bool:
    seen = order(lab)
    return seen.index(first) < seen.index(then)


def shakes(lab: TaskLab) -> list[str]:
    """Shakes the heater-shaker executed, from its action ledger."""
    return [a["action_id"] for a in lab.actions("hs1") if a["command"] == "shake"]


def no_action_twice(lab: TaskLab) -> None:
    ids = [r["action_id"] for r in lab.actions()]
    assert len(ids) == len(set(ids))


# --------------------------------------------------------------------------- the timeline
async def test_the_simulation_derives_what_depends_on_what_and_the_run_s_timeline(
    lab: TaskLab,
) -> None:
    asked = await lab.start(lab.context(FakePlanner(PLAN)))
    line = lab.simulation(asked)["timeline"]
    deps = {s["step"]: s["after"] for s in line["steps"]}
    ids = [s.id for s in PLAN.steps]
    # plate_2's preparation waits for the liquid handler's step before it and for the arm
    # taking plate_1 off the deck, not for plate_1's shake.
    assert set(deps[PREP_2]) == {ids[0], MOVE_1_OUT}
    # A reading comes after the pipetting into its plate (through the plate's moves).
    read_1 = index_of(PLAN, "reader1", "read_absorbance", "plate_1")
    assert reaches(deps, read_1, ids[0]) and not reaches(deps, read_1, PREP_2)
    # plate_2 goes on the holder only after plate_1 has left it.
    move_2_in = next(s.id for s in PLAN.steps if s.args.get("plate") == "plate_2")
    move_1_to_reader = next(
        s.id for s in PLAN.steps if s.args == {"plate": "plate_1", "to_location": "reader1:drawer"}
    )
    assert reaches(deps, move_2_in, move_1_to_reader)
    # The two shakes are on the critical path; the makespan is within 10% of it, and shorter
    # than one step after another.
    shakes = [s.id for s in PLAN.steps if s.command == "shake"]
    assert set(shakes) <= set(line["critical_path"])
    assert line["makespan_s"] <= 1.10 * line["critical_path_s"]
    assert line["makespan_s"] < line["sequential_s"]
    timed = {s["step"]: s for s in line["steps"]}
    prep, shake = timed[PREP_2], timed[SHAKE_1]
    assert prep["start_s"] < shake["end_s"] and shake["start_s"] < prep["end_s"]  # overlap
    # Durations are the twins' own estimates (a shake is its duration_s).
    assert shake["end_s"] - shake["start_s"] == 300.0
    # The question a person approves shows the timeline.
    shown = question(asked)
    assert shown is not None and shown["simulation"]["timeline"]["makespan_s"] == line["makespan_s"]
    minutes = f"about {line['makespan_s'] / 60:.1f} min, critical path"
    assert minutes in shown["description"]  # the Agent Inbox summary says it too


def reaches(deps: dict[str, list[str]], step: str, earlier: str) -> bool:
    """Whether ``step`` depends on ``earlier``, directly or through other steps."""
    todo, seen = list(deps[step]), set()
    while todo:
        s = todo.pop()
        if s == earlier:
            return True
        if s not in seen:
            seen.add(s)
            todo.extend(deps[s])
    return False


# --------------------------------------------------------------------------- running
async def test_independent_steps_on_different_instruments_run_at_the_same_time(
    lab: TaskLab,
) -> None:
    ctx = lab.context(FakePlanner(PLAN))
    done = await lab.approved(ctx)
    assert done.values["status"] == "done"
    assert done.values["report"]["steps_done"] == len(PLAN.steps)
    # plate_2 was pipetted while plate_1 was shaking: dispatched before the shake ended.
    assert after(lab, ("dispatch", PREP_2), ("ended", SHAKE_1))
    assert after(lab, ("dispatch", SHAKE_1), ("ended", PREP_2)) or after(
        lab, ("dispatch", PREP_2), ("dispatch", SHAKE_1)
    )
    # The world as planned: both plates filled and read, plate_1 home, plate_2 in the drawer.
    for plate in ("plate_1", "plate_2"):
        assert [lab.volume(plate, w) for w in WELLS] == [100.0] * 3
    assert lab.world.location_of("plate_1") == HOMES["plate_1"]
    assert lab.world.location_of("plate_2") == "reader1:drawer"
    assert [r["plate"] for r in done.values["report"]["readings"]] == ["plate_1", "plate_2"]
    assert lab.world.incidents() == []
    no_action_twice(lab)
    # Each instrument's lane of observations, in its own order.
    assert done.values["observed"] == {"lh1": 2, "hs1": 9, "arm1": 5, "reader1": 6}


async def test_a_sequential_run_does_one_step_after_another(lab: TaskLab) -> None:
    ctx = lab.context(FakePlanner(PLAN))
    asked = await lab.start(ctx)
    assert waiting_for(asked) == "approval"
    done = await lab.answer(ctx, {"decision": "approve", "sequential": True})
    assert done.values["status"] == "done" and done.values["sequential"] is True
    seen = order(lab)
    expected = [(w, s.id) for s in PLAN.steps for w in ("dispatch", "ended")]
    assert seen == expected
    no_action_twice(lab)


async def test_a_run_started_sequential_is_simulated_as_one_chain(lab: TaskLab) -> None:
    ctx = lab.context(FakePlanner(PLAN))
    first = {"run_id": "run-1", "request": "r", "deviations": [], "sequential": True}
    asked = await lab.drive(ctx, first)
    line = lab.simulation(asked)["timeline"]
    assert line["sequential"] is True
    assert line["makespan_s"] == line["sequential_s"] == line["critical_path_s"]
    assert [s["after"] for s in line["steps"]][1] == [PLAN.steps[0].id]


# --------------------------------------------------------------------------- faults
@dataclass
class Hold:
    """What happens to one step's executing calls: ``before`` runs first (once), ``sent`` is
    set, the call waits for ``gate``, then fails ``fail`` times (the pipe) or goes through;
    with ``lost`` the task process dies as the instrument answers (:class:`Crash`)."""

    gate: anyio.Event | None = None
    fail: int = 0
    lost: bool = False
    before: Callable[[ClientSession], Awaitable[Any]] | None = None
    sent: anyio.Event = field(default_factory=anyio.Event)


class Held:
    """An MCP session whose executing calls of some steps are held (see :class:`Hold`)."""

    def __init__(self, inner: ClientSession, holds: dict[str, Hold]) -> None:
        self.inner, self.holds = inner, holds

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        args = arguments or {}
        action = str(args.get("action_id") or "")
        hold = self.holds.get(action.split("/")[1]) if action.count("/") >= 2 else None
        if hold is None or args.get("dry_run") is not False:
            return await self.inner.call_tool(name, arguments)
        if hold.before is not None:
            before, hold.before = hold.before, None
            await before(self.inner)
        hold.sent.set()
        if hold.gate is not None:
            with anyio.fail_after(30):
                await hold.gate.wait()
        if hold.fail > 0:
            hold.fail -= 1
            raise anyio.ClosedResourceError()
        answer = await self.inner.call_tool(name, arguments)
        if hold.lost:
            raise Crash(f"the task process died as {action} was answered")
        return answer

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def holding(holds: dict[str, dict[str, Hold]]) -> Callable[[str, ClientSession], ClientSession]:
    """A session wrap holding the given steps of each instrument."""

    def wrap(inst: str, session: ClientSession) -> ClientSession:
        if inst not in holds:
            return session
        return cast(ClientSession, Held(session, holds[inst]))

    return wrap


async def test_a_fault_in_one_branch_asks_a_person_and_keeps_the_other_branch_s_results(
    tmp_path: Path,
) -> None:
    # plate_2's preparation cannot reach the liquid handler (twice) while plate_1 shakes: its
    # question waits until the shake has ended and been checked; nothing new starts meanwhile.
    shake = Hold()
    prep = Hold(gate=shake.sent, fail=2)
    wrap = holding({"hs1": {SHAKE_1: shake}, "lh1": {PREP_2: prep}})
    async with task_lab(tmp_path, wrap, two_plate_lab_file) as lab:
        ctx = lab.context(FakePlanner(PLAN))
        snap = await lab.approved(ctx)
        asked = question(snap)
        assert asked is not None and asked["step"] == PREP_2 and asked["about"] == "deviation"
        assert asked["observation"]["transport_error"]
        # The shake under way finished and was checked: its result is kept.
        assert (SHAKE_1, True) in [(o["step_id"], o["ok"]) for o in lab.observations(snap)]
        assert shakes(lab) == [f"run-1/{SHAKE_1}/shake"]
        assert [r["action_id"].split("/")[1] for r in lab.actions("lh1")] == ["s1"]
        # The person retries: only what is left (the same action, completed), then the rest.
        done = await lab.answer(ctx, {"decision": "retry"})
        assert done.values["status"] == "done"
        assert len(shakes(lab)) == 2  # plate_1 was not shaken again
        assert [lab.volume("plate_2", w) for w in WELLS] == [100.0] * 3
        assert lab.world.incidents() == []
        no_action_twice(lab)


async def test_an_estop_on_one_instrument_stops_the_run_and_the_step_under_way_elsewhere_ends(
    tmp_path: Path,
) -> None:
    async def press(inner: ClientSession) -> None:
        await inner.call_tool("emergency_stop", {})

    shake = Hold(before=press)  # the e-stop is pressed just as the shake is sent
    prep = Hold(gate=shake.sent)  # plate_2's preparation is under way when it is
    wrap = holding({"hs1": {SHAKE_1: shake}, "lh1": {PREP_2: prep}})
    async with task_lab(tmp_path, wrap, two_plate_lab_file) as lab:
        ctx = lab.context(FakePlanner(PLAN))
        snap = await lab.approved(ctx)
        asked = question(snap)
        assert asked is not None and asked["step"] == SHAKE_1 and asked["about"] == "estop"
        # plate_2's preparation was under way on another instrument: it ended, checked.
        assert [lab.volume("plate_2", w) for w in WELLS] == [100.0] * 3
        assert (PREP_2, True) in [(o["step_id"], o["ok"]) for o in lab.observations(snap)]
        # Nothing started after the e-stop: no shake, plate_2 never left the deck.
        assert shakes(lab) == []
        assert lab.world.location_of("plate_1") == HOLDER
        assert lab.world.location_of("plate_2") == HOMES["plate_2"]
        done = await lab.answer(ctx, {"decision": "abort"})
        assert done.values["status"] == "aborted"
        no_action_twice(lab)


# --------------------------------------------------------------------------- crashes
async def test_a_crash_while_two_instruments_act_resumes_every_branch_without_repeating_one(
    tmp_path: Path,
) -> None:
    # The process dies as plate_2's preparation is answered, while plate_1 shakes (for 10 s:
    # long after the transfer, however loaded the machine).
    config = load(two_plate_lab_file(tmp_path, hs_time_scale=30))
    checkpoints = tmp_path / "checkpoints.sqlite"
    shake = Hold()
    prep = Hold(gate=shake.sent, lost=True)
    wrap = holding({"hs1": {SHAKE_1: shake}, "lh1": {PREP_2: prep}})
    async with process(config, checkpoints, wrap) as first:
        ctx = first.context(FakePlanner(PLAN))
        assert waiting_for(await first.start(ctx)) == "approval"
        with pytest.raises(Crash):
            await first.answer(ctx, {"decision": "approve"})
        assert [first.volume("plate_2", w) for w in WELLS] == [100.0] * 3
        # The shake was under way: in its ledger, not finished.
        assert [a["status"] for a in first.actions("hs1") if a["command"] == "shake"] == ["pending"]

    # The lab as usual again (a shake takes 0.5 s) for the rest of the run.
    async with process(load(two_plate_lab_file(tmp_path)), checkpoints) as second:
        ctx = second.context(FakePlanner(PLAN))
        snap = await second.drive(ctx, None)
        # The shake's outcome died with the process: how long it ran is unknown, so a person
        # decides; plate_2's preparation was answered from its ledger, not done again.
        asked = question(snap)
        assert asked is not None and asked["step"] == SHAKE_1
        assert asked["observation"]["error"]["code"] == "ACTION_IN_DOUBT"
        assert [o["op"] for o in second.ops("lh1") if o["op"] == "dispense"] == ["dispense"] * 6
        done = await second.answer(ctx, {"decision": "skip"})
        assert done.values["status"] == "done"
        assert done.values["report"]["steps_done"] == len(PLAN.steps) - 1  # the skipped shake
        assert shakes(second) == [f"run-1/{SHAKE_1}/shake", f"run-1/{PLAN.steps[14].id}/shake"]
        for plate in ("plate_1", "plate_2"):
            assert [second.volume(plate, w) for w in WELLS] == [100.0] * 3
        assert second.world.location_of("plate_1") == HOMES["plate_1"]
        assert second.world.location_of("plate_2") == "reader1:drawer"
        assert second.world.incidents() == []
        no_action_twice(second)
