"""The plate reader as a runtime driver: wiring only (commands, twin, adapter, geometry)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from device_servers.geometry_cache import cached_geometry
from device_servers.kind import DriverBase
from device_servers.plate_reader.commands import COMMANDS, Primitive
from device_servers.plate_reader.config import PlateReaderConfig
from device_servers.plate_reader.twin import PlateGeometry, PlateReaderTwin


def _build_geometry(config: PlateReaderConfig) -> dict[str, dict[str, Any]]:
    from device_servers.plate_reader.adapter import describe_plates  # PyLabRobot

    return describe_plates(config.plate_types)


def load_geometry(config: PlateReaderConfig, cache_dir: Path) -> dict[str, dict[str, Any]]:
    """Plate geometry from a JSON cache keyed by the plate types and PyLabRobot version."""
    return cached_geometry(
        cache_dir, f"plates-{config.id}", config.plate_types, lambda: _build_geometry(config)
    )


class PlateReaderDriver(DriverBase[PlateReaderConfig]):
    """One plate reader: a drawer at ``<id>:drawer`` and absorbance/fluorescence/luminescence.

    Its policy facts are its twin's (``PlateReaderTwin.facts``).
    """

    kind = "plate_reader"
    command_set = COMMANDS
    adapter_class = "device_servers.plate_reader.adapter:PlateReaderAdapter"
    op_seconds: ClassVar[Mapping[str, float]] = {
        "open_drawer": 3.0,
        "close_drawer": 3.0,
        "absorbance": 20.0,
        "fluorescence": 30.0,
        "luminescence": 40.0,
    }

    def wire(self) -> None:
        if self.world is None and self.cache_dir is not None:
            geometry = load_geometry(self.config, self.cache_dir)
        else:
            geometry = self.adapter.plates
        self.plates = {
            p: PlateGeometry(g["type"], g["rows"], g["cols"], tuple(g["names"]))
            for p, g in geometry.items()
        }

    def initial_twin(self) -> PlateReaderTwin:
        """Drawer closed; which plate is in it is unknown until the reader reports it."""
        return PlateReaderTwin(self.config.id, self.plates, self.config.wavelength_range_nm)

    def twin_from_snapshot(self, snap: dict[str, Any]) -> PlateReaderTwin:
        return PlateReaderTwin.from_snapshot(
            snap, self.config.id, self.plates, self.config.wavelength_range_nm
        )

    def touched(self, prims: list[Primitive]) -> set[str]:
        return {p.plate for p in prims if p.plate}

    def describe_labware(self, twin: Any, labware_id: str) -> dict[str, Any] | None:
        assert isinstance(twin, PlateReaderTwin)
        return twin.describe(labware_id)
