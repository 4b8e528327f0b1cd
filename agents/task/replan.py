"""Replanning the rest of a run from the observed state, on a person's word.

``replan`` (side effects: reads the instruments, asks the planner, simulates) turns every
unfinished step -- what is left of each step a person was asked about, the others whole --
into a new remainder with the same planner (its ``replan`` hook) and the same simulation;
``approve_replan`` (pure: an ``interrupt``) shows a person the new remainder and how it differs
from the old one. Approved, the plan becomes: the steps finished, the failed steps narrowed to
what they really did, the new steps (new ids, so no action id is ever reused), ordered by the
new remainder's own timeline; the run continues with them.
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.runtime import Runtime
from langgraph.types import Command, interrupt

from agents.device.agent import Observation
from agents.task import lanes
from agents.task.lab_view import build_lab_view
from agents.task.nodes import _ask, _lab_states
from agents.task.planning.models import Plan, PlanStep
from agents.task.simulate import simulate_plan
from agents.task.state import TaskContext, TaskState


def _rest(step: PlanStep, obs: Observation) -> dict[str, Any] | None:
    """The failed step's arguments for what is left; None when that is unknown (in doubt)."""
    resume = obs.resume or {}
    if resume.get("mode") in ("remainder", "again"):
        return dict(resume.get("args") or step.args)
    remainder = (obs.operations or {}).get("remainder")
    if resume.get("mode") == "complete" and (obs.operations or {}).get("resolved"):
        return None if remainder is None else dict(remainder)
    return None


def narrowed(step: PlanStep, served: list[str]) -> PlanStep:
    """The step as it really happened: a transfer to the destinations it served."""
    args = dict(step.args)
    if step.command == "transfer":
        dest = str(args.get("destination"))
        args["destination_wells"] = [
            w for w in args.get("destination_wells", []) if f"{dest}:{w}" in served
        ]
        args.pop("first_done", None)
    note = f"partly done, the rest replanned: served {', '.join(served) or 'nothing'}"
    return step.model_copy(update={"args": args, "expect": {}, "note": note})


