"""Append-only, durable event logs, one sequence per run."""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any


class EventLog:
    """Events of device runs; ``read`` rebuilds everything a client missed with one call."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self._next: dict[str, int] = {}

    def _next_seq(self, run_id: str) -> int:
        if run_id not in self._next:
            row = self.conn.execute(
                "SELECT MAX(seq) FROM events WHERE run_id=?", (run_id,)
            ).fetchone()
            self._next[run_id] = (row[0] or 0) + 1
        return self._next[run_id]

    def forget(self, run_id: str) -> None:
        """Drop the cached next seq of ``run_id`` (after a rolled-back append)."""
        self._next.pop(run_id, None)

    def append(self, run_id: str, type_: str, data: dict[str, Any], simulated: bool) -> int:
        seq = self._next_seq(run_id)
        self.conn.execute(
            "INSERT INTO events (run_id, seq, type, ts, simulated, data) VALUES (?,?,?,?,?,?)",
            (run_id, seq, type_, time.time(), int(simulated), json.dumps(data, default=str)),
        )
        self._next[run_id] = seq + 1
        return seq

    def read(self, run_id: str, since_seq: int = 0, limit: int = 100) -> list[dict[str, Any]]:
        rows = self.conn.execute(
            "SELECT * FROM events WHERE run_id=? AND seq>? ORDER BY seq LIMIT ?",
            (run_id, since_seq, limit),
        ).fetchall()
        return [
            {
                "seq": r["seq"],
                "run_id": r["run_id"],
                "type": r["type"],
                "ts": r["ts"],
                "simulated": bool(r["simulated"]),
                "data": json.loads(r["data"]),
            }
            for r in rows
        ]
