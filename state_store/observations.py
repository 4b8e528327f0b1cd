"""What each dispatched step observed, one row per dispatch, read back through a cursor.

A task run's graph state keeps only its cursor (how many observations it has recorded) and
whatever the next decision needs; the observations themselves -- each with the instrument's
state after the step -- are rows here, so checkpoints do not grow with the run. Rows are
added at the cursor: ``(run_id, lane, seq)`` is the position. A node that LangGraph re-runs
after a crash records again at the same position (it asked the same action id again, and
its newer answer replaces the one no checkpoint ever referred to); an earlier position is
rewritten only by the same action (a replay from an older checkpoint), never by another.
Lanes are the run's parallel branches (one for a sequential run).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

_DDL = (
    "CREATE TABLE IF NOT EXISTS task_observations ("
    " run_id TEXT NOT NULL, lane TEXT NOT NULL, seq INTEGER NOT NULL,"
    " step_id TEXT NOT NULL, ok INTEGER NOT NULL, body TEXT NOT NULL,"
    " recorded_at REAL NOT NULL, PRIMARY KEY (run_id, lane, seq))",
    # Index entries are ordered by (run_id, rowid): a run's rows in recording order.
    "CREATE INDEX IF NOT EXISTS task_observations_run ON task_observations (run_id)",
)
PAGE = 500


@dataclass(frozen=True)
class Recorded:
    """One recorded observation and its position."""

    run_id: str
    lane: str
    seq: int
    step_id: str
    ok: bool
    body: dict[str, Any]
    recorded_at: float


class ObservationLog:
    """The ``task_observations`` table."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        for ddl in _DDL:
            conn.execute(ddl)

    def record(self, run_id: str, lane: str, seq: int, body: dict[str, Any]) -> None:
        """Record ``body`` (an observation with ``step_id``, ``action_id`` and ``ok``) at
        ``seq`` of ``lane``.

        Behind the lane's last position only the same action may be recorded again (a replay
        of the run from an older checkpoint asks the same action ids again, in order).

        Raises:
            ValueError: ``seq`` is behind the lane's last position and holds another action.
        """
        last = self.conn.execute(
            "SELECT max(seq) FROM task_observations WHERE run_id = ? AND lane = ?",
            (run_id, lane),
        ).fetchone()[0]
        if last is not None and seq < last:
            held = self.get(run_id, lane, seq)
            same = held is not None and all(
                held.body.get(k) == body.get(k) for k in ("step_id", "action_id")
            )
            if not same:
                raise ValueError(
                    f"observation {seq} of {run_id}/{lane} is behind its cursor {last} and "
                    "holds another action: history is not rewritten"
                )
        self.conn.execute(
            # An upsert keeps the row where it was first recorded (its rowid: the read order).
            "INSERT INTO task_observations"
            " (run_id, lane, seq, step_id, ok, body, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (run_id, lane, seq) DO UPDATE SET step_id = excluded.step_id,"
            " ok = excluded.ok, body = excluded.body, recorded_at = excluded.recorded_at",
            (
                run_id,
                lane,
                seq,
                str(body.get("step_id", "")),
                int(bool(body.get("ok"))),
                json.dumps(body, separators=(",", ":")),
                time.time(),
            ),
        )

    def get(self, run_id: str, lane: str, seq: int) -> Recorded | None:
        row = self.conn.execute(
            "SELECT * FROM task_observations WHERE run_id = ? AND lane = ? AND seq = ?",
            (run_id, lane, seq),
        ).fetchone()
        return None if row is None else _recorded(row)

    def read(self, run_id: str, cursor: int = 0, limit: int = PAGE) -> tuple[list[Recorded], int]:
        """Up to ``limit`` observations of the run after ``cursor``, in recording order, and
        the cursor to pass next (0 starts from the beginning)."""
        rows = self.conn.execute(
            "SELECT rowid, * FROM task_observations WHERE run_id = ? AND rowid > ?"
            " ORDER BY rowid LIMIT ?",
            (run_id, cursor, limit),
        ).fetchall()
        return [_recorded(r) for r in rows], (int(rows[-1]["rowid"]) if rows else cursor)

    def all(self, run_id: str) -> Iterator[Recorded]:
        """Every observation of the run in recording order, read page by page."""
        cursor = 0
        while True:
            page, cursor = self.read(run_id, cursor)
            if not page:
                return
            yield from page

    def count(self, run_id: str) -> int:
        sql = "SELECT count(*) FROM task_observations WHERE run_id = ?"
        return int(self.conn.execute(sql, (run_id,)).fetchone()[0])


def _recorded(row: sqlite3.Row) -> Recorded:
    return Recorded(
        run_id=row["run_id"],
        lane=row["lane"],
        seq=int(row["seq"]),
        step_id=row["step_id"],
        ok=bool(row["ok"]),
        body=json.loads(row["body"]),
        recorded_at=float(row["recorded_at"]),
    )
