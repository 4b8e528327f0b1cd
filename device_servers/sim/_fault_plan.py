"""The simulated world's fault plan: faults armed per instrument, fired on counted operations."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from device_servers.sim._physics import WorldRecords


class FaultPlan(WorldRecords):
    """Part of :class:`~device_servers.sim.world.SimWorld` (its ``faults`` and ``op_counts``)."""

    def add_fault(self, instrument: str, spec: dict[str, Any]) -> int:
        cur = self.conn.execute(
            "INSERT INTO faults (instrument, kind, at_op, match, times, params) VALUES"
            " (?,?,?,?,?,?)",
            (
                instrument,
                spec["kind"],
                spec.get("at_op"),
                json.dumps(spec.get("match") or {}),
                spec.get("times", 1),
                json.dumps(spec.get("params") or {}),
            ),
        )
        return int(cur.lastrowid or 0)

    def clear_faults(self, instrument: str | None = None) -> None:
        if instrument:
            self.conn.execute("DELETE FROM faults WHERE instrument=?", (instrument,))
        else:
            self.conn.execute("DELETE FROM faults")

    def next_fault(
        self,
        instrument: str,
        target: dict[str, Any],
        applies: Callable[[str], bool] | None = None,
    ) -> dict[str, Any] | None:
        """Count one operation and return the first fault that fires on it, if any.

        ``applies(kind)``: whether a fault of that kind can happen on this operation (an empty
        grasp only on a pick); one that cannot is left for a later operation, not used up.
        """
        with self._tx():
            row = self.conn.execute(
                "SELECT n FROM op_counts WHERE instrument=?", (instrument,)
            ).fetchone()
            n = (row["n"] if row else 0) + 1
            self.conn.execute("INSERT OR REPLACE INTO op_counts VALUES (?,?)", (instrument, n))
            rows = self.conn.execute(
                "SELECT * FROM faults WHERE instrument=? AND (times<0 OR fired<times) ORDER BY id",
                (instrument,),
            ).fetchall()
            for f in rows:
                if f["at_op"] is not None and f["at_op"] != n:
                    continue
                if applies is not None and not applies(f["kind"]):
                    continue
                match = json.loads(f["match"])
                if any(str(target.get(k)) != str(v) for k, v in match.items()):
                    continue
                self.conn.execute("UPDATE faults SET fired=fired+1 WHERE id=?", (f["id"],))
                return {
                    "id": f["id"],
                    "kind": f["kind"],
                    "op_number": n,
                    "params": json.loads(f["params"]),
                }
        return None
