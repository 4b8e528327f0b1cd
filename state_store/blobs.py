"""Large, unchanging values stored once, by content hash: plans, simulation reports.

A task run's graph state refers to them by reference (``sha256:<hex>`` of the value's
canonical JSON) instead of holding them, so a checkpoint -- which stores every channel value
whole -- stays the same size however long the plan is. The same value stored twice is one row;
a value is never changed once stored (a changed value has another hash). The reference is also
what an approval can be bound to: the hash of exactly the plan or simulation a person saw.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from typing import Any

_DDL = (
    "CREATE TABLE IF NOT EXISTS task_blobs ("
    " ref TEXT PRIMARY KEY, kind TEXT NOT NULL, size INTEGER NOT NULL,"
    " body TEXT NOT NULL, created_at REAL NOT NULL)"
)
PREFIX = "sha256:"


class BlobError(LookupError):
    """A reference that names no stored value, or a stored value that no longer matches it."""


def canonical(value: Any) -> str:
    """The JSON text a value is hashed and stored as (sorted keys, no spaces)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_hash(value: Any) -> str:
    """``sha256:<hex>`` of the value's canonical JSON."""
    return PREFIX + hashlib.sha256(canonical(value).encode("utf-8")).hexdigest()


class Blobs:
    """The ``task_blobs`` table: put a value, get it back by its reference."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        conn.execute(_DDL)

    def put(self, kind: str, value: Any) -> str:
        """Store ``value`` (JSON-able) once; its reference."""
        body = canonical(value)
        ref = PREFIX + hashlib.sha256(body.encode("utf-8")).hexdigest()
        self.conn.execute(
            "INSERT OR IGNORE INTO task_blobs (ref, kind, size, body, created_at)"
            " VALUES (?, ?, ?, ?, ?)",
            (ref, kind, len(body), body, time.time()),
        )
        return ref

    def get(self, ref: str) -> Any:
        """The value stored under ``ref``.

        Raises:
            BlobError: nothing is stored under ``ref``, or what is stored does not hash to it.
        """
        return json.loads(self._body(ref))

    def part(self, ref: str, *keys: str) -> Any:
        """``value[keys[0]][keys[1]]...`` of the value stored under ``ref`` (None where a key
        is missing), checked against its hash like :meth:`get`. On SQLite only that part is
        decoded in Python: a 10,000-step simulation report is megabytes of JSON, and a
        resumed run wants its timeline's few hundred kilobytes.

        Raises:
            BlobError: as :meth:`get`.
        """
        body = self._body(ref)
        if isinstance(self.conn, sqlite3.Connection) and all(k.isidentifier() for k in keys):
            path = "$" + "".join(f".{k}" for k in keys)
            row = self.conn.execute("SELECT json_type(?1, ?2), json_extract(?1, ?2)", (body, path))
            kind, value = row.fetchone()
            if kind in ("object", "array"):
                return json.loads(value)
            return {"true": True, "false": False}.get(kind, value)
        value = json.loads(body)
        for key in keys:
            value = value.get(key) if isinstance(value, dict) else None
        return value

    def _body(self, ref: str) -> str:
        row = self.conn.execute("SELECT body FROM task_blobs WHERE ref = ?", (ref,)).fetchone()
        if row is None:
            raise BlobError(f"no stored value {ref}")
        body = str(row[0])
        if PREFIX + hashlib.sha256(body.encode("utf-8")).hexdigest() != ref:
            raise BlobError(f"the stored value {ref} does not match its hash")
        return body

    def __contains__(self, ref: object) -> bool:
        sql = "SELECT 1 FROM task_blobs WHERE ref = ?"
        return self.conn.execute(sql, (ref,)).fetchone() is not None
