"""Where a lab's task-side records are: PostgreSQL when the lab file says, else its SQLite."""

from __future__ import annotations

from typing import Any

from device_servers.lab import LabConfig
from state_store.task_db import open_task_db


def task_db(lab: LabConfig) -> Any:
    """A connection to the lab's runs, audit log, people and sign-off key."""
    return open_task_db(lab.state_url, lab.db_path)


def has_records(lab: LabConfig) -> bool:
    """Whether the lab has any task records yet (without creating a SQLite file)."""
    return bool(lab.state_url) or lab.db_path.exists()
