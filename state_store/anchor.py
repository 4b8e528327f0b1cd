"""The audit chain's anchor outside the database: an append-only text file of (seq, hash).

Someone able to write the database can cut rows off the end, or edit a row and recompute
every hash after it and the head: the chain inside the file then verifies. The anchor is a
second, independent record: after every append the row's ``seq`` and ``hash`` go on one line
of ``<database>.audit-anchor`` (opened ``O_APPEND``; make it append-only with ``chattr +a``,
or ship it elsewhere, to raise the bar further). ``verify`` compares the two: a row whose
hash differs from its anchored hash, an anchor that reaches past the log's end, rows that
were never anchored.

Lines are ``<seq> <hash>`` with an optional mark. An append writes ``<seq> <hash> intent``
before its commit and ``<seq> <hash>`` after it, so a crash between the two still leaves the
row anchored, and an intent whose transaction never committed (its seq is written again by
the next append) vouches for nothing. ``adopted`` anchors the head of a log that existed
before its anchor. Appenders serialize on an ``flock`` of the anchor held across the database
transaction, and ``verify`` takes it too, so the log and the anchor are read at one moment.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

SUFFIX = ".audit-anchor"
MARKS = ("", "intent", "adopted")


@dataclass
class AnchorRead:
    """What the anchor file says, line by line."""

    exists: bool
    committed: dict[int, str] = field(default_factory=dict)  # seq -> hash, the first line
    intents: dict[int, set[str]] = field(default_factory=dict)
    adopted: dict[int, str] = field(default_factory=dict)
    unreadable: list[int] = field(default_factory=list)  # 1-based line numbers
    reused: list[int] = field(default_factory=list)  # seqs committed twice

    @property
    def last_seq(self) -> int:
        return max(self.committed, default=0)

    def vouches(self, seq: int, digest: str) -> bool:
        """The anchor holds this row: its committed line, its intent (a crash before the
        committed line was written) or the adopted head."""
        return (
            self.committed.get(seq) == digest
            or digest in self.intents.get(seq, ())
            or self.adopted.get(seq) == digest
        )


class Anchor:
    """The anchor file of one database (``None`` path: an in-memory database, no anchor)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path

    @classmethod
    def beside(cls, database: str) -> Anchor:
        return cls(Path(database + SUFFIX) if database else None)

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Exclusive across processes while a row is appended and anchored."""
        if self.path is None:
            yield
            return
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # releases the lock

    def is_empty(self) -> bool:
        """No anchor line yet (no file, or an empty one)."""
        return self.path is None or not self.path.exists() or self.path.stat().st_size == 0

    def record(self, entries: list[tuple[int, str, str]]) -> None:
        """Append ``(seq, hash, mark)`` lines in one write."""
        if self.path is None or not entries:
            return
        text = "".join(
            f"{seq} {digest}{' ' + mark if mark else ''}\n" for seq, digest, mark in entries
        )
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(fd, text.encode())
        finally:
            os.close(fd)

    def read(self) -> AnchorRead:
        if self.path is None or not self.path.exists():
            return AnchorRead(exists=False)
        found = AnchorRead(exists=True)
        for number, raw in enumerate(self.path.read_bytes().splitlines(), start=1):
            parts = raw.decode("ascii", "replace").split()
            ok = len(parts) in (2, 3) and parts[0].isdigit() and len(parts[1]) == 64
            mark = parts[2] if len(parts) == 3 else ""
            if not ok or mark not in MARKS:
                found.unreadable.append(number)
                continue
            seq, digest = int(parts[0]), parts[1]
            if mark == "intent":
                found.intents.setdefault(seq, set()).add(digest)
            elif mark == "adopted":
                found.adopted[seq] = digest
            elif seq in found.committed:
                # Appends after rows were cut off the end reuse their seqs: keep the first
                # line, the one written when the row was appended, and flag the reuse.
                if found.committed[seq] != digest:
                    found.reused.append(seq)
            else:
                found.committed[seq] = digest
        return found


def compare(read: AnchorRead, rows: dict[int, str]) -> list[tuple[int, str, str]]:
    """Where the log and its anchor disagree: ``(seq, kind, detail)``, at most one per kind.

    ``rows`` maps each row's seq to its stored hash. Rows missing in the middle are the
    chain's to report (a gap in seq); here: the first row that differs from its committed
    line (every row after an edited and re-hashed one differs too), committed lines past the
    log's end, rows the anchor does not hold (above the adopted head), unreadable lines.
    """
    found: list[tuple[int, str, str]] = []
    if read.unreadable:
        lines = read.unreadable[:5]
        found.append((lines[0], "anchor_unreadable", f"anchor lines {lines} are not <seq> <hash>"))
    held = read.committed.keys() | read.adopted.keys()
    differs = [q for q, h in sorted(rows.items()) if q in held and not read.vouches(q, h)]
    if differs:
        why = "differs from its anchored hash: the log was rewritten from here"
        found.append((differs[0], "anchor_mismatch", f"seq {differs[0]} {why}"))
    elif read.reused:
        why = "was anchored twice: rows were cut off the end and the seq written again"
        found.append((read.reused[0], "anchor_mismatch", f"seq {read.reused[0]} {why}"))
    last = max(rows, default=0)
    if read.last_seq > last:
        why = f"but the log ends at {last}: rows cut off the end"
        found.append(
            (read.last_seq, "anchor_ahead", f"the anchor records seq {read.last_seq} {why}")
        )
    floor = max(read.adopted, default=0)
    loose = [
        q for q, h in sorted(rows.items())
        if q > floor and q not in read.committed and not read.vouches(q, h)
    ]  # fmt: skip
    if loose:
        why = "no anchor file" if not read.exists else "written around the audit log"
        more = f" (and {len(loose) - 1} more)" if len(loose) > 1 else ""
        found.append((loose[0], "unanchored", f"seq {loose[0]}{more} never anchored ({why})"))
    return found
