"""Approvals a person grants to one action (by instrument and action_id), outside any model.

A device server records what needs approval; only a person's tool (the ``labwright``
command) writes a grant. The server checks the grant matches the same arguments.
"""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any


class Approvals:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def request(
        self,
        instrument: str,
        action_id: str,
        command: str,
        digest: str,
        args: dict[str, Any],
        reason: str,
    ) -> None:
        self.conn.execute(
            "INSERT OR REPLACE INTO approval_requests (instrument, action_id, command, args_hash,"
            " args, reason, requested_at) VALUES (?,?,?,?,?,?,?)",
            (
                instrument,
                action_id,
                command,
                digest,
                json.dumps(args, default=str),
                reason,
                time.time(),
            ),
        )

    def pending(self, instrument: str | None = None) -> list[dict[str, Any]]:
        sql = (
            "SELECT r.* FROM approval_requests r LEFT JOIN approvals a ON"
            " a.instrument=r.instrument AND a.action_id=r.action_id WHERE a.action_id IS NULL"
        )
        params: tuple[Any, ...] = ()
        if instrument:
            sql += " AND r.instrument=?"
            params = (instrument,)
        return [dict(r) for r in self.conn.execute(sql, params).fetchall()]

    def grant(self, instrument: str, action_id: str, granted_by: str) -> dict[str, Any]:
        """Grant a recorded request. Raises ``KeyError`` when nothing asked for it."""
        row = self.conn.execute(
            "SELECT * FROM approval_requests WHERE instrument=? AND action_id=?",
            (instrument, action_id),
        ).fetchone()
        if row is None:
            raise KeyError(f"no approval request for {instrument}/{action_id}")
        self.conn.execute(
            "INSERT OR REPLACE INTO approvals (instrument, action_id, args_hash, granted_by,"
            " granted_at) VALUES (?,?,?,?,?)",
            (instrument, action_id, row["args_hash"], granted_by, time.time()),
        )
        return dict(row)

    def consume(self, instrument: str, action_id: str) -> None:
        """Use up a grant (and its request) for an action the ledger does not record."""
        for table in ("approvals", "approval_requests"):
            self.conn.execute(
                f"DELETE FROM {table} WHERE instrument=? AND action_id=?",
                (instrument, action_id),
            )

    def is_granted(self, instrument: str, action_id: str, digest: str) -> bool:
        row = self.conn.execute(
            "SELECT args_hash FROM approvals WHERE instrument=? AND action_id=?",
            (instrument, action_id),
        ).fetchone()
        return row is not None and row["args_hash"] == digest
