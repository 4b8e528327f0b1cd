"""Device runs: one row per ``start_run``, found again by ``run_key``."""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any


class DeviceRuns:
    """The ``device_runs`` table of one instrument."""

    def __init__(self, conn: sqlite3.Connection, instrument: str) -> None:
        self.conn = conn
        self.instrument = instrument

    def create(
        self,
        run_id: str,
        *,
        run_key: str | None,
        dry_run: bool,
        simulated: bool,
        protocol: dict[str, Any],
        steps_total: int,
    ) -> None:
        now = time.time()
        self.conn.execute(
            "INSERT INTO device_runs (run_id, instrument, run_key, status, simulated, dry_run,"
            " protocol, protocol_name, steps_total, steps_done, created_at, updated_at)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                run_id,
                self.instrument,
                run_key,
                "pending",
                int(simulated),
                int(dry_run),
                json.dumps(protocol),
                protocol.get("name", "protocol"),
                steps_total,
                0,
                now,
                now,
            ),
        )

    def get(self, run_id: str) -> dict[str, Any] | None:
        row = self.conn.execute(
            "SELECT * FROM device_runs WHERE run_id=? AND instrument=?", (run_id, self.instrument)
        ).fetchone()
        return None if row is None else self._info(row)

    def by_key(self, run_key: str) -> dict[str, Any] | None:
        row = self.conn.execute(
            "SELECT * FROM device_runs WHERE run_key=? AND instrument=?",
            (run_key, self.instrument),
        ).fetchone()
        return None if row is None else self._info(row)

    def protocol(self, run_id: str) -> dict[str, Any]:
        row = self.conn.execute(
            "SELECT protocol FROM device_runs WHERE run_id=?", (run_id,)
        ).fetchone()
        return dict(json.loads(row["protocol"]))

    def update(self, run_id: str, **fields: Any) -> None:
        if "error" in fields and fields["error"] is not None:
            fields["error"] = json.dumps(fields["error"])
        fields["updated_at"] = time.time()
        cols = ", ".join(f"{k}=?" for k in fields)
        self.conn.execute(
            f"UPDATE device_runs SET {cols} WHERE run_id=?", (*fields.values(), run_id)
        )

    def unfinished(self) -> list[str]:
        rows = self.conn.execute(
            "SELECT run_id FROM device_runs WHERE instrument=? AND status IN ('pending','running')",
            (self.instrument,),
        ).fetchall()
        return [r["run_id"] for r in rows]

    @staticmethod
    def _info(row: sqlite3.Row) -> dict[str, Any]:
        return {
            "run_id": row["run_id"],
            "instrument": row["instrument"],
            "status": row["status"],
            "simulated": bool(row["simulated"]),
            "dry_run": bool(row["dry_run"]),
            "run_key": row["run_key"],
            "protocol_name": row["protocol_name"],
            "steps_total": row["steps_total"],
            "steps_done": row["steps_done"],
            "error": json.loads(row["error"]) if row["error"] else None,
            "created_at": row["created_at"],
            "updated_at": row["updated_at"],
        }
