"""Where the simulated world's plates are, and the physical status of its instruments."""

from __future__ import annotations

import json
from typing import Any

from device_servers.contract import Station, find_station, station_ready
from device_servers.sim._physics import PhysicalError, WorldRecords


class PlatesAndStatus(WorldRecords):
    """Part of :class:`~device_servers.sim.world.SimWorld` (its ``plates`` and ``status``)."""

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

    def set_stations(self, instrument: str, stations: list[Station]) -> None:
        """The places an instrument offers plates (its own description, published at start)."""
        self.conn.executemany(
            "INSERT OR REPLACE INTO stations (place, instrument, station) VALUES (?,?,?)",
            [(s.place, instrument, s.model_dump_json()) for s in stations],
        )

    def station_at(self, location: str) -> Station | None:
        rows = self.conn.execute("SELECT station FROM stations").fetchall()
        return find_station((Station.model_validate_json(r["station"]) for r in rows), location)

    def _passable(self, location: str, holder: str, plate: str) -> None:
        """A plate can only pass into or out of a place whose station's facts hold now (an
        open drawer, an unlocked holder, an open lid); a place nobody described is a bare
        table. Otherwise the arm hits it: an incident, and nothing moves."""
        station = self.station_at(location)
        if station is None or station_ready(station, self.status(station.instrument)):
            return
        self.incident(
            holder.split(":", 1)[0],
            "blocked_place",
            {"labware": plate, "location": location, "status": self.status(station.instrument)},
        )
        needs = ", ".join(f"{r.fact}={r.equals}" for r in station.requires)
        raise PhysicalError("blocked", f"{location} is not open to a plate (needs {needs})")

    def take_plate(self, labware: str, location: str, holder: str) -> None:
        """A gripper lifts the plate at ``location``; it is then at ``holder`` (arm1:gripper)."""
        with self._tx():
            self._passable(location, holder, labware)
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
            self._passable(location, holder, labware)
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
