"""Open the lab's SQLite database: WAL, a busy timeout, full sync, tables created on first use."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import sqlite_utils

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
}


def connect(path: str | Path) -> sqlite3.Connection:
    """A connection in autocommit mode; callers open transactions explicitly."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute("PRAGMA busy_timeout=30000")
    db = sqlite_utils.Database(conn)
    for name, (columns, pk) in _SCHEMA.items():
        db[name].create(columns, pk=pk, if_not_exists=True)  # type: ignore[union-attr]
    db["device_runs"].create_index(  # type: ignore[union-attr]
        ["instrument", "run_key"], unique=True, if_not_exists=True
    )
    return conn
