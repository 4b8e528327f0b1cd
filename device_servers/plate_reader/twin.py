"""The plate reader's digital twin: what the server believes about its drawer and plate.

Belief is the drawer (open or closed), the plate in the reader and the last readings of each
plate. The plate is known only from the reader's own sensor (read back after ``close_drawer``
or ``read_back``) or from the caller's ``expect_plate``: a drawer that was open may have been
emptied or filled by the plate mover, so closing it without ``expect_plate`` makes the plate
unknown until the read-back. State changes only through :meth:`PlateReaderTwin.apply` and
:meth:`PlateReaderTwin.adopt` (what the instrument reports).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from device_servers import wells as wellnames
from device_servers.errors import Code, ValidationFailed
from device_servers.kind import TwinBase, deviation, unknown_labware
from device_servers.plate_reader.commands import (
    CloseDrawer,
    OpenDrawer,
    Primitive,
    ReadAbsorbance,
    ReaderCommand,
    ReadFluorescence,
    ReadLuminescence,
)

MAX_READINGS_PER_PLATE = 8


@dataclass(frozen=True, slots=True)
class PlateGeometry:
    """A plate the reader can hold: its PyLabRobot type and well grid."""

    type: str
    rows: int
    cols: int
    names: tuple[str, ...]


def reading_key(reading: dict[str, Any]) -> str:
    """'absorbance@600', 'fluorescence@485/528', 'luminescence'."""
    mode = reading["mode"]
    if mode == "absorbance":
        return f"absorbance@{reading['wavelength_nm']}"
    if mode == "fluorescence":
        return f"fluorescence@{reading['excitation_nm']}/{reading['emission_nm']}"
    return str(mode)


class PlateReaderTwin(TwinBase):
    """Belief state of one plate reader."""

    def __init__(
        self,
        instrument: str,
        plates: dict[str, PlateGeometry],
        wavelength_range_nm: tuple[int, int],
        drawer_open: bool = False,
        plate: str | None = None,
        plate_known: bool = False,
        readings: dict[str, dict[str, dict[str, Any]]] | None = None,
    ) -> None:
        self.instrument = instrument
        self.plates = plates
        self.wavelength_range_nm = wavelength_range_nm
        self.drawer_open = drawer_open
        self.plate = plate
        self.plate_known = plate_known
        self.readings: dict[str, dict[str, dict[str, Any]]] = readings or {}

    @property
    def drawer(self) -> str:
        return f"{self.instrument}:drawer"

    # ------------------------------------------------------------------ copies & snapshots
    def clone(self) -> PlateReaderTwin:
        return PlateReaderTwin(
            self.instrument,
            self.plates,
            self.wavelength_range_nm,
            self.drawer_open,
            self.plate,
            self.plate_known,
            {p: dict(r) for p, r in self.readings.items()},
        )

    def describe(self, plate: str, full: bool = True) -> dict[str, Any] | None:
        """The plate as the reader knows it; None if it is not in it and was never read."""
        in_reader = self.plate_known and self.plate == plate
        if not in_reader and plate not in self.readings:
            return None
        geo = self.plates.get(plate)
        readings = self.readings.get(plate, {})
        return {
            "kind": "plate",
            "type": geo.type if geo else None,
            "rows": geo.rows if geo else None,
            "cols": geo.cols if geo else None,
            "in_reader": in_reader,
            "readings": (
                dict(readings)
                if full
                else {
                    k: {"taken_at": r.get("taken_at"), "wells": len(r["values"])}
                    for k, r in readings.items()
                }
            ),
        }

    def snapshot(self, full: bool = False) -> dict[str, Any]:
        """Structured state. ``full`` carries every reading's values (used for persistence)."""
        ids = set(self.readings)
        if self.plate_known and self.plate:
            ids.add(self.plate)
        labware = {p: self.describe(p, full=False) for p in sorted(ids)}
        snap: dict[str, Any] = {
            "drawer": self.drawer,
            "drawer_open": self.drawer_open,
            "plate_in_reader": self.plate if self.plate_known else None,
            "plate_known": self.plate_known,
            "wavelength_range_nm": list(self.wavelength_range_nm),
            "readable_plates": sorted(self.plates),
            "labware": labware,
        }
        if full:
            snap["plate"] = self.plate
            snap["readings"] = {p: dict(r) for p, r in self.readings.items()}
        return snap

    @classmethod
    def from_snapshot(
        cls,
        snap: dict[str, Any],
        instrument: str,
        plates: dict[str, PlateGeometry],
        wavelength_range_nm: tuple[int, int],
    ) -> PlateReaderTwin:
        """Rebuild a twin persisted with ``snapshot(full=True)`` (geometry from the config)."""
        return cls(
            instrument,
            plates,
            wavelength_range_nm,
            bool(snap.get("drawer_open", False)),
            snap.get("plate"),
            bool(snap.get("plate_known", False)),
            {p: dict(r) for p, r in snap.get("readings", {}).items()},
        )

    # ------------------------------------------------------------------ validation
    def _geometry(self, plate: str) -> PlateGeometry:
        geo = self.plates.get(plate)
        if geo is None:
            raise unknown_labware(
                f"{plate!r} is not a plate this reader can read",
                self.plates,
                "use one of the lab's plates",
            )
        return geo

    def _wavelength(self, what: str, value: int) -> None:
        low, high = self.wavelength_range_nm
        if not low <= value <= high:
            raise ValidationFailed(
                Code.OUT_OF_RANGE,
                f"{what}={value} nm is outside the reader's range {low}-{high} nm",
                f"choose {what} between {low} and {high} nm",
            )

    def _wells(self, plate: str, geo: PlateGeometry, wells: list[str] | None) -> tuple[str, ...]:
        if wells is None:
            return geo.names
        out: dict[str, None] = {}
        for selection in wells:
            try:
                names = wellnames.expand(selection, geo.rows, geo.cols)
            except wellnames.WellRangeError as exc:
                raise ValidationFailed(
                    Code.UNKNOWN_WELL,
                    f"{plate}: {exc}",
                    f"{plate} is a {geo.rows}x{geo.cols} plate ({geo.type}): use wells "
                    f"A1 to {wellnames.row_letter(geo.rows - 1)}{geo.cols}",
                ) from exc
            out.update(dict.fromkeys(names))
        return tuple(out)

    def _in_reader(self, plate: str) -> None:
        if self.drawer_open:
            raise ValidationFailed(
                Code.PRECONDITION_FAILED,
                f"the drawer of {self.instrument} is open: nothing can be read",
                "close_drawer first (with the plate on the drawer), then read",
            )
        if not self.plate_known:
            raise ValidationFailed(
                Code.UNKNOWN_LABWARE,
                f"{self.instrument} does not know which plate is in it",
                f"read_back (or close_drawer with expect_plate='{plate}') so the reader "
                f"detects its plate; if {plate} is elsewhere, move it to {self.drawer} with the "
                "plate mover first",
            )
        if self.plate != plate:
            now = f"{self.plate} is" if self.plate else "no plate is"
            raise ValidationFailed(
                Code.UNKNOWN_LABWARE,
                f"{plate} is not in {self.instrument} ({now} in it)",
                f"open_drawer, move {plate} to {self.drawer} with the plate mover"
                + (f" (after taking {self.plate} out)" if self.plate else "")
                + ", then close_drawer",
            )

    # ------------------------------------------------------------------ commands
    def expand(self, cmd: ReaderCommand) -> Iterator[Primitive]:
        if isinstance(cmd, OpenDrawer):
            yield Primitive("open_drawer")
        elif isinstance(cmd, CloseDrawer):
            yield Primitive("close_drawer", plate=cmd.expect_plate)
        elif isinstance(cmd, ReadAbsorbance):
            geo = self._geometry(cmd.plate)
            self._wavelength("wavelength_nm", cmd.wavelength_nm)
            wells = self._wells(cmd.plate, geo, cmd.wells)
            yield Primitive("absorbance", cmd.plate, wells, wavelength_nm=cmd.wavelength_nm)
        elif isinstance(cmd, ReadFluorescence):
            geo = self._geometry(cmd.plate)
            self._wavelength("excitation_nm", cmd.excitation_nm)
            self._wavelength("emission_nm", cmd.emission_nm)
            wells = self._wells(cmd.plate, geo, cmd.wells)
            yield Primitive(
                "fluorescence",
                cmd.plate,
                wells,
                excitation_nm=cmd.excitation_nm,
                emission_nm=cmd.emission_nm,
            )
        elif isinstance(cmd, ReadLuminescence):
            geo = self._geometry(cmd.plate)
            yield Primitive("luminescence", cmd.plate, self._wells(cmd.plate, geo, cmd.wells))
        else:
            raise ValidationFailed(Code.INVALID_ARGUMENT, f"unknown command {cmd!r}", "")

    def apply(self, p: Primitive) -> tuple[Primitive, list[dict[str, Any]]]:
        """Validate and apply one operation. Readings come from the instrument, not from here."""
        if p.op == "open_drawer":
            self.drawer_open = True
        elif p.op == "close_drawer":
            if p.plate is not None:
                self.plate, self.plate_known = p.plate, True
            elif self.drawer_open:
                # The drawer was out: the plate mover may have changed what is on it.
                self.plate, self.plate_known = None, False
            self.drawer_open = False
        else:
            assert p.plate is not None
            self._in_reader(p.plate)
        return p, []

    # ------------------------------------------------------------------ the lab around it
    def assume(self, plate: str, location: str | None) -> None:
        """Simulation: another instrument puts ``plate`` in the drawer or takes it out."""
        if location == self.drawer:
            self.plate, self.plate_known = plate, True
        elif self.plate == plate:
            self.plate, self.plate_known = None, True

    def facts(self) -> dict[str, Any]:
        """What the reader believes of itself, for ``require_state`` rules."""
        return {
            "drawer_open": self.drawer_open,
            "plate_in_reader": self.plate if self.plate_known else None,
            "plate_known": self.plate_known,
        }

    # ------------------------------------------------------------------ read back
    def remember(self, reading: dict[str, Any]) -> None:
        """Keep a reading the instrument reported (the latest per plate and mode)."""
        per_plate = self.readings.setdefault(reading["plate"], {})
        key = reading_key(reading)
        per_plate.pop(key, None)
        per_plate[key] = dict(reading)
        while len(per_plate) > MAX_READINGS_PER_PLATE:
            per_plate.pop(next(iter(per_plate)))

    def adopt(self, seen: dict[str, Any], touched: set[str] | None) -> list[dict[str, Any]]:
        """Adopt what the reader reports; a deviation only where belief was definite and wrong.

        The drawer and plate sensors are read whatever ``touched`` is: they are the reader.
        """
        deviations: list[dict[str, Any]] = []
        if "drawer_open" in seen:
            observed = bool(seen["drawer_open"])
            if self.drawer_open != observed:
                deviations.append(deviation("drawer_open", self.drawer_open, observed))
                self.drawer_open = observed
        if "plate" in seen:
            observed_plate = seen["plate"]
            if self.plate_known and self.plate != observed_plate:
                deviations.append(
                    deviation(
                        "plate_in_reader",
                        self.plate,
                        observed_plate,
                        labware=self.plate or observed_plate,
                    )
                )
            self.plate, self.plate_known = observed_plate, True
        reading = seen.get("last_reading")
        if reading is not None:
            self.remember(reading)
        return deviations
