"""Open the lab's SQLite files: WAL, a busy timeout, full sync, tables created once under a lock."""

from __future__ import annotations

import contextlib
import fcntl
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

_SCHEMA: dict[str, tuple[dict[str, type], list[str] | str]] = {
    "actions": (
        {
            "instrument": str,
            "action_id": str,
            "command": str,
            "args_hash": str,
            "args": str,
            "status": str,
            "result": str,
            "run_id": str,
            "started_at": float,
            "finished_at": float,
            "note": str,
        },
        ["instrument", "action_id"],
    ),
    # How far an action got, primitive by primitive, so a restart can tell which of its
    # operations happened: the twin before it, the operations done, where to resume.
    "action_progress": (
        {
            "instrument": str,
            "action_id": str,
            "done": int,
            "twin_before": str,
            "resume_from": int,
        },
        ["instrument", "action_id"],
    ),
    "events": (
        {"run_id": str, "seq": int, "type": str, "ts": float, "simulated": int, "data": str},
        ["run_id", "seq"],
    ),
    "device_runs": (
        {
            "run_id": str,
            "instrument": str,
            "run_key": str,
            "status": str,
            "simulated": int,
            "dry_run": int,
            "protocol": str,
            "protocol_name": str,
            "steps_total": int,
            "steps_done": int,
            "error": str,
            "created_at": float,
            "updated_at": float,
        },
        "run_id",
    ),
    "approval_requests": (
        {
            "instrument": str,
            "action_id": str,
            "command": str,
            "args_hash": str,
            "args": str,
            "reason": str,
            "requested_at": float,
        },
        ["instrument", "action_id"],
    ),
    "approvals": (
        {
            "instrument": str,
            "action_id": str,
            "args_hash": str,
            "granted_by": str,
            "granted_at": float,
        },
        ["instrument", "action_id"],
    ),
    "instrument_state": (
        {"instrument": str, "twin": str, "stale_reason": str, "estop": int, "updated_at": float},
        "instrument",
    ),
    "runs": (
        {
            "run_id": str,
            "request": str,
            "status": str,
            "planner": str,
            "model": str,
            "created_at": float,
            "updated_at": float,
            "summary": str,
            "plan": str,
            "report": str,
            "error": str,
        },
        "run_id",
    ),
    "audit_log": (
        {
            "seq": int,
            "ts": float,
            "run_id": str,
            "agent": str,
            "model": str,
            "tool": str,
            "args": str,
            "state_before": str,
            "state_after": str,
            "decision_note": str,
            "result": str,
            "prev_hash": str,
            "hash": str,
        },
        "seq",
    ),
    "audit_head": ({"id": int, "seq": int, "hash": str}, "id"),
}

# What runs look up on every call by something other than the primary key: an instrument's
# actions in doubt (every get_state) and the resume points a new action clears. Without them
# each is a scan of every action the instrument ever carried out (slower with every step).
_INDEXES = (
    "CREATE INDEX IF NOT EXISTS actions_by_status ON actions (instrument, status)",
    "CREATE INDEX IF NOT EXISTS action_progress_resume_points ON action_progress (instrument)"
    " WHERE resume_from IS NOT NULL",
)

# The audit log is append-only; its hash chain catches anyone who drops these and edits anyway.
_TRIGGERS = (
    "CREATE TRIGGER IF NOT EXISTS audit_log_no_update BEFORE UPDATE ON audit_log"
    " BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END",
    "CREATE TRIGGER IF NOT EXISTS audit_log_no_delete BEFORE DELETE ON audit_log"
    " BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END",
)


def _busy(exc: sqlite3.OperationalError) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return "locked" in str(exc) or "busy" in str(exc)


def retry_busy(work: Callable[[], T], *, attempts: int = 200, pause_s: float = 0.005) -> T:
    """Run ``work``, retrying the SQLITE_BUSY that SQLite returns without its busy handler.

    SQLite skips the busy handler where waiting could deadlock (a journal-mode change, a read
    upgrading to a write, WAL recovery); the caller then sees "database is locked" at once.
    Those waits are short: retry with a growing pause, about 20 s in all before giving up.
    """
    for attempt in range(attempts):
        try:
            return work()
        except sqlite3.OperationalError as exc:
            if not _busy(exc) or attempt == attempts - 1:
                raise
            time.sleep(min(pause_s * (attempt + 1), 0.2))
    raise AssertionError("unreachable")


@contextlib.contextmanager
def _creation_lock(path: Path) -> Iterator[None]:
    """An exclusive lock on ``<database>.lock`` while the database is created or upgraded.

    A separate file: closing any descriptor of the database itself would drop SQLite's own
    POSIX locks held by this process.
    """
    with open(path.with_name(path.name + ".lock"), "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def open_sqlite(
    path: str | Path, setup: Callable[[sqlite3.Connection], object], *, synchronous: str = "FULL"
) -> sqlite3.Connection:
    """A connection in autocommit mode (callers open transactions explicitly), WAL, busy timeout.

    The file is created, switched to WAL and given its tables by ``setup`` under a file lock,
    one opener at a time, so servers started together on a fresh state directory never meet
    each other half way through; each statement retries the busy errors that skip the handler.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA busy_timeout=30000")
    with _creation_lock(path):
        if retry_busy(lambda: conn.execute("PRAGMA journal_mode").fetchone()[0]) != "wal":
            retry_busy(lambda: conn.execute("PRAGMA journal_mode=WAL"))
        retry_busy(lambda: setup(conn))
    conn.execute(f"PRAGMA synchronous={synchronous}")
    return conn


_SQL_TYPES = {str: "TEXT", int: "INTEGER", float: "REAL"}
# The indexes the tables were created with (names as sqlite-utils gave them).
_TABLE_INDEXES = (
    'CREATE UNIQUE INDEX IF NOT EXISTS "idx_device_runs_instrument_run_key"'
    ' ON "device_runs" ("instrument", "run_key")',
    'CREATE INDEX IF NOT EXISTS "idx_audit_log_run_id_seq" ON "audit_log" ("run_id", "seq")',
    'CREATE INDEX IF NOT EXISTS "idx_runs_status_created_at" ON "runs" ("status", "created_at")',
)


def table_ddl(name: str, columns: dict[str, type], pk: list[str] | str) -> str:
    """``CREATE TABLE IF NOT EXISTS`` for one table of :data:`_SCHEMA` (a single integer key
    is the rowid, as before)."""
    keys = [pk] if isinstance(pk, str) else pk
    parts = [
        f'"{col}" {_SQL_TYPES[kind]}' + (" PRIMARY KEY" if keys == [col] else "")
        for col, kind in columns.items()
    ]
    if len(keys) > 1:
        parts.append("PRIMARY KEY (" + ", ".join(f'"{k}"' for k in keys) + ")")
    return f'CREATE TABLE IF NOT EXISTS "{name}" ({", ".join(parts)})'


def _create_tables(conn: sqlite3.Connection) -> None:
    # Plain DDL: sqlite-utils loaded click and pluggy into every instrument server for this.
    for name, (columns, pk) in _SCHEMA.items():
        conn.execute(table_ddl(name, columns, pk))
    for ddl in (*_TABLE_INDEXES, *_INDEXES, *_TRIGGERS):
        conn.execute(ddl)


def connect(path: str | Path) -> sqlite3.Connection:
    """The lab database: a connection in autocommit mode; callers open transactions explicitly."""
    return open_sqlite(path, _create_tables)
