"""What every part of the simulated world shares: its refusal and its transaction."""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any


class PhysicalError(Exception):
    """What a real instrument would detect and report (no tip, liquid level not found)."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind


class Tx:
    """One write transaction (BEGIN IMMEDIATE); a PhysicalError keeps what it recorded."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, *_: object) -> None:
        # A PhysicalError is the instrument refusing before it moved anything: keep the
        # incident it recorded (e.g. dry_aspiration_prevented). Anything else rolls back.
        refused = isinstance(exc_type, type) and issubclass(exc_type, PhysicalError)
        self.conn.execute("ROLLBACK" if exc_type and not refused else "COMMIT")


class WorldRecords:
    """The world's connection, its transactions and what it records of every physical act."""

    conn: sqlite3.Connection

    def _tx(self) -> Tx:
        return Tx(self.conn)

    def _log(
        self,
        instrument: str,
        op: str,
        channel: int,
        labware: str | None,
        well: str | None,
        volume: float,
    ) -> None:
        self.conn.execute(
            "INSERT INTO physical_ops (instrument, op, channel, labware, well, volume, ts)"
            " VALUES (?,?,?,?,?,?,?)",
            (instrument, op, channel, labware, well, volume, time.time()),
        )

    def incident(self, instrument: str, kind: str, data: dict[str, Any]) -> None:
        self.conn.execute(
            "INSERT INTO incidents (instrument, kind, data, ts) VALUES (?,?,?,?)",
            (instrument, kind, json.dumps(data), time.time()),
        )
