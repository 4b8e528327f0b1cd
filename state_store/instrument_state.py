"""The persisted belief of each instrument: its twin snapshot, staleness and e-stop latch."""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any


class InstrumentState:
    def __init__(self, conn: sqlite3.Connection, instrument: str) -> None:
        self.conn = conn
        self.instrument = instrument

    def load(self) -> dict[str, Any] | None:
        row = self.conn.execute(
            "SELECT * FROM instrument_state WHERE instrument=?", (self.instrument,)
        ).fetchone()
        if row is None:
            return None
        return {
            "twin": json.loads(row["twin"]),
            "stale_reason": row["stale_reason"],
            "estop": bool(row["estop"]),
            # Which e-stop is latched (0: none): an approved reset clears only that one.
            "estop_latch": int(row["estop"] or 0),
        }

    def save(self, twin: dict[str, Any], stale_reason: str | None, estop: int) -> None:
        """``estop``: the latched e-stop's number, 0 when none is latched."""
        self.conn.execute(
            "INSERT OR REPLACE INTO instrument_state (instrument, twin, stale_reason, estop,"
            " updated_at) VALUES (?,?,?,?,?)",
            (self.instrument, json.dumps(twin), stale_reason, int(estop), time.time()),
        )
