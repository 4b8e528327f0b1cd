"""Replanning the rest of a run from the observed state, on a person's word.

``replan`` (side effects: reads the instruments, asks the planner, simulates) turns the
failed step's remainder and the steps after it into a new remainder with the same planner
(its ``replan`` hook) and the same simulation; ``approve_replan`` (pure: an ``interrupt``)
shows a person the new remainder and how it differs from the old one. Approved, the plan
becomes: the steps done, the failed step narrowed to what it really did, the new steps (new
ids, so no action id is ever reused), and the run continues with the first new one.
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.runtime import Runtime
from langgraph.types import Command, interrupt

from agents.device.agent import Observation
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


def _again(state: TaskState, reason: str) -> Command[Any]:
    escalation = dict(state.get("escalation") or {})
    escalation["reason"] = f"{reason} (was: {escalation.get('reason')})"
    return Command(goto="escalate", update={"escalation": escalation})


async def replan(
    state: TaskState, runtime: Runtime[TaskContext]
) -> Command[Literal["approve_replan", "escalate"]]:
    """Plan the remaining steps again from what the instruments report now."""
    ctx = runtime.context
    plan = ctx.records.plan(str(state["plan_ref"]))
    index = state["step"]
    step = plan.steps[index]
    obs = Observation.model_validate((state.get("escalation") or {}).get("observation") or {})
    rest = _rest(step, obs)
    if rest is None:
        return _again(state, "replanning needs to know what is left, and that is in doubt")
    old = [step.model_copy(update={"args": rest}), *plan.steps[index + 1 :]]
    if getattr(ctx.planner, "replan", None) is None:
        return _again(state, "this planner cannot replan")
    states, tools = await _lab_states(ctx)
    errors = [str((state.get("escalation") or {}).get("question") or "")]
    previous = Plan(request=plan.request, summary="the rest of the run", steps=old)
    result = await _ask(
        ctx.planner, "replan", state["request"], build_lab_view(states, tools), previous, errors
    )
    if not isinstance(result, Plan):
        why = getattr(result, "reason", None) or getattr(result, "question", "")
        return _again(state, f"no new plan for the rest: {why}")
    tag = f"r{int(state.get('replans', 0)) + 1}"
    new = [s.model_copy(update={"id": f"{s.id.split('-r')[0]}-{tag}"}) for s in result.steps]
    report = await simulate_plan(
        Plan(request=plan.request, summary=result.summary, steps=new),
        ctx.agents,
        states,
        ctx.policies,
    )
    if not report.ok:
        return _again(state, f"the new plan for the rest does not simulate: {report.error}")
    ctx.tell("replanned", step=step.id, steps=len(new))
    whole = plan.model_copy(
        update={
            "steps": [*plan.steps[:index], narrowed(step, obs.served), *new],
            "summary": f"{plan.summary}; {result.summary}",
        }
    )
    proposal = {
        "plan_ref": ctx.records.put_plan(whole),
        "summary": result.summary,
        "steps": [s.model_dump(mode="json") for s in new],
        "narrowed": narrowed(step, obs.served).model_dump(mode="json"),
        "difference": _difference(old, new),
        "simulation": {
            k: v for k, v in report.model_dump(mode="json").items() if k != "predictions"
        },
    }
    return Command(goto="approve_replan", update={"proposal": proposal})


def approve_replan(
    state: TaskState, runtime: Runtime[TaskContext]
) -> Command[Literal["dispatch", "escalate"]]:
    """A person approves the new remainder. Pure (the whole new plan was stored by
    ``replan``; this only reads it): on resume this re-runs with the answer."""
    proposal = dict(state.get("proposal") or {})
    whole = runtime.context.records.plan(str(proposal["plan_ref"]))
    index = state["step"]
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
    return Command(
        goto="dispatch",
        update={
            "plan_ref": proposal["plan_ref"],
            "step": index + 1,
            "attempt": 1,
            "failures": 0,
            "resume": None,
            "escalation": None,
            "proposal": None,
            "replans": int(state.get("replans", 0)) + 1,
        },
    )
