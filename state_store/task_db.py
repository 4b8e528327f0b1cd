"""The database of the task side's records: runs, the audit log, people, the sign-off key.

PostgreSQL when the lab configures a URL (``state: {url: postgresql://...}``, shared by task
processes on several hosts), else the lab's own SQLite file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from state_store.db import connect


def open_task_db(url: str | None, sqlite_path: str | Path) -> Any:
    """A connection with the ``sqlite3`` API the record classes use."""
    if url and url.startswith(("postgresql://", "postgres://")):
        from state_store.pg import PgConnection  # psycopg only when PostgreSQL is used

        return PgConnection(url)
    return connect(sqlite_path)