def _difference(old: list[PlanStep], new: list[PlanStep]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for before, after in zip(old, new, strict=False):
        changed = {
            k: {"was": before.args.get(k), "now": after.args.get(k)}
            for k in sorted(set(before.args) | set(after.args))
            if before.args.get(k) != after.args.get(k)
        }
        if changed or before.command != after.command:
            out.append({"step": after.id, "was_step": before.id, "changed": changed})
    out += [{"step": s.id, "added": True} for s in new[len(old) :]]
    out += [{"step": s.id, "removed": True} for s in old[len(new) :]]
    return out


def _again(state: TaskState, ctx: TaskContext, reason: str) -> Command[Any]:
    """Ask the person again about the step they answered, saying why replanning failed."""
    step_id = lanes.escalated(state, ctx.records.plan(str(state["plan_ref"])))[0]
    entry = dict((state.get("steps") or {})[step_id])
    escalation = dict(entry.get("escalation") or {})
    escalation["reason"] = f"{reason} (was: {escalation.get('reason')})"
    entry["escalation"] = escalation
    return Command(goto="escalate", update={"steps": {step_id: entry}})


def _remaining(
    state: TaskState, ctx: TaskContext
) -> tuple[list[PlanStep], list[PlanStep], list[PlanStep], str | None]:
    """(finished, narrowed, the rest as it stands) of the plan; the step whose rest is
    unknown (in doubt), if any. Every unfinished step is in the rest: a step a person was
    asked about with only what is left of it, the others whole."""
    plan = ctx.records.plan(str(state["plan_ref"]))
    entries = state.get("steps") or {}
    todo = set(lanes.unfinished(state, ctx))
    finished = [s for i, s in enumerate(plan.steps) if i not in todo]
    narrow: list[PlanStep] = []
    old: list[PlanStep] = []
    for i in sorted(todo):
        step = plan.steps[i]
        seen = ((entries.get(step.id) or {}).get("escalation") or {}).get("observation")
        if not seen:
            old.append(step)
            continue
        obs = Observation.model_validate(seen)
        rest = _rest(step, obs)
        if rest is None:
            return finished, narrow, old, step.id
        narrow.append(narrowed(step, obs.served))
        old.append(step.model_copy(update={"args": rest}))
    return finished, narrow, old, None


async def replan(
    state: TaskState, runtime: Runtime[TaskContext]
) -> Command[Literal["approve_replan", "escalate"]]:
    """Plan every unfinished step again from what the instruments report now."""
    ctx = runtime.context
    plan = ctx.records.plan(str(state["plan_ref"]))
    finished, narrow, old, unknown = _remaining(state, ctx)
    if unknown is not None:
        doubt = f"replanning needs to know what is left of {unknown}, and that is in doubt"
        return _again(state, ctx, doubt)
    if getattr(ctx.planner, "replan", None) is None:
        return _again(state, ctx, "this planner cannot replan")
    states, tools = await _lab_states(ctx)
    errors = [
        str((e.get("escalation") or {}).get("question") or "")
        for e in (state.get("steps") or {}).values()
        if e.get("status") == "escalated"
    ]
    previous = Plan(request=plan.request, summary="the rest of the run", steps=old)
    result = await _ask(
        ctx.planner, "replan", state["request"], build_lab_view(states, tools), previous, errors
    )
    if not isinstance(result, Plan):
        why = getattr(result, "reason", None) or getattr(result, "question", "")
        return _again(state, ctx, f"no new plan for the rest: {why}")
    tag = f"r{int(state.get('replans', 0)) + 1}"
    new = [s.model_copy(update={"id": f"{s.id.split('-r')[0]}-{tag}"}) for s in result.steps]
    report = await simulate_plan(
        Plan(request=plan.request, summary=result.summary, steps=new),
        ctx.agents,
        states,
        ctx.policies,
        sequential=bool(state.get("sequential", False)),
        window=ctx.window,
    )
    if not report.ok:
        return _again(state, ctx, f"the new plan for the rest does not simulate: {report.error}")
    ctx.tell("replanned", steps=len(new), narrowed=[s.id for s in narrow])
    # Finished steps first, then the steps narrowed to what they did: each instrument's
    # finished steps stay a prefix of its steps, the new ones follow.
    whole = plan.model_copy(
        update={
            "steps": [*finished, *narrow, *new],
            "summary": f"{plan.summary}; {result.summary}",
        }
    )
    summary = {k: v for k, v in report.model_dump(mode="json").items() if k != "predictions"}
    proposal = {
        "plan_ref": ctx.records.put_plan(whole),
        "schedule_ref": ctx.records.put("simulation", report.model_dump(mode="json")),
        "summary": result.summary,
        "steps": [s.model_dump(mode="json") for s in new],
        "narrowed": [s.model_dump(mode="json") for s in narrow],
        "difference": _difference(old, new),
        "simulation": summary,
    }
    return Command(goto="approve_replan", update={"proposal": proposal})


def approve_replan(
    state: TaskState, runtime: Runtime[TaskContext]
) -> Command[Literal["dispatch", "escalate"]]:
    """A person approves the new remainder. Pure (the whole new plan was stored by
    ``replan``; this only reads it): on resume this re-runs with the answer."""
    proposal = dict(state.get("proposal") or {})
    records = runtime.context.records
    whole = records.plan(str(proposal["plan_ref"]))
    answer = interrupt(
        {
            "kind": "approval",
            "replan": True,
            "request": state["request"],
            "plan": whole.model_dump(mode="json"),
            "difference": proposal["difference"],
            "simulation": proposal["simulation"],
            "needs_extra_approval": proposal["simulation"].get("needs_approval", []),
            "plan_ref": proposal["plan_ref"],
        }
    )
    if (answer or {}).get("decision") != "approve":
        return Command(goto="escalate", update={"proposal": None})
    new_ids = {s["id"] for s in proposal["steps"]}
    # Per instrument: its steps before the new ones have finished (done, or narrowed to
    # what they did).
    counts: dict[str, int] = {}
    for step in whole.steps:
        if step.id not in new_ids:
            counts[step.instrument] = counts.get(step.instrument, 0) + 1
    return Command(
        goto="dispatch",
        update={
            "plan_ref": proposal["plan_ref"],
            "schedule_ref": proposal["schedule_ref"],
            "lanes": counts,
            "steps": {k: None for k in state.get("steps") or {}},
            "proposal": None,
            "replans": int(state.get("replans", 0)) + 1,
        },
    )
