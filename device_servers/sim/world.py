"""The simulated world: physical ground truth of a simulated lab, in SQLite.

Shared by every simulated instrument of one lab (and by tests and evals, which judge outcomes
from it). Simulated backends act on it; fault plans perturb it. A server's twin never reads
it directly: the twin is belief and must discover faults by reading back through its backend.
Volumes in microlitres.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, cast

from device_servers.sim._fault_plan import FaultPlan
from device_servers.sim._physics import PhysicalError
from device_servers.sim._plates import PlatesAndStatus
from state_store.db import open_sqlite

_EPS = 1e-6

_TABLES = """
CREATE TABLE IF NOT EXISTS wells (labware TEXT, well TEXT, volume REAL, max_volume REAL,
  contents TEXT, PRIMARY KEY (labware, well));
CREATE TABLE IF NOT EXISTS tips (rack TEXT, spot TEXT, present INTEGER, max_volume REAL,
  PRIMARY KEY (rack, spot));
CREATE TABLE IF NOT EXISTS channels (instrument TEXT, idx INTEGER, tip TEXT, contents TEXT,
  PRIMARY KEY (instrument, idx));
CREATE TABLE IF NOT EXISTS faults (id INTEGER PRIMARY KEY AUTOINCREMENT, instrument TEXT,
  kind TEXT, at_op INTEGER, match TEXT, times INTEGER, params TEXT, fired INTEGER DEFAULT 0);
CREATE TABLE IF NOT EXISTS op_counts (instrument TEXT PRIMARY KEY, n INTEGER);
CREATE TABLE IF NOT EXISTS incidents (id INTEGER PRIMARY KEY AUTOINCREMENT, instrument TEXT,
  kind TEXT, data TEXT, ts REAL);
CREATE TABLE IF NOT EXISTS physical_ops (id INTEGER PRIMARY KEY AUTOINCREMENT,
  instrument TEXT, op TEXT, channel INTEGER, labware TEXT, well TEXT, volume REAL, ts REAL);
CREATE TABLE IF NOT EXISTS seeded (instrument TEXT PRIMARY KEY, ts REAL);
CREATE TABLE IF NOT EXISTS plates (labware TEXT PRIMARY KEY, location TEXT UNIQUE);
CREATE TABLE IF NOT EXISTS status (instrument TEXT, key TEXT, value TEXT,
  PRIMARY KEY (instrument, key));
