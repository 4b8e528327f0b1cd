"""The audit log: every tool call and decision, append-only and hash-chained.

Design
------
There is **one global chain** per lab database, not one chain per run. Each row's ``hash`` is
the SHA-256 of a canonical JSON (sorted keys, no whitespace) of all its stored fields — ``seq``,
``ts``, ``run_id``, ``agent``, ``model``, ``tool``, ``args``, ``state_before``,
``state_after``, ``decision_note``, ``result`` — plus ``prev_hash``, the previous row's hash
(64 zeros for ``seq`` 1). The one-row ``audit_head`` table holds the last ``seq`` and ``hash``
and is written in the same transaction as the row, so cutting rows off the end is detected
too. ``UPDATE`` and ``DELETE`` on ``audit_log`` are refused by triggers (see ``db.py``); the
chain is what catches anyone who drops the triggers and edits the file anyway.

Why global: a deleted row takes its ``run_id`` with it, and an edited ``run_id`` moves a row
from one run to another, so no per-run check can prove that none of a run's rows is missing.
A per-run chain would also let whole runs (rows and head) vanish without a trace. Therefore
``verify(run_id)`` walks the whole chain and reports **every** break: a break anywhere means
the log can no longer vouch for any run. Each :class:`ChainProblem` names the ``run_id`` of the
row where it was found (``None`` where the row is gone), so a reader sees which breaks touch
the run directly.

Whoever can write the file can rehash it and the head, so a SQLite log is also anchored
outside the database (``anchor.py``), which ``verify`` compares with the chain.

Appending links the new row to the head (a gap after a truncation still shows), in ``BEGIN
IMMEDIATE`` (a savepoint inside a caller's transaction): writers never fork the chain. Cost
per append: two one-row reads, one INSERT, one head upsert, two anchor lines.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from state_store.anchor import Anchor, compare

GENESIS = "0" * 64

_FIELDS = (
    "seq",
    "ts",
    "run_id",
    "agent",
    "model",
    "tool",
    "args",
    "state_before",
    "state_after",
    "decision_note",
    "result",
    "prev_hash",
)
_INSERT = f"INSERT INTO audit_log ({', '.join(_FIELDS)}, hash) VALUES ({', '.join('?' * 13)})"
_HEAD = (
    "INSERT INTO audit_head (id, seq, hash) VALUES (1, ?, ?) "
    "ON CONFLICT(id) DO UPDATE SET seq=excluded.seq, hash=excluded.hash"
)

ProblemKind = Literal[
    "hash_mismatch",
    "broken_link",
    "missing_rows",
    "head_mismatch",
    "anchor_mismatch",
    "anchor_ahead",
    "unanchored",
    "anchor_unreadable",
]


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def _json_or_null(value: Any) -> str | None:
    return None if value is None else _dumps(value)


def _loads(text: Any) -> Any:
    """Stored JSON back to Python; a value that is not JSON (a tampered row) is kept as is."""
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def row_hash(fields: dict[str, Any]) -> str:
    """The hash of one row: SHA-256 of the canonical JSON of its fields and ``prev_hash``."""
    return hashlib.sha256(_dumps({k: fields[k] for k in _FIELDS}).encode()).hexdigest()


@dataclass(frozen=True)
class AuditEntry:
    """One audit row, with its JSON fields decoded."""

    seq: int
    ts: float
    run_id: str
    agent: str
    model: str | None
    tool: str
    args: Any
    state_before: Any
    state_after: Any
    decision_note: str
    result: Any
    prev_hash: str
    hash: str

    @property
    def outcome(self) -> str:
        """``ok``, the error code of a failed result, or ``-`` when there is no result."""
        if self.result is None:
            return "-"
        if isinstance(self.result, dict) and self.result.get("ok") is False:
            error = self.result.get("error")
            code = error.get("code") if isinstance(error, dict) else None
            return str(code or "error")
        return "ok"


@dataclass(frozen=True)
class ChainProblem:
    """One break: ``seq`` is its row (``head_mismatch``: the head's seq); ``run_id`` that row's
    stored run, or ``None`` when the row is gone."""

    seq: int
    kind: ProblemKind
    detail: str
    run_id: str | None = None


@dataclass(frozen=True)
class AnchorSummary:
    """The anchor as verified: its file, its last committed seq and hash, where it was adopted
    (a log older than its anchor: the rows up to there are held through the chain)."""

    path: Path
    last_seq: int
    last_hash: str | None
    adopted_at: int | None


@dataclass(frozen=True)
class VerifyReport:
    """The outcome of walking the chain.

    ``entries`` counts the rows of ``run_id`` (of the whole log when ``run_id`` is ``None``);
    ``checked`` counts every row walked. ``problems`` lists every break of the global chain.
    """

    run_id: str | None
    entries: int
    checked: int
    problems: tuple[ChainProblem, ...]
    anchor: AnchorSummary | None = None

    @property
    def ok(self) -> bool:
        return not self.problems

    def touching(self) -> tuple[ChainProblem, ...]:
        """The problems found on rows that still say they belong to ``run_id``."""
        if self.run_id is None:
            return self.problems
        return tuple(p for p in self.problems if p.run_id == self.run_id)


def _database_file(conn: Any) -> str:
    """The SQLite file of the log ("": in memory, or PostgreSQL, checked without an anchor)."""
    sqlite = isinstance(conn, sqlite3.Connection)
    return str(conn.execute("PRAGMA database_list").fetchone()[2]) if sqlite else ""


class AuditLog:
    """The lab's audit log. Share one instance per connection; appends are serialized."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self._lock = threading.Lock()
        self.anchor = Anchor.beside(_database_file(conn))

    def append(
        self,
        *,
        run_id: str,
        agent: str,
        tool: str,
        args: dict[str, Any],
        model: str | None = None,
        state_before: Any = None,
        state_after: Any = None,
        decision_note: str = "",
        result: Any = None,
    ) -> AuditEntry:
        """Append one tool call or decision and return it with its ``seq`` and ``hash``."""
        fields: dict[str, Any] = {
            "ts": time.time(),
            "run_id": run_id,
            "agent": agent,
            "model": model,
            "tool": tool,
            "args": _dumps(args),
            "state_before": _json_or_null(state_before),
            "state_after": _json_or_null(state_after),
            "decision_note": decision_note,
            "result": _json_or_null(result),
        }
        with self._lock:
            nested = self.conn.in_transaction
            # Never take the anchor's lock inside a caller's transaction: the caller may hold
            # the write lock another appender, holding the anchor's lock, is waiting for.
            with contextlib.nullcontext() if nested else self.anchor.locked():
                self._append_row(fields, nested)
                if not nested:
                    self.anchor.record([(fields["seq"], fields["hash"], "")])
        return AuditEntry(
            seq=fields["seq"],
            ts=fields["ts"],
            run_id=run_id,
            agent=agent,
            model=model,
            tool=tool,
            args=_loads(fields["args"]),
            state_before=_loads(fields["state_before"]),
            state_after=_loads(fields["state_after"]),
            decision_note=decision_note,
            result=_loads(fields["result"]),
            prev_hash=fields["prev_hash"],
            hash=fields["hash"],
        )

    def _append_row(self, fields: dict[str, Any], nested: bool) -> None:
        """Insert the row, move the head and anchor the intent, in one transaction."""
        self.conn.execute("SAVEPOINT audit_append" if nested else "BEGIN IMMEDIATE")
        try:
            last = self.conn.execute(
                "SELECT seq, hash FROM audit_log ORDER BY seq DESC LIMIT 1"
            ).fetchone()
            head = self.conn.execute("SELECT seq, hash FROM audit_head WHERE id=1").fetchone()
            # Chain onto the head, not the last row: after rows were cut off the end, the
            # next append then still shows the gap instead of papering over it.
            prev_seq = max(last[0] if last else 0, head[0] if head else 0)
            fields["seq"] = prev_seq + 1
            fields["prev_hash"] = head[1] if head else last[1] if last else GENESIS
            fields["hash"] = row_hash(fields)
            self.conn.execute(_INSERT, (*(fields[k] for k in _FIELDS), fields["hash"]))
            self.conn.execute(_HEAD, (fields["seq"], fields["hash"]))
            adopt = prev_seq > 0 and self.anchor.is_empty()  # a log older than its anchor
            self.anchor.record(
                [(prev_seq, fields["prev_hash"], "adopted")] * adopt
                + [(fields["seq"], fields["hash"], "intent")]
            )
        except BaseException:
            if nested:
                self.conn.execute("ROLLBACK TO audit_append")
                self.conn.execute("RELEASE audit_append")
            else:
                self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("RELEASE audit_append" if nested else "COMMIT")

    def entries(self, run_id: str | None = None) -> list[AuditEntry]:
        """The entries of one run (or all), in chain order."""
        if run_id is None:
            rows = self.conn.execute("SELECT * FROM audit_log ORDER BY seq").fetchall()
        else:
            rows = self.conn.execute(
                "SELECT * FROM audit_log WHERE run_id=? ORDER BY seq", (run_id,)
            ).fetchall()
        return [_entry(r) for r in rows]

    def count(self, run_id: str | None = None) -> int:
        """How many entries one run (or the whole log) has."""
        if run_id is None:
            return int(self.conn.execute("SELECT COUNT(*) FROM audit_log").fetchone()[0])
        sql = "SELECT COUNT(*) FROM audit_log WHERE run_id=?"
        return int(self.conn.execute(sql, (run_id,)).fetchone()[0])

    def verify(self, run_id: str | None = None) -> VerifyReport:
        """Walk the whole chain, compare it with its anchor and report every break (see the
        module docstring for why a run's verification covers the whole chain)."""
        nested = self.conn.in_transaction
        # The anchor's lock, then one read transaction: no append lands between the rows, the
        # head and the anchor. (Not inside a caller's transaction: see append.)
        with contextlib.nullcontext() if nested else self.anchor.locked():
            if not nested:
                self.conn.execute("BEGIN")
            try:
                walk = _walk(self.conn, run_id)
                head = self.conn.execute("SELECT seq, hash FROM audit_head WHERE id=1").fetchone()
            finally:
                if not nested:
                    self.conn.execute("COMMIT")
            anchor = self.anchor.read()
        problems = walk.problems + _check_head(head, walk.last_seq, walk.last_hash)
        summary = None
        if self.anchor.path is not None:
            found = compare(anchor, walk.hashes)
            problems += [ChainProblem(q, cast(ProblemKind, k), d) for q, k, d in found]
            summary = AnchorSummary(
                path=self.anchor.path,
                last_seq=anchor.last_seq,
                last_hash=anchor.committed.get(anchor.last_seq),
                adopted_at=min(anchor.adopted, default=None),
            )
        return VerifyReport(run_id, walk.entries, walk.checked, tuple(problems), summary)


@dataclass
class _Walk:
    problems: list[ChainProblem] = field(default_factory=list)
    hashes: dict[int, str] = field(default_factory=dict)
    entries: int = 0
    checked: int = 0
    last_seq: int = 0
    last_hash: str = GENESIS


def _walk(conn: sqlite3.Connection, run_id: str | None) -> _Walk:
    """Every row in seq order: its own hash, its link to the one before."""
    walk = _Walk()
    for row in conn.execute(f"SELECT {', '.join(_FIELDS)}, hash FROM audit_log ORDER BY seq"):
        fields = dict(zip((*_FIELDS, "hash"), tuple(row), strict=True))
        walk.checked += 1
        walk.entries += run_id is None or fields["run_id"] == run_id
        walk.problems += _check_row(fields, walk.last_seq, walk.last_hash)
        walk.last_seq, walk.last_hash = fields["seq"], fields["hash"]
        if isinstance(fields["seq"], int):
            walk.hashes[fields["seq"]] = fields["hash"]
    return walk


def _check_row(fields: dict[str, Any], prev_seq: Any, prev_hash: Any) -> list[ChainProblem]:
    seq, rid = fields["seq"], fields["run_id"]
    found: list[ChainProblem] = []
    if isinstance(seq, int) and isinstance(prev_seq, int) and seq > prev_seq + 1:
        missing = f"{prev_seq + 1}" if seq == prev_seq + 2 else f"{prev_seq + 1}..{seq - 1}"
        found.append(ChainProblem(seq, "missing_rows", f"seq {missing} missing", rid))
    elif fields["prev_hash"] != prev_hash:
        found.append(
            ChainProblem(
                seq,
                "broken_link",
                f"prev_hash does not match the hash of seq {prev_seq}: a row was replaced, "
                "inserted or moved",
                rid,
            )
        )
    if row_hash(fields) != fields["hash"]:
        found.append(ChainProblem(seq, "hash_mismatch", "row content does not match its hash", rid))
    return found


def _check_head(head: sqlite3.Row | None, last_seq: int, last_hash: str) -> list[ChainProblem]:
    if head is None:
        if last_seq == 0:
            return []
        return [ChainProblem(last_seq, "head_mismatch", "the chain head record is missing")]
    head_seq, head_hash = head[0], head[1]
    if head_seq == last_seq and head_hash == last_hash:
        return []
    if isinstance(head_seq, int) and head_seq > last_seq:
        detail = f"the head records seq {head_seq} but the log ends at {last_seq}: rows deleted"
    elif isinstance(head_seq, int) and head_seq < last_seq:
        detail = (
            f"the log continues past the head (seq {head_seq}) to {last_seq}: rows added "
            "outside the audit log"
        )
    else:
        detail = f"the head's hash does not match the last row (seq {last_seq})"
    return [ChainProblem(head_seq, "head_mismatch", detail)]


def _entry(row: sqlite3.Row) -> AuditEntry:
    return AuditEntry(
        seq=row["seq"],
        ts=row["ts"],
        run_id=row["run_id"],
        agent=row["agent"],
        model=row["model"],
        tool=row["tool"],
        args=_loads(row["args"]),
        state_before=_loads(row["state_before"]),
        state_after=_loads(row["state_after"]),
        decision_note=row["decision_note"],
        result=_loads(row["result"]),
        prev_hash=row["prev_hash"],
        hash=row["hash"],
    )
