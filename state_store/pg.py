"""Labwright's task-side tables on PostgreSQL, behind the small part of the ``sqlite3``
connection API the record classes use (``execute``, rows by index and by name,
``in_transaction``, explicit ``BEGIN`` / ``SAVEPOINT`` / ``COMMIT``).

When a lab file says ``state: {url: postgresql://...}``, the runs table, the audit log and its
head, the run records (plans and simulations by hash, observations), the people, the sign-off
key and recorded answers live there (and LangGraph's checkpoints, through
``langgraph-checkpoint-postgres``), so task processes on several hosts share them. Each
instrument server keeps its ledger, event log and approval requests in its own SQLite
database, next to the instrument (at-most-once stays where the actions happen).

What is translated, and nothing else: ``?`` placeholders to ``%s``; ``INSERT OR IGNORE`` to
``ON CONFLICT DO NOTHING``; ``BEGIN IMMEDIATE`` (take the write lock first) to ``BEGIN`` plus a
transaction-scoped advisory lock; a unique violation to :class:`sqlite3.IntegrityError`, so
callers catch one exception whichever database they are on.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import psycopg
from psycopg import pq

# Task-side tables, as PostgreSQL DDL (``rowid``: the insertion order SQLite gives for free).
SCHEMA = (
    """CREATE TABLE IF NOT EXISTS runs (
        run_id TEXT PRIMARY KEY, request TEXT, status TEXT, planner TEXT, model TEXT,
        created_at DOUBLE PRECISION, updated_at DOUBLE PRECISION, summary TEXT, plan TEXT,
        report TEXT, error TEXT, rowid BIGSERIAL)""",
    "CREATE INDEX IF NOT EXISTS runs_status_created ON runs (status, created_at)",
    """CREATE TABLE IF NOT EXISTS audit_log (
        seq BIGINT PRIMARY KEY, ts DOUBLE PRECISION, run_id TEXT, agent TEXT, model TEXT,
        tool TEXT, args TEXT, state_before TEXT, state_after TEXT, decision_note TEXT,
        result TEXT, prev_hash TEXT, hash TEXT)""",
    "CREATE INDEX IF NOT EXISTS audit_log_run ON audit_log (run_id, seq)",
    "CREATE TABLE IF NOT EXISTS audit_head (id INTEGER PRIMARY KEY, seq BIGINT, hash TEXT)",
    # The run records (state_store.observations reads a run's rows in rowid order).
    """CREATE TABLE IF NOT EXISTS task_observations (
        run_id TEXT NOT NULL, lane TEXT NOT NULL, seq INTEGER NOT NULL, step_id TEXT NOT NULL,
        ok INTEGER NOT NULL, body TEXT NOT NULL, recorded_at DOUBLE PRECISION NOT NULL,
        rowid BIGSERIAL, PRIMARY KEY (run_id, lane, seq))""",
    "CREATE INDEX IF NOT EXISTS task_observations_run ON task_observations (run_id, rowid)",
    # The audit log is append-only here too; the hash chain catches whoever drops this.
    """CREATE OR REPLACE FUNCTION labwright_audit_append_only() RETURNS trigger AS $$
       BEGIN RAISE EXCEPTION 'audit_log is append-only'; END $$ LANGUAGE plpgsql""",
    """DO $$ BEGIN
         IF NOT EXISTS (SELECT 1 FROM pg_trigger WHERE tgname = 'audit_log_append_only') THEN
           CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
             FOR EACH ROW EXECUTE FUNCTION labwright_audit_append_only();
         END IF;
       END $$""",
)
_LOCK_KEY = 0x1AB5_0001  # the advisory lock that BEGIN IMMEDIATE stands for
_DDL_KEY = 0x1AB5_0002  # serializes CREATE ... IF NOT EXISTS (concurrent ones can collide)
_PLACEHOLDER = re.compile(r"\?")
_OR_IGNORE = re.compile(r"^\s*INSERT\s+OR\s+IGNORE\s+INTO", re.IGNORECASE)


class Row(tuple):  # type: ignore[type-arg]
    """A result row readable by index and by column name, like ``sqlite3.Row``."""

    _names: tuple[str, ...] = ()

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return super().__getitem__(self._names.index(key))
        return super().__getitem__(key)

    def keys(self) -> list[str]:
        return list(self._names)


def _row_factory(cursor: psycopg.Cursor[Any]) -> Any:
    names = tuple(c.name for c in cursor.description or ())
    cls = type("Row", (Row,), {"_names": names})
    return lambda values: cls(values)


class Cursor:
    """What ``execute`` returns: rows and a row count."""

    def __init__(self, cursor: psycopg.Cursor[Any]) -> None:
        self._cursor = cursor
        self.rowcount = cursor.rowcount

    def fetchone(self) -> Any:
        return self._cursor.fetchone() if self._cursor.description else None

    def fetchall(self) -> list[Any]:
        return list(self._cursor.fetchall()) if self._cursor.description else []

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fetchall())


def translate(sql: str) -> str:
    """SQLite's dialect, as the record classes write it, in PostgreSQL's."""
    out = _PLACEHOLDER.sub("%s", sql)
    if _OR_IGNORE.match(out):
        out = _OR_IGNORE.sub("INSERT INTO", out) + " ON CONFLICT DO NOTHING"
    return out.replace(" REAL", " DOUBLE PRECISION")


class PgConnection:
    """One PostgreSQL connection in autocommit mode; callers open transactions explicitly."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._conn = psycopg.connect(url, autocommit=True, row_factory=_row_factory)
        self._lock = threading.RLock()
        for ddl in SCHEMA:
            self._create(ddl)

    def _create(self, ddl: str, params: Sequence[Any] = ()) -> Any:
        """DDL under a lock: two hosts creating the same table at once would collide."""
        with self._conn.transaction():
            self._conn.execute("SELECT pg_advisory_xact_lock(%s)", (_DDL_KEY,))
            return self._conn.execute(translate(ddl), tuple(params))  # type: ignore[arg-type]

    @property
    def in_transaction(self) -> bool:
        return self._conn.info.transaction_status != pq.TransactionStatus.IDLE

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        statement = sql.strip().upper()
        with self._lock:
            try:
                if statement.startswith("CREATE") and not self.in_transaction:
                    cur = self._create(sql, params)
                elif statement == "BEGIN IMMEDIATE":
                    self._conn.execute("BEGIN")
                    cur = self._conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
                else:
                    cur = self._conn.execute(translate(sql), tuple(params))  # type: ignore[arg-type]
            except psycopg.errors.UniqueViolation as exc:
                raise sqlite3.IntegrityError(str(exc)) from exc
            except psycopg.errors.RaiseException as exc:  # the append-only trigger
                raise sqlite3.IntegrityError(str(exc)) from exc
            return Cursor(cur)

    def close(self) -> None:
        self._conn.close()
