"""A person's approval of one instrument action: a record of exactly what was asked.

A device server asks (``request``) when its policy says an action needs a person; the record
holds the action id, the command, its canonical arguments and their hash, the state it was
asked in (for a reset: the e-stop latch it would clear), who asked and when, and the reason.
Then:

- it is immutable while pending: asking again under the same action id with other arguments
  is refused (:class:`ApprovalConflict`, ACTION_ID_REUSED); an action id binds one call;
- only a person grants or refuses it (``grant`` / ``refuse`` take a :class:`Person` allowed
  to approve, the same people and tokens as run approvals);
- it is single-use: ``use`` marks it used when the action acts, and it never acts again;
- it is void when its state no longer holds: asked again in another state, the old record is
  voided and a new one is pending (a reset approved for one e-stop never clears another);
- nothing is deleted: every record stays, and every step (asked, granted, refused, used,
  voided) is an audit-log row naming who.

Statuses: ``pending`` -> ``granted`` -> ``used``; ``pending`` -> ``refused``; ``pending`` or
``granted`` -> ``void``. One action id may hold several records (attempts) only when the
earlier ones are void.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from dataclasses import asdict, dataclass
from typing import Any, Literal

from state_store.audit import AuditLog
from state_store.people import Person

Status = Literal["pending", "granted", "refused", "used", "void"]
_DDL = (
    "CREATE TABLE IF NOT EXISTS instrument_approvals (instrument TEXT NOT NULL,"
    " action_id TEXT NOT NULL, attempt INTEGER NOT NULL, command TEXT NOT NULL,"
    " args TEXT NOT NULL, args_hash TEXT NOT NULL, state TEXT NOT NULL, state_hash TEXT NOT NULL,"
    " reason TEXT, rule TEXT, requested_by TEXT, requested_at REAL NOT NULL,"
    " status TEXT NOT NULL, decided_by TEXT, decided_at REAL, note TEXT, used_at REAL,"
    " PRIMARY KEY (instrument, action_id, attempt))"
)


def state_hash(state: dict[str, Any]) -> str:
    """The hash an approval's state is compared by (canonical JSON)."""
    text = json.dumps(state, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


class ApprovalError(Exception):
    """Base of this module's errors; ``code`` is a stable error code."""

    code = "INVALID_ARGUMENT"


class ApprovalConflict(ApprovalError):
    """The action id was asked for another call (other command or arguments)."""

    code = "ACTION_ID_REUSED"


class NotPending(ApprovalError):
    """Nothing pending to decide under that action id (unknown, decided, used or void)."""

    code = "NOT_WAITING"


@dataclass(frozen=True)
class ApprovalRecord:
    """One approval record, whole: what a person sees before deciding."""

    instrument: str
    action_id: str
    attempt: int
    command: str
    args: dict[str, Any]
    args_hash: str
    state: dict[str, Any]
    state_hash: str
    reason: str | None
    rule: str | None
    requested_by: str | None
    requested_at: float
    status: Status
    decided_by: str | None = None
    decided_at: float | None = None
    note: str | None = None
    used_at: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class Approvals:
    """The lab's instrument approvals (one table, created on first use), audited."""

    def __init__(self, conn: sqlite3.Connection, audit: AuditLog | None = None) -> None:
        self.conn = conn
        self.audit = audit if audit is not None else AuditLog(conn)
        conn.execute(_DDL)

    # ------------------------------------------------------------------ reading
    def current(self, instrument: str, action_id: str) -> ApprovalRecord | None:
        """The latest record under an action id."""
        row = self.conn.execute(
            "SELECT * FROM instrument_approvals WHERE instrument=? AND action_id=?"
            " ORDER BY attempt DESC LIMIT 1",
            (instrument, action_id),
        ).fetchone()
        return None if row is None else _record(row)

    def history(self, instrument: str, action_id: str) -> list[ApprovalRecord]:
        rows = self.conn.execute(
            "SELECT * FROM instrument_approvals WHERE instrument=? AND action_id=?"
            " ORDER BY attempt",
            (instrument, action_id),
        ).fetchall()
        return [_record(r) for r in rows]

    def pending(self, instrument: str | None = None) -> list[ApprovalRecord]:
        """Records waiting for a person, oldest first."""
        sql = "SELECT * FROM instrument_approvals WHERE status='pending'"
        params: tuple[Any, ...] = ()
        if instrument:
            sql += " AND instrument=?"
            params = (instrument,)
        rows = self.conn.execute(sql + " ORDER BY requested_at", params).fetchall()
        return [_record(r) for r in rows]

    # ------------------------------------------------------------------ the server's side
    def request(
        self,
        instrument: str,
        action_id: str,
        command: str,
        args: dict[str, Any],
        args_hash: str,
        state: dict[str, Any],
        *,
        reason: str | None = None,
        rule: str | None = None,
        requested_by: str | None = None,
    ) -> ApprovalRecord:
        """The record this call is bound to: the existing one, or a new pending one.

        Raises ApprovalConflict when the action id was asked for another call.
        """
        digest = state_hash(state)
        now = self.current(instrument, action_id)
        last_attempt = now.attempt if now is not None else 0
        if now is not None and (now.command, now.args_hash) != (command, args_hash):
            raise ApprovalConflict(
                f"action_id {action_id!r} was asked for another call ({now.command} with "
                f"other arguments, {now.status})"
            )
        if now is not None and now.status in ("granted", "pending") and now.state_hash != digest:
            self._void(now, "the state it was asked in no longer holds")
            now = None
        if now is not None and now.status != "void":
            return now
        attempt = last_attempt + 1
        record = ApprovalRecord(
            instrument=instrument,
            action_id=action_id,
            attempt=attempt,
            command=command,
            args=args,
            args_hash=args_hash,
            state=state,
            state_hash=digest,
            reason=reason,
            rule=rule,
            requested_by=requested_by,
            requested_at=time.time(),
            status="pending",
        )
        self.conn.execute(
            "INSERT INTO instrument_approvals (instrument, action_id, attempt, command, args,"
            " args_hash, state, state_hash, reason, rule, requested_by, requested_at, status)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                instrument, action_id, attempt, command, _dumps(args), args_hash,
                _dumps(state), digest, reason, rule, requested_by, record.requested_at, "pending",
            ),
        )  # fmt: skip
        self._audit(record, requested_by or "server", "approval_asked", reason or "")
        return record

    def use(self, record: ApprovalRecord, by: str | None = None) -> ApprovalRecord:
        """The granted action acts now: the record is used up (single use)."""
        if record.status != "granted":
            raise NotPending(f"approval {record.action_id} is {record.status}, not granted")
        used = self._set(record, "used", used_at=time.time())
        self._audit(used, by or "server", "approval_used", f"granted by {record.decided_by}")
        return used

    def void(self, record: ApprovalRecord, why: str) -> None:
        """The state the record was asked in no longer holds: it can never be used."""
        if record.status in ("pending", "granted"):
            self._void(record, why)

    # ------------------------------------------------------------------ a person's side
    def grant(
        self, instrument: str, action_id: str, person: Person, args_hash: str | None = None
    ) -> ApprovalRecord:
        """A person approves the pending record (``args_hash``: the one they were shown)."""
        return self._decide(instrument, action_id, person, "granted", args_hash, None)

    def refuse(
        self, instrument: str, action_id: str, person: Person, note: str | None = None
    ) -> ApprovalRecord:
        """A person refuses the pending record; the action never runs under that id."""
        return self._decide(instrument, action_id, person, "refused", None, note)

    # ------------------------------------------------------------------ internals
    def _decide(
        self,
        instrument: str,
        action_id: str,
        person: Person,
        status: Status,
        args_hash: str | None,
        note: str | None,
    ) -> ApprovalRecord:
        person.require("approve")
        now = self.current(instrument, action_id)
        if now is None or now.status != "pending":
            what = "nothing was asked" if now is None else f"it is {now.status}"
            raise NotPending(f"no pending approval for {instrument}/{action_id}: {what}")
        if args_hash is not None and not now.args_hash.startswith(args_hash):
            raise ApprovalConflict(
                f"{instrument}/{action_id} asks for arguments {now.args_hash[:12]}, not the "
                f"{args_hash[:12]} you were shown"
            )
        decided = self._set(now, status, decided_by=person.label, decided_at=time.time(), note=note)
        self._audit(decided, person.label, f"approval_{status}", note or "")
        return decided

    def _void(self, record: ApprovalRecord, why: str) -> None:
        voided = self._set(record, "void", note=why)
        self._audit(voided, "server", "approval_voided", why)

    def _set(self, record: ApprovalRecord, status: Status, **fields: Any) -> ApprovalRecord:
        columns = {"status": status, **fields}
        sets = ", ".join(f"{k}=?" for k in columns)
        self.conn.execute(
            f"UPDATE instrument_approvals SET {sets} WHERE instrument=? AND action_id=?"
            " AND attempt=?",
            (*columns.values(), record.instrument, record.action_id, record.attempt),
        )
        return ApprovalRecord(**{**record.as_dict(), **columns})

    def _audit(self, record: ApprovalRecord, agent: str, tool: str, note: str) -> None:
        self.audit.append(
            run_id=record.instrument,
            agent=agent,
            tool=tool,
            args={
                "action_id": record.action_id,
                "attempt": record.attempt,
                "command": record.command,
                "args": record.args,
                "args_hash": record.args_hash,
                "state": record.state,
            },
            decision_note=note,
            result={"status": record.status, "decided_by": record.decided_by},
        )


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def _record(row: sqlite3.Row) -> ApprovalRecord:
    data = dict(row)
    data["args"] = json.loads(data["args"])
    data["state"] = json.loads(data["state"])
    return ApprovalRecord(**data)
