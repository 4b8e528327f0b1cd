"""Steps on different instruments at the same time, as LangGraph's own parallel branches.

``dispatch`` sends the next window of unfinished steps (at most :data:`timeline.WINDOW`, in
plan order) as branches of one superstep, ``Send("step", ...)`` each: a branch waits until
the steps it depends on (the simulation's timeline, :mod:`agents.task.timeline`) have ended in
the same superstep, then dispatches its step to its instrument's device agent, checks what
came back and records its outcome (:mod:`agents.task.step`). Each instrument does one step at
a time, in plan order; steps on different instruments whose dependencies are done run
together. When every branch has ended, ``dispatch`` runs again with their results merged (per
instrument, how many of its steps finished; per step, what a person must answer).

A step that needs a person holds the run: steps already under way finish and are checked, no
new step starts, and the person is asked (``escalate``), one question at a time; the answers
continue the run. An e-stop is such a step: the run stops there, other instruments' steps
under way end as their own instruments decide (their e-stops were not pressed).

A crash mid-superstep: LangGraph keeps the writes of every branch that had ended (``durability
="sync"`` writes each as it ends) and runs the others again. A branch run again after a crash
finds no :class:`Wave` of its superstep in this process: it dispatches only when everything it
depends on had finished before the superstep began (a step in flight at the crash asks its
action id again: the server answers with the recorded outcome or completes what is in doubt),
and otherwise ends without dispatching, for the next superstep to send again. No action is
repeated or lost: action ids are deterministic per (run, step, attempt).
"""

from __future__ import annotations

import asyncio
import functools
from typing import Literal

from langgraph.runtime import Runtime
from langgraph.types import Command, Send

from agents.task.planning.models import Plan
from agents.task.records import RunRecords
from agents.task.state import TaskContext, TaskState


class Wave:
    """One superstep's branches in this process: which have ended, and whether the run is held.

    ``seq`` is each lane's next observation position (an instrument's steps run one at a
    time, so a lane's counter is advanced by one branch at a time).
    """

    def __init__(self, observed: dict[str, int]) -> None:
        self.ok: set[str] = set()
        self.held = False
        self.seq = dict(observed)
        self._changed = asyncio.Condition()

    async def ready(self, waits: list[str]) -> bool:
        """Wait until every step of ``waits`` has ended done (True) or the run is held."""
        async with self._changed:
            await self._changed.wait_for(lambda: self.held or set(waits) <= self.ok)
            return not self.held

    async def ended(self, step_id: str, ok: bool) -> None:
        """A branch ended: done (its dependents may start) or not (the run is held)."""
        async with self._changed:
            if ok:
                self.ok.add(step_id)
            else:
                self.held = True
            self._changed.notify_all()


@functools.lru_cache(maxsize=8)
def lane_index(records: RunRecords, plan_ref: str) -> dict[str, tuple[str, int]]:
    """Step id -> (instrument, its position among that instrument's steps), for a plan stored
    under ``plan_ref`` (plans by hash never change)."""
    plan = records.plan(plan_ref)
    seen: dict[str, int] = {}
    out: dict[str, tuple[str, int]] = {}
    for step in plan.steps:
        out[step.id] = (step.instrument, seen.get(step.instrument, 0))
        seen[step.instrument] = out[step.id][1] + 1
    return out


def unfinished(state: TaskState, ctx: TaskContext) -> list[int]:
    """Plan indices of the steps not finished yet, in plan order."""
    lanes = state.get("lanes") or {}
    plan = ctx.records.plan(str(state["plan_ref"]))
    where = lane_index(ctx.records, str(state["plan_ref"]))
    return [i for i, s in enumerate(plan.steps) if where[s.id][1] >= lanes.get(where[s.id][0], 0)]


@functools.lru_cache(maxsize=8)
def _timeline_after(records: RunRecords, schedule_ref: str | None) -> dict[str, list[str]]:
    """Step id -> the steps it waits for, from the timeline of the report stored under
    ``schedule_ref`` (reports by hash never change)."""
    timeline = records.part(schedule_ref, "timeline", "steps") or []
    return {s["step"]: list(s["after"]) for s in timeline}


def depends_on(
    state: TaskState, ctx: TaskContext, plan: Plan, indices: list[int]
) -> dict[str, list[str]]:
    """Step id -> the steps it waits for, for the steps at ``indices`` of the plan: the
    timeline's dependencies, or the step before it when the run is sequential (or the
    timeline does not know the step)."""
    known = (
        {} if state.get("sequential") else _timeline_after(ctx.records, state.get("schedule_ref"))
    )
    out: dict[str, list[str]] = {}
    for i in indices:
        step = plan.steps[i]
        before = [plan.steps[i - 1].id] if i else []
        out[step.id] = known.get(step.id, before)
    return out


def escalated(state: TaskState, plan: Plan) -> list[str]:
    """Steps waiting for a person, in plan order."""
    entries = state.get("steps") or {}
    return [s.id for s in plan.steps if (entries.get(s.id) or {}).get("status") == "escalated"]


async def dispatch(
    state: TaskState, runtime: Runtime[TaskContext]
) -> Command[Literal["step", "escalate", "report"]]:
    """Send the next window of unfinished steps as parallel branches; a person first when a
    step waits for one; the report when every step has finished."""
    ctx = runtime.context
    plan = ctx.records.plan(str(state["plan_ref"]))
    if escalated(state, plan):
        return Command(goto="escalate")
    todo = unfinished(state, ctx)
    if not todo:
        return Command(goto="report", update={"status": "done", "step": len(plan.steps)})
    window = todo[: max(1, ctx.window)]
    sent = {plan.steps[i].id for i in window}
    after = depends_on(state, ctx, plan, window)
    number = int(state.get("wave", 0)) + 1
    run_id = state["run_id"]
    for key in [k for k in ctx.waves if k[0] == run_id]:
        del ctx.waves[key]
    ctx.waves[(run_id, number)] = Wave(state.get("observed") or {})
    entries = state.get("steps") or {}
    observed = state.get("observed") or {}
    branches = []
    for i in window:
        step = plan.steps[i]
        # Dependencies outside the window finished already: the window is the first
        # unfinished steps in plan order, and a step depends only on earlier ones.
        waits = [d for d in after.get(step.id, []) if d in sent]
        branches.append(
            Send(
                "step",
                {
                    "run_id": run_id,
                    "plan_ref": state["plan_ref"],
                    "index": i,
                    "wave": number,
                    "waits": waits,
                    "entry": entries.get(step.id) or {},
                    "seq": int(observed.get(step.instrument, 0)),
                    "total": len(plan.steps),
                },
            )
        )
    return Command(goto=branches, update={"wave": number, "step": todo[0]})
