"""A person's answer recorded for whoever drives the run next (here or on another host).

``labwright approve RUN --no-run`` signs and records an approval without executing anything;
the next ``labwright resume RUN`` -- in this process, another one, or on another host sharing
the database -- takes it (once) and goes on, checking it against the lab as it is then.
"""

from __future__ import annotations

import json
import time
from typing import Any

_DDL = (
    "CREATE TABLE IF NOT EXISTS run_answers (run_id TEXT PRIMARY KEY, answer TEXT NOT NULL,"
    " recorded_at REAL NOT NULL)"
)


class PendingAnswers:
    def __init__(self, conn: Any) -> None:
        self.conn = conn
        conn.execute(_DDL)

    def put(self, run_id: str, answer: dict[str, Any]) -> None:
        """Record ``answer``; a newer answer replaces one not yet taken."""
        self.conn.execute("DELETE FROM run_answers WHERE run_id=?", (run_id,))
        self.conn.execute(
            "INSERT INTO run_answers (run_id, answer, recorded_at) VALUES (?,?,?)",
            (run_id, json.dumps(answer, default=str), time.time()),
        )

    def peek(self, run_id: str) -> dict[str, Any] | None:
        row = self.conn.execute(
            "SELECT answer FROM run_answers WHERE run_id=?", (run_id,)
        ).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def take(self, run_id: str) -> dict[str, Any] | None:
        """The recorded answer, removed so that only one driver uses it."""
        row = self.conn.execute(
            "DELETE FROM run_answers WHERE run_id=? RETURNING answer", (run_id,)
        ).fetchone()
        return None if row is None else dict(json.loads(row[0]))