CREATE TABLE IF NOT EXISTS stations (place TEXT PRIMARY KEY, instrument TEXT, station TEXT);
"""


def _take(contents: dict[str, float], volume: float) -> dict[str, float]:
    total = sum(contents.values())
    if total <= 0:
        return {}
    share = min(volume / total, 1.0)
    removed = {k: v * share for k, v in contents.items()}
    for k in list(contents):
        contents[k] -= removed[k]
        if contents[k] <= _EPS:
            del contents[k]
    return removed


def _pour(contents: dict[str, float], added: dict[str, float]) -> None:
    for k, v in added.items():
        contents[k] = contents.get(k, 0.0) + v


class SimWorld(FaultPlan, PlatesAndStatus):
    """Ground truth for one lab (one SQLite file)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # NORMAL: in WAL a commit survives the crash of any process (what the crash tests do
        # to servers); only a power cut may lose the last ones. The instruments' ledgers, which
        # at-most-once rests on, stay FULL.
        self.conn = open_sqlite(
            self.path, lambda conn: conn.executescript(_TABLES), synchronous="NORMAL"
        )

    def close(self) -> None:
        self.conn.close()

    # ------------------------------------------------------------------ seeding
    def is_seeded(self, instrument: str) -> bool:
        return (
            self.conn.execute("SELECT 1 FROM seeded WHERE instrument=?", (instrument,)).fetchone()
            is not None
        )

    def seed(
        self,
        instrument: str,
        catalogue: dict[str, Any],
        liquids: list[dict[str, Any]],
        num_channels: int,
    ) -> bool:
        """Lay out labware, tips and liquids once; a seeded instrument is left as it is."""
        with self._tx():
            if self.is_seeded(instrument):
                return False
            for lw_id, item in catalogue.items():
                if item["kind"] == "tip_rack":
                    self.conn.executemany(
                        "INSERT OR REPLACE INTO tips VALUES (?,?,?,?)",
                        [(lw_id, s, 1, item["tip_max_volume"]) for s in item["names"]],
                    )
                else:
                    self.conn.executemany(
                        "INSERT OR REPLACE INTO wells VALUES (?,?,?,?,?)",
                        [(lw_id, n, 0.0, item["max_volumes"][n], "{}") for n in item["names"]],
                    )
            for liq in liquids:
                for well in liq["wells"]:
                    self.conn.execute(
                        "UPDATE wells SET volume=?, contents=? WHERE labware=? AND well=?",
                        (
                            liq["volume_ul"],
                            json.dumps({liq["liquid"]: liq["volume_ul"]}),
                            liq["labware"],
                            well,
                        ),
                    )
            self.conn.executemany(
                "INSERT OR REPLACE INTO channels VALUES (?,?,?,?)",
                [(instrument, i, None, "{}") for i in range(num_channels)],
            )
            self.conn.execute("INSERT INTO seeded VALUES (?,?)", (instrument, time.time()))
        return True

    # ------------------------------------------------------------------ reading
    def well(self, labware: str, well: str) -> dict[str, Any]:
        row = self.conn.execute(
            "SELECT * FROM wells WHERE labware=? AND well=?", (labware, well)
        ).fetchone()
        if row is None:
            raise KeyError(f"{labware}:{well}")
        return {
            "volume_ul": row["volume"],
            "max_volume_ul": row["max_volume"],
            "contents": json.loads(row["contents"]),
        }

    def wells(self, labware: str) -> dict[str, dict[str, Any]]:
        rows = self.conn.execute("SELECT * FROM wells WHERE labware=?", (labware,)).fetchall()
        return {
            r["well"]: {
                "volume_ul": r["volume"],
                "max_volume_ul": r["max_volume"],
                "contents": json.loads(r["contents"]),
            }
            for r in rows
        }

    def tips(self, rack: str) -> dict[str, bool]:
        rows = self.conn.execute("SELECT spot, present FROM tips WHERE rack=?", (rack,)).fetchall()
        return {r["spot"]: bool(r["present"]) for r in rows}

    def channel(self, instrument: str, idx: int) -> dict[str, Any]:
        row = self.conn.execute(
            "SELECT * FROM channels WHERE instrument=? AND idx=?", (instrument, idx)
        ).fetchone()
        if row is None:
            return {"tip": None, "contents": {}}
        return {
            "tip": json.loads(row["tip"]) if row["tip"] else None,
            "contents": json.loads(row["contents"]),
        }

    def channels(self, instrument: str) -> list[dict[str, Any]]:
        rows = self.conn.execute(
            "SELECT idx FROM channels WHERE instrument=? ORDER BY idx", (instrument,)
        ).fetchall()
        return [self.channel(instrument, r["idx"]) for r in rows]

    def incidents(self, instrument: str | None = None) -> list[dict[str, Any]]:
        sql, params = "SELECT * FROM incidents", cast(tuple[Any, ...], ())
        if instrument:
            sql, params = sql + " WHERE instrument=?", (instrument,)
        return [
            {"instrument": r["instrument"], "kind": r["kind"], "data": json.loads(r["data"])}
            for r in self.conn.execute(sql, params).fetchall()
        ]

    def physical_ops(self, instrument: str | None = None) -> list[dict[str, Any]]:
        sql, params = "SELECT * FROM physical_ops", cast(tuple[Any, ...], ())
        if instrument:
            sql, params = sql + " WHERE instrument=?", (instrument,)
        return [dict(r) for r in self.conn.execute(sql + " ORDER BY id", params).fetchall()]

    # ------------------------------------------------------------------ physics
    def _set_channel(
        self, instrument: str, idx: int, tip: dict[str, Any] | None, contents: dict[str, float]
    ) -> None:
        self.conn.execute(
            "INSERT OR REPLACE INTO channels VALUES (?,?,?,?)",
            (instrument, idx, json.dumps(tip) if tip else None, json.dumps(contents)),
        )

    def pick(self, instrument: str, ch: int, rack: str, spot: str) -> None:
        with self._tx():
            chan = self.channel(instrument, ch)
            if chan["tip"] is not None:
                raise PhysicalError("tip_present", f"channel {ch} already carries a tip")
            row = self.conn.execute(
                "SELECT * FROM tips WHERE rack=? AND spot=?", (rack, spot)
            ).fetchone()
            if row is None or not row["present"]:
                raise PhysicalError("no_tip", f"no tip detected at {rack}:{spot}")
            self.conn.execute("UPDATE tips SET present=0 WHERE rack=? AND spot=?", (rack, spot))
            self._set_channel(
                instrument, ch, {"rack": rack, "spot": spot, "max_volume": row["max_volume"]}, {}
            )
            self._log(instrument, "pick", ch, rack, spot, 0.0)

    def drop(self, instrument: str, ch: int, rack: str | None, spot: str | None) -> None:
        with self._tx():
            chan = self.channel(instrument, ch)
            if chan["tip"] is None:
                raise PhysicalError("no_tip", f"channel {ch} carries no tip")
            if rack is not None:
                self.conn.execute("UPDATE tips SET present=1 WHERE rack=? AND spot=?", (rack, spot))
            self._set_channel(instrument, ch, None, {})
            self._log(instrument, "drop", ch, rack, spot, 0.0)

    def aspirate(self, instrument: str, ch: int, labware: str, well: str, volume: float) -> None:
        with self._tx():
            chan = self.channel(instrument, ch)
            if chan["tip"] is None:
                self.incident(
                    instrument,
                    "aspirate_without_tip",
                    {"channel": ch, "labware": labware, "well": well},
                )
                raise PhysicalError("no_tip", f"channel {ch} carries no tip")
            state = self.well(labware, well)
            if state["volume_ul"] + _EPS < volume:
                # Liquid-level detection finds too little liquid and aborts before aspirating.
                self.incident(
                    instrument,
                    "dry_aspiration_prevented",
                    {
                        "labware": labware,
                        "well": well,
                        "asked_ul": volume,
                        "present_ul": state["volume_ul"],
                    },
                )
                raise PhysicalError(
                    "too_little_liquid",
                    f"liquid level detection: {labware}:{well} holds {state['volume_ul']:.1f} uL,"
                    f" {volume} uL asked",
                )
            contents = state["contents"]
            moved = _take(contents, volume)
            self.conn.execute(
                "UPDATE wells SET volume=?, contents=? WHERE labware=? AND well=?",
                (max(state["volume_ul"] - volume, 0.0), json.dumps(contents), labware, well),
            )
            tip_contents = chan["contents"]
            _pour(tip_contents, moved)
            self._set_channel(instrument, ch, chan["tip"], tip_contents)
            self._log(instrument, "aspirate", ch, labware, well, volume)

    def dispense(self, instrument: str, ch: int, labware: str, well: str, volume: float) -> None:
        with self._tx():
            chan = self.channel(instrument, ch)
            if chan["tip"] is None:
                raise PhysicalError("no_tip", f"channel {ch} carries no tip")
            tip_contents = chan["contents"]
            moved = _take(tip_contents, volume)
            state = self.well(labware, well)
            contents = state["contents"]
            _pour(contents, moved)
            new_volume = state["volume_ul"] + sum(moved.values())
            if new_volume > state["max_volume_ul"] + _EPS:
                self.incident(
                    instrument,
                    "overflow",
                    {
                        "labware": labware,
                        "well": well,
                        "volume_ul": new_volume,
                        "max_volume_ul": state["max_volume_ul"],
                    },
                )
            self.conn.execute(
                "UPDATE wells SET volume=?, contents=? WHERE labware=? AND well=?",
                (new_volume, json.dumps(contents), labware, well),
            )
            self._set_channel(instrument, ch, chan["tip"], tip_contents)
            self._log(instrument, "dispense", ch, labware, well, volume)

    def set_well(
        self, labware: str, well: str, volume: float, contents: dict[str, float] | None = None
    ) -> None:
        """Change what is really in a well (fault plans and test setup only)."""
        state = self.well(labware, well)
        if contents is None:
            old = state["contents"]
            total = sum(old.values()) or 1.0
            contents = {k: v * volume / total for k, v in old.items()}
        self.conn.execute(
            "UPDATE wells SET volume=?, contents=? WHERE labware=? AND well=?",
            (volume, json.dumps(contents), labware, well),
        )

    def remove_tip(self, rack: str, spot: str) -> None:
        """Take a tip out of a rack by hand (test setup only)."""
        self.conn.execute("UPDATE tips SET present=0 WHERE rack=? AND spot=?", (rack, spot))
