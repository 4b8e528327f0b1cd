"""What a person approves, and the check that it still holds when execution starts.

The *basis* of an approval is four content hashes taken when the plan is shown: the plan, the
simulation report, the policy rules in force on every instrument and every instrument's twin
state. A person's approval is a signed record over that basis (``state_store.signoff``).
Before the first step is dispatched, :func:`confirm` recomputes the basis from the
instruments as they are now: when any hash differs, or the record is not validly signed, the
approval is void, the run plans and simulates again from the current state and asks again.

The approval question follows the Agent Inbox interrupt shape (``action_request``,
``config``, ``description``) besides Labwright's own fields, and :func:`decision_of` reads an
Agent Inbox response (``accept`` / ``ignore`` / ``response`` / ``edit``) as a decision.
"""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from langgraph.config import get_config
from langgraph.runtime import Runtime
from langgraph.types import Command

from agents.task.state import TaskContext, TaskState
from policies import PolicyEngine
from state_store.signoff import BASIS_KEYS, content_hash

# Parts of a twin snapshot that say how sure the twin is or what the instrument is busy with,
# not what it holds: a restarted server's twin is stale until read back, a reader's plate is
# "known" once read. A new key of this sort that is not listed here voids approvals after a
# restart (the safe direction: the run asks again).
_TRANSIENT = frozenset({"busy_with_run", "stale", "plate_known"})


def policy_hash(policies: dict[str, PolicyEngine]) -> str:
    return content_hash(
        {i: [r.model_dump(mode="json") for r in e.rules] for i, e in sorted(policies.items())}
    )


def _held(state: dict[str, Any]) -> dict[str, Any]:
    """What a twin holds: the snapshot without the transient keys (also among its station
    ``facts``, which repeat some of them)."""
    held = {k: v for k, v in state.items() if k not in _TRANSIENT}
    if isinstance(held.get("facts"), dict):
        held["facts"] = {k: v for k, v in held["facts"].items() if k not in _TRANSIENT}
    return held


def twins_hash(states: dict[str, dict[str, Any]]) -> str:
    return content_hash({i: _held(s) for i, s in sorted(states.items())})


def basis(
    plan_ref: str,
    simulation_ref: str,
    policies: dict[str, PolicyEngine],
    states: dict[str, dict[str, Any]],
) -> dict[str, str]:
    """The four hashes an approval is bound to (the plan's and the simulation's are their
    references in the run records: ``sha256:`` of their content)."""
    return {
        "plan": plan_ref,
        "simulation": simulation_ref,
        "policy": policy_hash(policies),
        "twins": twins_hash(states),
    }


def changed(shown: dict[str, Any], now: dict[str, str]) -> list[str]:
    """Which parts of the basis differ (all of them when ``shown`` is not a basis)."""
    if not isinstance(shown, dict):
        return list(BASIS_KEYS)
    return [k for k in BASIS_KEYS if shown.get(k) != now.get(k)]


# --------------------------------------------------------------------------- Agent Inbox
def inbox_fields(
    action: str, args: dict[str, Any], description: str, *, edit: bool, respond: bool
) -> dict[str, Any]:
    """The Agent Inbox part of an interrupt payload."""
    return {
        "action_request": {"action": action, "args": args},
        "config": {
            "allow_accept": True,
            "allow_ignore": True,
            "allow_edit": edit,
            "allow_respond": respond,
        },
        "description": description,
    }


def describe_plan(state: TaskState, plan: dict[str, Any], sim: dict[str, Any]) -> str:
    """Markdown for an inbox: the request, the plan's summary and steps, what needs a person."""
    lines = [f"**Request:** {state.get('request', '')}", "", f"**Plan:** {plan.get('summary')}"]
    lines += [
        f"{i}. `{s['instrument']}` {s['command']}" for i, s in enumerate(plan.get("steps", []), 1)
    ]
    lines.append(
        f"\nSimulated: {sim.get('transfers', 0)} transfers, {sim.get('tips_used', 0)} tips, "
        f"about {float(sim.get('duration_s') or 0) / 60:.1f} min."
    )
    line = sim.get("timeline") or {}
    if line:
        how = "one step after another" if line.get("sequential") else "steps at the same time"
        lines.append(
            f"Timeline ({how}): about {float(line['makespan_s']) / 60:.1f} min, critical path "
            f"{float(line['critical_path_s']) / 60:.1f} min, one after another "
            f"{float(line['sequential_s']) / 60:.1f} min."
        )
    for item in sim.get("needs_approval", []):
        lines.append(f"- needs a person again at {item['instrument']}: {item['reason']}")
    voided = state.get("voided")
    if voided:
        lines.append(f"\nAsked again: {voided.get('reason')}")
    lines.append("\nAccept to approve, ignore to reject, respond or edit to change the request.")
    return "\n".join(lines)


