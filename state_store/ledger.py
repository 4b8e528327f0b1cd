"""The action ledger: intent written before the instrument is called, outcome after.

Statuses: ``pending`` (sent, no outcome yet), ``done``, ``failed``, ``in_doubt`` (a pending
action found after a restart: it may or may not have happened).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from dataclasses import dataclass
from typing import Any


def args_hash(command: str, args: dict[str, Any]) -> str:
    """A stable digest of a command and its arguments."""
    blob = json.dumps({"command": command, "args": args}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


@dataclass(frozen=True)
class LedgerEntry:
    action_id: str
    command: str
    args_hash: str
    status: str
    result: dict[str, Any] | None
    run_id: str | None
    note: str | None


class Ledger:
    """Per-instrument action ledger in the lab database."""

    def __init__(self, conn: sqlite3.Connection, instrument: str) -> None:
        self.conn = conn
        self.instrument = instrument

    def get(self, action_id: str) -> LedgerEntry | None:
        row = self.conn.execute(
            "SELECT * FROM actions WHERE instrument=? AND action_id=?",
            (self.instrument, action_id),
        ).fetchone()
        if row is None:
            return None
        return LedgerEntry(
            row["action_id"],
            row["command"],
            row["args_hash"],
            row["status"],
            json.loads(row["result"]) if row["result"] else None,
            row["run_id"],
            row["note"],
        )

    def args_of(self, action_id: str) -> dict[str, Any]:
        """The canonical arguments an action was begun with."""
        row = self.conn.execute(
            "SELECT args FROM actions WHERE instrument=? AND action_id=?",
            (self.instrument, action_id),
        ).fetchone()
        return dict(json.loads(row["args"])) if row is not None and row["args"] else {}

    def begin(
        self,
        action_id: str,
        command: str,
        digest: str,
        args: dict[str, Any],
        run_id: str | None = None,
    ) -> None:
        """Record the intent durably. Raises ``sqlite3.IntegrityError`` if the id exists."""
        self.conn.execute(
            "INSERT INTO actions (instrument, action_id, command, args_hash, args, status,"
            " run_id, started_at) VALUES (?,?,?,?,?,?,?,?)",
            (
                self.instrument,
                action_id,
                command,
                digest,
                json.dumps(args, default=str),
                "pending",
                run_id,
                time.time(),
            ),
        )

    def finish(self, action_id: str, status: str, result: dict[str, Any]) -> None:
        self.conn.execute(
            "UPDATE actions SET status=?, result=?, finished_at=? WHERE instrument=? AND "
            "action_id=?",
            (status, json.dumps(result, default=str), time.time(), self.instrument, action_id),
        )

    def mark_pending_in_doubt(self) -> list[str]:
        """After a restart: every action still pending has an unknown outcome."""
        rows = self.conn.execute(
            "SELECT action_id FROM actions WHERE instrument=? AND status='pending'",
            (self.instrument,),
        ).fetchall()
        ids = [r["action_id"] for r in rows]
        if ids:
            self.conn.execute(
                "UPDATE actions SET status='in_doubt', note='server restarted before the outcome"
                " was recorded' WHERE instrument=? AND status='pending'",
                (self.instrument,),
            )
        return ids

    def in_doubt(self) -> list[LedgerEntry]:
        rows = self.conn.execute(
            "SELECT action_id FROM actions WHERE instrument=? AND status='in_doubt'",
            (self.instrument,),
        ).fetchall()
        return [e for r in rows if (e := self.get(r["action_id"])) is not None]

    def annotate(self, action_id: str, note: str) -> None:
        self.conn.execute(
            "UPDATE actions SET note=? WHERE instrument=? AND action_id=?",
            (note, self.instrument, action_id),
        )

    # -------------------------------------------------------------- progress of one action
    def progress(self, action_id: str, done: int) -> None:
        """``done`` operations of the action have happened (written after each one)."""
        self.conn.execute(
            "INSERT INTO action_progress (instrument, action_id, done) VALUES (?,?,?) "
            "ON CONFLICT(instrument, action_id) DO UPDATE SET done=excluded.done",
            (self.instrument, action_id, done),
        )

    def keep_twin_before(self, action_id: str, twin: dict[str, Any]) -> None:
        """The belief the action was expanded on (kept once: the first restart knows it)."""
        self.conn.execute(
            "INSERT INTO action_progress (instrument, action_id, done, twin_before) "
            "VALUES (?,?,0,?) ON CONFLICT(instrument, action_id) DO UPDATE SET "
            "twin_before=coalesce(twin_before, excluded.twin_before)",
            (self.instrument, action_id, json.dumps(twin)),
        )

    def progress_of(self, action_id: str) -> dict[str, Any] | None:
        """``{done, twin_before, resume_from, args}`` of an action, if it recorded progress."""
        row = self.conn.execute(
            "SELECT p.done, p.twin_before, p.resume_from, a.args FROM action_progress p "
            "JOIN actions a ON a.instrument=p.instrument AND a.action_id=p.action_id "
            "WHERE p.instrument=? AND p.action_id=?",
            (self.instrument, action_id),
        ).fetchone()
        if row is None:
            return None
        return {
            "done": int(row["done"] or 0),
            "twin_before": json.loads(row["twin_before"]) if row["twin_before"] else None,
            "resume_from": row["resume_from"],
            "args": json.loads(row["args"]) if row["args"] else {},
        }

    def set_resume_from(self, action_id: str, index: int | None) -> None:
        self.conn.execute(
            "UPDATE action_progress SET resume_from=? WHERE instrument=? AND action_id=?",
            (index, self.instrument, action_id),
        )

    def clear_resume_points(self) -> None:
        """Another action runs: resume points found by an earlier read back no longer hold."""
        self.conn.execute(
            "UPDATE action_progress SET resume_from=NULL WHERE instrument=? AND "
            "resume_from IS NOT NULL",
            (self.instrument,),
        )

    def count(self, status: str | None = None) -> int:
        sql = "SELECT COUNT(*) FROM actions WHERE instrument=?"
        params: tuple[Any, ...] = (self.instrument,)
        if status:
            sql += " AND status=?"
            params += (status,)
        return int(self.conn.execute(sql, params).fetchone()[0])
