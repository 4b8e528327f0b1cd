"""The simulated world: physical ground truth of a simulated lab, in SQLite.

Shared by every simulated instrument of one lab (and by tests and evals, which judge outcomes
from it). Simulated backends act on it; fault plans perturb it. A server's twin never reads
it directly: the twin is belief and must discover faults by reading back through its backend.
Volumes in microlitres.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

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
"""


class PhysicalError(Exception):
    """What a real instrument would detect and report (no tip, liquid level not found)."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind


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


class SimWorld:
    """Ground truth for one lab (one SQLite file)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(
            self.path, isolation_level=None, check_same_thread=False, timeout=30
        )
        self.conn.row_factory = sqlite3.Row
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA busy_timeout=30000")
        self.conn.executescript(_TABLES)

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

    class _Tx:
        def __init__(self, conn: sqlite3.Connection) -> None:
            self.conn = conn

        def __enter__(self) -> None:
            self.conn.execute("BEGIN IMMEDIATE")

        def __exit__(self, exc_type: object, *_: object) -> None:
            # A PhysicalError is the instrument refusing before it moved anything: keep the
            # incident it recorded (e.g. dry_aspiration_prevented). Anything else rolls back.
            refused = isinstance(exc_type, type) and issubclass(exc_type, PhysicalError)
            self.conn.execute("ROLLBACK" if exc_type and not refused else "COMMIT")

    def _tx(self) -> SimWorld._Tx:
        return SimWorld._Tx(self.conn)

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

    # ------------------------------------------------------------------ faults
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

    # ------------------------------------------------------------------ plates & status
    def place_plate(self, labware: str, location: str) -> bool:
        """Seed a plate's location once (a plate already known stays where it is)."""
        cur = self.conn.execute(
            "INSERT OR IGNORE INTO plates (labware, location) VALUES (?,?)", (labware, location)
        )
        return cur.rowcount > 0

    def location_of(self, labware: str) -> str | None:
        """Where a plate really is (None: unknown to the world, or held by a gripper)."""
        row = self.conn.execute(
            "SELECT location FROM plates WHERE labware=?", (labware,)
        ).fetchone()
        return None if row is None else row["location"]

    def plate_at(self, location: str) -> str | None:
        row = self.conn.execute(
            "SELECT labware FROM plates WHERE location=?", (location,)
        ).fetchone()
        return None if row is None else row["labware"]

    def plates(self) -> dict[str, str | None]:
        rows = self.conn.execute("SELECT labware, location FROM plates ORDER BY labware")
        return {r["labware"]: r["location"] for r in rows.fetchall()}

    def take_plate(self, labware: str, location: str, holder: str) -> None:
        """A gripper lifts the plate at ``location``; it is then at ``holder`` (arm1:gripper)."""
        with self._tx():
            if self.plate_at(location) != labware:
                raise PhysicalError(
                    "empty_grasp", f"nothing to grip: {labware} is not at {location}"
                )
            self.conn.execute("UPDATE plates SET location=? WHERE labware=?", (holder, labware))
            self._log(holder.split(":", 1)[0], "pick_plate", 0, labware, location, 0.0)

    def put_plate(self, labware: str, holder: str, location: str) -> None:
        """A gripper sets down the plate it holds at ``location`` (which must be free)."""
        with self._tx():
            if self.location_of(labware) != holder:
                raise PhysicalError("not_held", f"{holder} does not hold {labware}")
            occupant = self.plate_at(location)
            if occupant is not None:
                self.incident(
                    holder.split(":", 1)[0],
                    "collision",
                    {"labware": labware, "location": location, "occupant": occupant},
                )
                raise PhysicalError("occupied", f"{location} is occupied by {occupant}")
            self.conn.execute("UPDATE plates SET location=? WHERE labware=?", (location, labware))
            self._log(holder.split(":", 1)[0], "place_plate", 0, labware, location, 0.0)

    def set_status(self, instrument: str, **values: Any) -> None:
        """Physical status of an instrument (drawer open, plate locked, temperature...)."""
        self.conn.executemany(
            "INSERT OR REPLACE INTO status (instrument, key, value) VALUES (?,?,?)",
            [(instrument, k, json.dumps(v)) for k, v in values.items()],
        )

    def status(self, instrument: str) -> dict[str, Any]:
        rows = self.conn.execute(
            "SELECT key, value FROM status WHERE instrument=?", (instrument,)
        ).fetchall()
        return {r["key"]: json.loads(r["value"]) for r in rows}
