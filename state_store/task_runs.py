"""Task runs: one row per plain-language request, what ``labwright runs`` lists.

Distinct from ``device_runs`` (one instrument's protocol run). Statuses::

    planning -> waiting_approval -> running <-> waiting_person -> done
                                                               -> failed | cancelled
    planning -> refused

Transitions are the task graph's business; this table only refuses unknown statuses and
unknown fields.
"""

from __future__ import annotations

import builtins
import json
import sqlite3
import time
import uuid
from dataclasses import dataclass
from typing import Any, Literal, get_args

TaskStatus = Literal[
    "planning",
    "waiting_approval",
    "running",
    "waiting_person",
    "done",
    "refused",
    "failed",
    "cancelled",
]
STATUSES: frozenset[str] = frozenset(get_args(TaskStatus))

_JSON_FIELDS = ("plan", "report", "error")
_UPDATABLE = frozenset({"status", "planner", "model", "summary", *_JSON_FIELDS})


@dataclass(frozen=True)
class TaskRun:
    """One task run, with ``plan``, ``report`` and ``error`` decoded from JSON."""

    run_id: str
    request: str
    status: TaskStatus
    planner: str | None
    model: str | None
    created_at: float
    updated_at: float
    summary: str | None
    plan: Any
    report: Any
    error: Any


class TaskRuns:
    """The ``runs`` table."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def create(
        self,
        request: str,
        *,
        run_id: str | None = None,
        planner: str | None = None,
        model: str | None = None,
        status: TaskStatus = "planning",
    ) -> TaskRun:
        """Record a new run; a ``run_id`` is made up when not given.

        Raises:
            ValueError: an unknown status.
            sqlite3.IntegrityError: the ``run_id`` exists.
        """
        _check_status(status)
        run_id = run_id or f"run-{uuid.uuid4().hex[:12]}"
        now = time.time()
        self.conn.execute(
            "INSERT INTO runs (run_id, request, status, planner, model, created_at, updated_at)"
            " VALUES (?,?,?,?,?,?,?)",
            (run_id, request, status, planner, model, now, now),
        )
        return TaskRun(run_id, request, status, planner, model, now, now, None, None, None, None)

    def get(self, run_id: str) -> TaskRun | None:
        row = self.conn.execute("SELECT * FROM runs WHERE run_id=?", (run_id,)).fetchone()
        return None if row is None else _run(row)

    def exists(self, run_id: str) -> bool:
        """Whether the run is recorded (without decoding its plan: a long run's is megabytes)."""
        return (
            self.conn.execute("SELECT 1 FROM runs WHERE run_id=?", (run_id,)).fetchone() is not None
        )

    def instruments(self, run_id: str) -> builtins.list[str]:
        """The instruments the steps of the run's recorded plan are for, sorted (none before
        it has a plan). On SQLite the plan's JSON is read by SQLite, not decoded here."""
        if isinstance(self.conn, sqlite3.Connection):
            rows = self.conn.execute(
                "SELECT DISTINCT json_extract(s.value, '$.instrument') FROM runs,"
                " json_each(runs.plan, '$.steps') AS s WHERE runs.run_id = ?"
                " AND json_valid(runs.plan)",
                (run_id,),
            )
            return sorted(str(r[0]) for r in rows if r[0] is not None)
        run = self.get(run_id)
        steps = (run.plan or {}).get("steps") if run is not None else None
        if not isinstance(steps, list):
            return []
        return sorted(
            {str(s["instrument"]) for s in steps if isinstance(s, dict) and s.get("instrument")}
        )

    def update(self, run_id: str, **fields: Any) -> TaskRun:
        """Change some of status, planner, model, summary, plan, report, error; the run as it
        is now.

        Raises:
            ValueError: an unknown field or status.
            KeyError: no such run.
        """
        self.write(run_id, **fields)
        run = self.get(run_id)
        assert run is not None
        return run

    def write(self, run_id: str, **fields: Any) -> None:
        """:meth:`update` without reading the run back.

        Raises:
            ValueError: an unknown field or status.
            KeyError: no such run.
        """
        unknown = set(fields) - _UPDATABLE
        if unknown:
            raise ValueError(f"cannot update {sorted(unknown)}; fields: {sorted(_UPDATABLE)}")
        if "status" in fields:
            _check_status(fields["status"])
        values = {
            k: (None if v is None else json.dumps(v, default=str)) if k in _JSON_FIELDS else v
            for k, v in fields.items()
        }
        values["updated_at"] = time.time()
        cols = ", ".join(f"{k}=?" for k in values)  # keys checked against _UPDATABLE above
        cur = self.conn.execute(
            f"UPDATE runs SET {cols} WHERE run_id=?", (*values.values(), run_id)
        )
        if cur.rowcount == 0:
            raise KeyError(run_id)

    def list(self, limit: int = 20, status: TaskStatus | None = None) -> builtins.list[TaskRun]:
        """The newest runs first, optionally only those with one status."""
        if status is not None:
            _check_status(status)
            rows = self.conn.execute(
                "SELECT * FROM runs WHERE status=? ORDER BY created_at DESC, rowid DESC LIMIT ?",
                (status, limit),
            ).fetchall()
        else:
            rows = self.conn.execute(
                "SELECT * FROM runs ORDER BY created_at DESC, rowid DESC LIMIT ?", (limit,)
            ).fetchall()
        return [_run(r) for r in rows]


def _check_status(status: str) -> None:
    if status not in STATUSES:
        raise ValueError(f"unknown task run status {status!r}; one of {sorted(STATUSES)}")


def _run(row: sqlite3.Row) -> TaskRun:
    def decoded(name: str) -> Any:
        return json.loads(row[name]) if row[name] is not None else None

    return TaskRun(
        run_id=row["run_id"],
        request=row["request"],
        status=row["status"],
        planner=row["planner"],
        model=row["model"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        summary=row["summary"],
        plan=decoded("plan"),
        report=decoded("report"),
        error=decoded("error"),
    )
