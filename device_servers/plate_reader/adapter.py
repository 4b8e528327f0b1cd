"""The plate reader's adapter: the only module of this server (with the simulated backend)
that imports PyLabRobot.

It builds PyLabRobot's ``PlateReader`` frontend on the configured backend (simulated by
default; a hardware backend only when configured), puts a PyLabRobot plate resource of the
right type in it before each read, turns the backend's grids into ``{well: value}``, refuses
readings that cannot be physical (SENSOR_INVALID) and translates every exception into a
Labwright :class:`DeviceError` with a code, once, here.
"""

from __future__ import annotations

import math
import time
from typing import Any

import pylabrobot.resources as plr_resources
from pylabrobot.plate_reading import PlateReader
from pylabrobot.plate_reading.backend import PlateReaderBackend
from pylabrobot.plate_reading.standard import NoPlateError
from pylabrobot.resources import Plate

from device_servers.errors import BackendFailed, Code, ConfigurationError, DeviceError
from device_servers.kind import AdapterBase
from device_servers.plate_reader.commands import Primitive
from device_servers.plate_reader.config import PlateReaderConfig
from device_servers.plate_reader.sim_backend import MAX_OD, SimulatedPlateReaderBackend
from device_servers.sim.world import PhysicalError, SimWorld

FOCAL_HEIGHT_MM = 13.0  # a standard 96-well plate's focal height; the reader's default

# mode -> (unit, lowest, highest) a detector can physically report
PHYSICAL_RANGE = {
    "absorbance": ("OD", 0.0, MAX_OD),
    "fluorescence": ("RFU", 0.0, math.inf),
    "luminescence": ("RLU", 0.0, math.inf),
}


def _plate_resource(plate_id: str, type_name: str) -> Plate | None:
    """A PyLabRobot plate of ``type_name``; None for labware that is not a plate (tip racks)."""
    factory = getattr(plr_resources, type_name, None)
    if not callable(factory):
        raise ConfigurationError(
            f"plate_types.{plate_id}: {type_name!r} is not a PyLabRobot resource name"
        )
    try:
        resource = factory(name=plate_id)
    except Exception as exc:
        raise ConfigurationError(
            f"plate_types.{plate_id}: cannot build {type_name}: {exc}"
        ) from exc
    return resource if isinstance(resource, Plate) else None