def decision_of(answer: Any) -> dict[str, Any]:
    """A person's answer as Labwright's decision dict (an Agent Inbox response included)."""
    if isinstance(answer, list) and answer:
        answer = answer[0]
    if not isinstance(answer, dict):
        return {"decision": None}
    kind = answer.get("type")
    if kind is None or "decision" in answer:
        return dict(answer)
    args = answer.get("args")
    inbox: dict[str, Any] = {"inbox": kind}
    if kind == "accept":
        shown = args.get("args", args) if isinstance(args, dict) else None
        basis = shown.get("basis") if isinstance(shown, dict) else None
        return {**inbox, "decision": "approve", "basis": basis}
    if kind == "ignore":
        return {**inbox, "decision": "reject", "reason": "ignored in the inbox"}
    if kind == "response":
        return {**inbox, "decision": "edit", "text": str(args or "")}
    if kind == "edit" and isinstance(args, dict):
        inner = args.get("args")
        edited: dict[str, Any] = inner if isinstance(inner, dict) else args
        return {**inbox, "decision": "edit", "text": str(edited.get("request") or "")}
    return {**inbox, "decision": None}


def _server_person(config: RunnableConfig | None) -> tuple[str, str] | None:
    """The person LangGraph's server authenticated for this run (its auth handler), if any."""
    user = ((config or {}).get("configurable") or {}).get("langgraph_auth_user")
    if user is None:
        return None
    get = user.get if isinstance(user, dict) else lambda k, d=None: getattr(user, k, d)
    permissions = list(get("permissions", []) or [])
    name = get("identity", None)
    if not name or "approve" not in permissions:
        return None
    return str(name), "approver"


# --------------------------------------------------------------------------- the node
async def confirm(
    state: TaskState, runtime: Runtime[TaskContext]
) -> Command[Literal["dispatch", "interpret"]]:
    """Start execution only on a valid approval of what is about to happen; else plan,
    simulate and ask again from the lab as it is now."""
    ctx = runtime.context
    run_id = state["run_id"]
    approval = dict(state.get("approval") or {})
    record = approval.get("record")
    if record is None and ctx.signer is not None:
        # An approval through LangGraph's own server: the server authenticated the person.
        who = _server_person(get_config())
        shown = approval.get("basis")
        if who is not None and isinstance(shown, dict):
            record = ctx.signer.sign(
                run_id=run_id, person=who[0], role=who[1], via="langgraph", basis=shown
            )
    states = await _fresh_states(ctx, run_id)
    now = basis(str(state.get("plan_ref")), str(state.get("simulation_ref")), ctx.policies, states)
    if ctx.signer is None or record is None or not ctx.signer.valid(record, run_id):
        why, what = "the approval is not signed by an authenticated person", ["signature"]
    else:
        what = changed(record["basis"], now)
        why = f"changed since it was shown: {', '.join(what)}" if what else ""
    if what:
        _audit(ctx, run_id, "approval_void", record, why, now)
        ctx.tell("approval_void", changed=what)
        voided = {"reason": why, "changed": what, "by": (record or {}).get("by")}
        # Planned again from the lab as it is now (a plan's expectations come from the state
        # it was made on), simulated again, asked again; the old plan kept for the diff.
        return Command(
            goto="interpret",
            update={
                "approval": None,
                "voided": voided,
                "replanned": False,
                "previous_plan_ref": state.get("plan_ref"),
            },
        )
    assert record is not None
    _audit(ctx, run_id, "approval_confirmed", record, f"approved by {record['by']}", now, states)
    return Command(
        goto="dispatch",
        update={
            "approval": {**approval, "record": record},
            "voided": None,
        },
    )


async def _fresh_states(ctx: TaskContext, run_id: str) -> dict[str, dict[str, Any]]:
    """Every instrument's twin as the instrument is now: a stale twin (its server restarted)
    is read back first, so the approval is compared with what is there, not with a belief."""
    states: dict[str, dict[str, Any]] = {}
    for inst, agent in ctx.agents.items():
        states[inst] = await agent.state()
        if states[inst].get("stale"):
            await agent.read_back(run_id, "check the approval against the instrument")
            states[inst] = await agent.state()
    return states


def _audit(
    ctx: TaskContext,
    run_id: str,
    tool: str,
    record: Any,
    note: str,
    now: dict[str, str],
    states: dict[str, Any] | None = None,
) -> None:
    if ctx.audit is None:
        return
    by = record.get("by") if isinstance(record, dict) else None
    ctx.audit.append(
        run_id=run_id,
        agent=f"person:{by}" if by else "task",
        tool=tool,
        args={"record": record, "basis_now": now},
        state_before=states,  # what was approved, kept with the approval (the page's "before")
        decision_note=note,
    )
