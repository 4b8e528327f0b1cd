"""A run's sign-off: a person's approval bound to exactly what they were shown.

An approval record names the run, the person (name, role, how identified), when, and the
*basis*: the content hashes of the plan, the simulation, the policy rules in force and the
instruments' twin states at the moment the plan was shown. Its ``signature`` is an
HMAC-SHA256 of the record's canonical JSON under the lab's sign-off key (256 random bits kept
in the lab database, made on first use), so a record that was edited after it was made, or
written by anything that does not hold the key (a model's tool call, a hand-made resume
value), is not a valid approval.

What the key does not do: anyone who can read the lab database can read the key. The audit
log's chain (and its anchor outside the database) is what makes a forged approval visible
after the fact; the signature makes an approval that did not come through a person's
authenticated path unusable before anything moves.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import sqlite3
import time
from typing import Any

BASIS_KEYS = ("plan", "simulation", "policy", "twins")
_DDL = "CREATE TABLE IF NOT EXISTS lab_keys (name TEXT PRIMARY KEY, key TEXT NOT NULL)"


def canonical(value: Any) -> str:
    """Canonical JSON: sorted keys, no whitespace (the same value always gives the same text)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def content_hash(value: Any) -> str:
    """SHA-256 of a value's canonical JSON."""
    return hashlib.sha256(canonical(value).encode()).hexdigest()


class ApprovalSigner:
    """Signs and checks approval records with the lab's sign-off key."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        conn.execute(_DDL)
        conn.execute(
            "INSERT OR IGNORE INTO lab_keys (name, key) VALUES ('signoff', ?)",
            (secrets.token_hex(32),),
        )
        row = conn.execute("SELECT key FROM lab_keys WHERE name='signoff'").fetchone()
        self._key = bytes.fromhex(row[0])

    def sign(
        self, *, run_id: str, person: str, role: str, via: str, basis: dict[str, str]
    ) -> dict[str, Any]:
        """A signed approval record for ``run_id`` over ``basis``."""
        missing = [k for k in BASIS_KEYS if not isinstance(basis.get(k), str)]
        if missing:
            raise ValueError(f"an approval's basis needs {', '.join(missing)}")
        record: dict[str, Any] = {
            "run_id": run_id,
            "by": person,
            "role": role,
            "via": via,
            "at": time.time(),
            "basis": {k: basis[k] for k in BASIS_KEYS},
        }
        return {**record, "signature": self._mac(record)}

    def valid(self, record: Any, run_id: str) -> bool:
        """True when ``record`` is an unaltered approval of ``run_id`` signed with this key."""
        if not isinstance(record, dict) or record.get("run_id") != run_id:
            return False
        signature = record.get("signature")
        body = {k: v for k, v in record.items() if k != "signature"}
        return isinstance(signature, str) and hmac.compare_digest(signature, self._mac(body))

    def _mac(self, record: dict[str, Any]) -> str:
        return hmac.new(self._key, canonical(record).encode(), hashlib.sha256).hexdigest()