def describe_plates(plate_types: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Geometry of every plate the reader may hold: type, rows, columns, well names."""
    out: dict[str, dict[str, Any]] = {}
    for plate_id, type_name in sorted(plate_types.items()):
        plate = _plate_resource(plate_id, type_name)
        if plate is None:
            continue
        out[plate_id] = {
            "type": type_name,
            "rows": plate.num_items_y,
            "cols": plate.num_items_x,
            "names": [plate.get_child_identifier(w) for w in plate.get_all_items()],
        }
    return out


def _where(prim: Primitive) -> str:
    return f"{prim.op} of {prim.plate}" if prim.is_read else prim.op


class PlateReaderAdapter(AdapterBase[PlateReaderConfig]):
    """PyLabRobot ``PlateReader`` on the configured backend."""

    backend_base = PlateReaderBackend
    simulated_class = SimulatedPlateReaderBackend
    subject = "the reader"

    def __init__(self, config: PlateReaderConfig, world: SimWorld | None) -> None:
        super().__init__(config, world)
        self.plates = describe_plates(config.plate_types)
        self._resources: dict[str, Plate] = {}
        self.last_reading: dict[str, Any] | None = None

    def make_frontend(self) -> PlateReader:
        size = {"size_x": 150.0, "size_y": 100.0, "size_z": 60.0}
        return PlateReader(name=self.config.id, backend=self.backend, **size)

    @property
    def reader(self) -> PlateReader:
        return self.frontend

    def where(self, prim: Primitive) -> str:
        return _where(prim)

    def translate_own(self, exc: BaseException, where: str) -> DeviceError | None:
        if isinstance(exc, PhysicalError):
            if exc.kind == "drawer_open":
                return BackendFailed(
                    Code.PRECONDITION_FAILED,
                    f"{where}: {exc}",
                    "read_back, then close_drawer before reading",
                )
            if exc.kind == "wrong_plate":
                return BackendFailed(
                    Code.UNKNOWN_LABWARE,
                    f"{where}: {exc}",
                    "read_back to see which plate is in the reader; move the plate to the drawer "
                    "with the plate mover and close_drawer",
                )
            return BackendFailed(
                Code.ADAPTER_FAULT, f"{where}: {exc}", "ask a person to check", defined=False
            )
        if isinstance(exc, NoPlateError):
            return BackendFailed(
                Code.UNKNOWN_LABWARE, f"{where}: {exc}", "close_drawer with a plate in the drawer"
            )
        return None

    # ------------------------------------------------------------------ commands
    async def call(self, prim: Primitive) -> list[dict[str, Any]] | None:
        """Perform one operation; a read returns its ``reading_taken`` event."""
        reading = await self._read(prim)
        if reading is None:
            return None
        self.last_reading = reading
        return [{"type": "reading_taken", "data": reading}]

    def _hold(self, plate_id: str | None) -> Plate | None:
        """Make the frontend hold the PyLabRobot plate ``plate_id`` (or none)."""
        for child in list(self.reader.children):
            if plate_id is None or child.name != plate_id:
                self.reader.unassign_child_resource(child)
        if plate_id is None or self.reader.children:
            return None if plate_id is None else self.reader.get_plate()
        resource = self._resources.get(plate_id)
        if resource is None:
            item = self.plates.get(plate_id)
            if item is None:
                return None
            resource = _plate_resource(plate_id, item["type"])
            assert resource is not None
            self._resources[plate_id] = resource
        self.reader.assign_child_resource(resource)
        return resource

    async def _read(self, prim: Primitive) -> dict[str, Any] | None:
        if prim.op == "open_drawer":
            await self.reader.open()
            return None
        if prim.op == "close_drawer":
            await self.reader.close()
            return None
        assert prim.plate is not None
        plate = self._hold(prim.plate)
        if plate is None:
            raise NoPlateError(f"{prim.plate} is not a plate this reader knows")
        wells = [plate.get_item(name) for name in prim.wells]
        extra: dict[str, Any]
        if prim.op == "absorbance":
            assert prim.wavelength_nm is not None
            results = await self.reader.read_absorbance(
                wavelength=prim.wavelength_nm, wells=wells, use_new_return_type=True
            )
            extra = {"wavelength_nm": prim.wavelength_nm}
        elif prim.op == "fluorescence":
            assert prim.excitation_nm is not None and prim.emission_nm is not None
            results = await self.reader.read_fluorescence(
                excitation_wavelength=prim.excitation_nm,
                emission_wavelength=prim.emission_nm,
                focal_height=FOCAL_HEIGHT_MM,
                wells=wells,
                use_new_return_type=True,
            )
            extra = {"excitation_nm": prim.excitation_nm, "emission_nm": prim.emission_nm}
        else:
            results = await self.reader.read_luminescence(
                focal_height=FOCAL_HEIGHT_MM, wells=wells, use_new_return_type=True
            )
            extra = {}
        values = self._values(prim, results, wells)
        unit = PHYSICAL_RANGE[prim.op][0]
        return {
            "plate": prim.plate,
            "mode": prim.op,
            **extra,
            "unit": unit,
            "values": values,
            "simulated": self.config.simulated,
            "taken_at": round(time.time(), 3),
        }

    def _values(
        self, prim: Primitive, results: list[dict[str, Any]], wells: list[Any]
    ) -> dict[str, float]:
        """``{well: value}`` in the order asked; SENSOR_INVALID for anything unphysical."""
        if not results or "data" not in results[0]:
            raise self._invalid(prim, "the reader returned no data")
        grid = results[0]["data"]
        unit, low, high = PHYSICAL_RANGE[prim.op]
        values: dict[str, float] = {}
        bad: list[str] = []
        for name, well in zip(prim.wells, wells, strict=True):
            try:
                value = grid[well.get_row()][well.get_column()]
            except (IndexError, TypeError):
                value = None
            if not isinstance(value, int | float) or not math.isfinite(value):
                bad.append(f"{name}={value}")
            elif not low <= value <= high:
                bad.append(f"{name}={value} {unit}")
            else:
                values[name] = float(value)
        if bad:
            shown = ", ".join(bad[:8]) + (f" and {len(bad) - 8} more" if len(bad) > 8 else "")
            raise self._invalid(prim, f"invalid values ({low}-{high} {unit} possible): {shown}")
        return values

    def _invalid(self, prim: Primitive, detail: str) -> DeviceError:
        return BackendFailed(
            Code.SENSOR_INVALID,
            f"{_where(prim)}: {detail}",
            "no values were kept: check the plate (seal, bubbles, volume), then read again; if it "
            "persists ask a person to check the reader",
        )

    # ------------------------------------------------------------------ read back
    async def observe(self, labware: set[str] | None = None) -> dict[str, Any] | None:
        """The drawer and the plate in it, from the reader's sensors; None if it cannot tell."""
        sim = self.sim
        if sim is None:
            # PyLabRobot's reader backends report neither drawer nor plate: a person confirms.
            return {"complete": False, "last_reading": self.last_reading}
        seen = sim.sense()
        return {**seen, "complete": True, "last_reading": self.last_reading}

    async def resync(self) -> dict[str, Any] | None:
        """Full read back, and the frontend's plate brought in line with it."""
        seen = await self.observe(None)
        if seen is not None and "plate" in seen:
            self._hold(seen["plate"])
        return seen
