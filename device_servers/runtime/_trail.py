"""The server's audit trail: who asked for what, who approved it, what ran, every e-stop.

Whatever client sends an action (the task agent, a person's script, any MCP client), the
server that executes it writes the audit row, so the trail holds every executed action, not
only those a Labwright agent sent. Rows of an action in a device run carry that run's id;
the others the instrument's id (``labwright audit lh1``). The caller is who the MCP session
says it is (``client:<name>`` over stdio, ``client:<name>@http`` with the server's token);
approval decisions name the person who made them.

An executed action's row holds the state after it by reference: ``{"ledger_state":
"sha256:<hex>"}``, the hash of the state's JSON (sorted keys, no spaces, ASCII). The instrument
ledger's recorded answer for that action id holds the state whole, and a finished answer is
never changed or deleted. The chain covers the hash, so a ledger state edited afterwards no
longer matches its audit row. A whole copy here was 2.4 kB of every step's database growth.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
from typing import Any

from device_servers.errors import Code, GateRefused
from device_servers.runtime._status import Status
from state_store import ApprovalConflict, ApprovalRecord, LedgerEntry

# Who the current request came from; set by the server for each tool call.
CALLER: contextvars.ContextVar[str] = contextvars.ContextVar("caller", default="client:unknown")


def caller() -> str:
    return CALLER.get()


def twin_hash(status: Status) -> str:
    text = json.dumps(status.twin.snapshot(full=True), sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def approval_state(status: Status, command: str) -> dict[str, Any]:
    """The state an approval of ``command`` is bound to: the rules in force, and for a reset
    the e-stop it would clear, for a confirmation the twin a person confirms."""
    state: dict[str, Any] = {"policy": status.policy_hash}
    if command == "reset_estop":
        state["estop_latch"] = status.estop_latch
    elif command == "confirm_state":
        state["twin"] = twin_hash(status)
    return state


def ask(
    status: Status,
    command: str,
    action_id: str,
    args: dict[str, Any],
    digest: str,
    reason: str,
    rule: str | None,
) -> ApprovalRecord:
    """The approval record this call is bound to; refuses unless a person granted it."""
    try:
        record = status.approvals.request(
            status.id, action_id, command, args, digest, approval_state(status, command),
            reason=reason, rule=rule, requested_by=caller(),
        )  # fmt: skip
    except ApprovalConflict as exc:
        raise GateRefused(
            Code.ACTION_ID_REUSED, str(exc), "derive a new action_id for a new action"
        ) from exc
    if record.status == "granted":
        return record
    if record.status == "refused":
        raise GateRefused(
            Code.POLICY_DENIED,
            f"{record.decided_by} refused {command} {action_id}"
            + (f": {record.note}" if record.note else ""),
            "a new action needs a new action_id and a person's approval",
            extra={"rule": rule, "refused_by": record.decided_by},
        )
    if record.status == "used":
        raise GateRefused(
            Code.ACTION_ID_REUSED,
            f"the approval of {action_id} was used (approvals are single-use)",
            "derive a new action_id and ask a person again",
        )
    raise GateRefused(
        Code.APPROVAL_REQUIRED,
        reason,
        f"a person approves with `labwright approve-action {status.id} {action_id}` "
        f"(shown whole by `labwright approvals`), then call again with the same action_id "
        "and arguments",
        extra={
            "rule": rule,
            "approval": {"attempt": record.attempt, "args_hash": record.args_hash,
                         "state": record.state},
        },
    )  # fmt: skip


def use(status: Status, record: ApprovalRecord) -> ApprovalRecord:
    """The approved action acts now: its approval is used up."""
    return status.approvals.use(record, caller())


def action(
    status: Status, action_id: str, outcome: dict[str, Any], approved_by: str | None
) -> None:
    """An executed action (done, failed or in doubt), whatever client sent it."""
    entry = status.ledger.get(action_id)
    if entry is None:
        return
    error = outcome.get("error") if outcome.get("ok") is False else None
    status.audit.append(
        run_id=entry.run_id or status.id,
        agent=caller(),
        tool=entry.command,
        args={"action_id": action_id, **status.ledger.args_of(action_id)},
        state_after=state_ref(entry, outcome.get("state")),
        decision_note=f"approved by {approved_by}" if approved_by else "",
        result={"ok": outcome.get("ok"), "error": error, "status": entry.status},
    )


def state_ref(entry: LedgerEntry, state: Any) -> Any:
    """The state after an action as the audit row keeps it: the hash of the ledger's recorded
    state, or the state whole if the ledger does not hold it."""
    recorded = (entry.result or {}).get("state")
    if state is None or recorded is None:
        return state
    text = json.dumps(recorded, sort_keys=True, separators=(",", ":"))  # ASCII: never fails
    return {"ledger_state": "sha256:" + hashlib.sha256(text.encode()).hexdigest()}


def control(status: Status, tool: str, args: dict[str, Any], result: dict[str, Any]) -> None:
    """An e-stop, its reset, a confirmation: changes of what may move."""
    status.audit.append(run_id=status.id, agent=caller(), tool=tool, args=args, result=result)
