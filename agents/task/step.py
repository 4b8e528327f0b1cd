"""One step of a run, as one parallel branch: wait for its dependencies, dispatch, check.

A branch (``Send("step", StepTask)`` from :func:`agents.task.lanes.dispatch`) hands its step to
the device agent of its instrument (at most once per action id), records the observation in
its instrument's lane of the run's records, compares it with what the plan expected and ends
with its outcome: done (its instrument's lane moves past it), or an entry saying what a
person must decide. Only the pipe failing is asked again, with the same action id. The branch
holds no ``interrupt()``: the question is asked by ``escalate`` once every branch has ended.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

from langgraph.runtime import Runtime
from langgraph.types import Command

from agents.device.agent import Observation
from agents.task import check as checks
from agents.task import recover
from agents.task.lanes import Wave, lane_index
from agents.task.planning.models import PlanStep
from agents.task.state import TaskContext

# A step whose device agent could not reach its instrument is asked again (same action ids)
# this many times in a row before a person is asked.
MAX_FAILURES = 2


class StepTask(TypedDict, total=False):
    """What one branch is sent: its step, the window it belongs to, what it waits for."""

    run_id: str
    plan_ref: str
    index: int  # the step's position in the plan
    wave: int
    waits: list[str]  # steps of the same window it depends on
    entry: dict[str, Any]  # the step's entry (attempt, resume, ...), empty when fresh
    seq: int  # its lane's observation cursor when the window was sent
    total: int


async def step(task: StepTask, runtime: Runtime[TaskContext]) -> Command[Literal["dispatch"]]:
    """Run one step as soon as what it depends on is done; its outcome as the branch's writes."""
    ctx = runtime.context
    plan = ctx.records.plan(task["plan_ref"])
    step = plan.steps[task["index"]]
    wave: Wave | None = ctx.waves.get((task["run_id"], task["wave"]))
    ok = False
    try:
        if task.get("waits") and (wave is None or not await wave.ready(task["waits"])):
            # Held (a step needs a person), or run again after a crash without the window's
            # live state: not dispatched; the next window sends it again.
            return Command(goto="dispatch")
        update = await _carry_out(task, ctx, step, wave)
        ok = update["steps"][step.id] is None
        return Command(goto="dispatch", update=update)
    finally:
        if wave is not None:
            await wave.ended(step.id, ok)


async def _carry_out(
    task: StepTask, ctx: TaskContext, step: PlanStep, wave: Wave | None
) -> dict[str, Any]:
    entry = dict(task.get("entry") or {})
    attempt = int(entry.get("attempt", 1))
    failures = int(entry.get("failures", 0))
    lane = step.instrument
    seq = wave.seq.get(lane, 0) if wave is not None else int(task.get("seq", 0))
    while True:
        ctx.tell(
            "dispatch",
            step=step.id,
            index=task["index"],
            total=task.get("total", 0),
            instrument=step.instrument,
            command=step.command,
            attempt=attempt,
        )
        obs = await _dispatch(ctx, step, task["run_id"], attempt, entry.get("resume"))
        # Recorded before the branch's writes move the lane's cursor past it: a branch run
        # again after a crash asks the same action id and records at the same place.
        ctx.records.record(task["run_id"], seq, obs, lane)
        seq += 1
        if wave is not None:
            wave.seq[lane] = seq
        if obs.transport_error and failures + 1 < MAX_FAILURES:
            failures += 1  # only the pipe failed: ask again with the SAME action id
            continue
        break
    update: dict[str, Any] = {"observed": {lane: seq}}
    verdict = _check(step, obs, failures)
    update["deviations"] = verdict.pop("deviations")
    if verdict.get("escalation") is None:
        update["steps"] = {step.id: None}
        update["lanes"] = {lane: lane_index(ctx.records, task["plan_ref"])[step.id][1] + 1}
    else:
        entry.update(verdict, status="escalated", attempt=attempt)
        update["steps"] = {step.id: entry}
    ctx.tell("ended", step=step.id, instrument=step.instrument, ok=verdict["escalation"] is None)
    return update


async def _dispatch(
    ctx: TaskContext, step: PlanStep, run_id: str, attempt: int, resume: dict[str, Any] | None
) -> Observation:
    """Hand the step to its instrument's device agent (at most once per action id)."""
    stopped = await recover.stopped_for(step, ctx.agents)
    if stopped:
        # An e-stopped instrument is never reached into: the arm does not move a plate to or
        # from it until a person has reset it.
        return Observation(
            step_id=step.id,
            instrument=step.instrument,
            command=step.command,
            action_id="",
            ok=False,
            error={
                "code": "ESTOP_ACTIVE",
                "detail": f"{', '.join(stopped)} is e-stopped: no plate is moved to or from it",
                "defined": False,
                "source": "task_agent",
            },
            resume={"mode": "again", "args": dict(step.args)},
        )
    obs = await ctx.agents[step.instrument].execute(step, run_id, attempt, resume=resume)
    if obs.ok and step.command == "move_plate":
        await _after_move(ctx, step, obs)
    return obs


async def _after_move(ctx: TaskContext, step: PlanStep, obs: Observation) -> None:
    """Instruments a plate left or reached learn it by reading back (their twins). They are
    idle meanwhile: a plate move reaches into them (see :mod:`agents.task.timeline`)."""
    places = {str(step.args.get("to_location", ""))}
    places.update(str(e["data"].get("from", "")) for e in obs.events if e["type"] == "plate_moved")
    for owner in {p.split(":", 1)[0] for p in places if p}:
        if owner in ctx.agents and owner != step.instrument:
            await ctx.agents[owner].read_back()


def _check(step: PlanStep, obs: Observation, failures: int) -> dict[str, Any]:
    """Compare the observation with the plan: ``escalation`` None when the step is done."""
    if obs.transport_error:
        reason = "the instrument could not be reached twice"
        return _escalation(step, obs, reason, failures + 1)
    if obs.ok:
        wrong = checks.mismatches(step, obs) + [{"step": step.id, **d} for d in obs.deviations]
        if wrong:
            reason = "the instrument reports something the plan did not expect"
            return {**_escalation(step, obs, reason, failures), "deviations": wrong}
        return {"escalation": None, "deviations": []}
    # The device agent has read its instrument back and recovered what its rules allow.
    kind, reason = recover.failure_reason(step, obs)
    found = [{"step": step.id, **d} for d in obs.deviations]
    return {**_escalation(step, obs, reason, failures + 1, kind), "deviations": found}


def _escalation(
    step: PlanStep, obs: Observation, reason: str, failures: int, kind: str = "deviation"
) -> dict[str, Any]:
    return {
        "failures": failures,
        "deviations": [],
        "escalation": {
            "kind": kind,
            "step": step.id,
            "reason": reason,
            **recover.question(step, obs, reason),
            "observation": obs.model_dump(mode="json"),
        },
    }
