"""The plate reader as a runtime driver: commands, twin and adapter put together."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from device_servers.contract import PlateReaderConfig
from device_servers.geometry_cache import cached_geometry
from device_servers.plate_reader.commands import COMMANDS, Primitive, ReaderCommand
from device_servers.plate_reader.twin import PlateGeometry, PlateReaderTwin
from device_servers.sim.world import SimWorld

if TYPE_CHECKING:
    from device_servers.plate_reader.adapter import PlateReaderAdapter


def _build_geometry(config: PlateReaderConfig) -> dict[str, dict[str, Any]]:
    from device_servers.plate_reader.adapter import describe_plates  # PyLabRobot

    return describe_plates(config.plate_types)


def load_geometry(config: PlateReaderConfig, cache_dir: Path) -> dict[str, dict[str, Any]]:
    """Plate geometry from a JSON cache keyed by the plate types and PyLabRobot version."""
    return cached_geometry(
        cache_dir, f"plates-{config.id}", config.plate_types, lambda: _build_geometry(config)
    )


class PlateReaderDriver:
    """One plate reader: a drawer at ``<id>:drawer`` and absorbance/fluorescence/luminescence."""

    kind = "plate_reader"

    def __init__(
        self, config: PlateReaderConfig, world: SimWorld | None, cache_dir: Path | None = None
    ) -> None:
        self.commands: dict[str, type[BaseModel]] = dict(COMMANDS)
        self.config = config
        self.world = world
        self._adapter: PlateReaderAdapter | None = None
        if world is None and cache_dir is not None:
            geometry = load_geometry(config, cache_dir)
        else:
            geometry = self.adapter.plates
        self.plates = {
            p: PlateGeometry(g["type"], g["rows"], g["cols"], tuple(g["names"]))
            for p, g in geometry.items()
        }

    @property
    def adapter(self) -> PlateReaderAdapter:
        if self._adapter is None:
            from device_servers.plate_reader import adapter  # PyLabRobot: only when needed

            self._adapter = adapter.PlateReaderAdapter(self.config, self.world)
        return self._adapter

    # ------------------------------------------------------------------ twin
    def initial_twin(self) -> PlateReaderTwin:
        """Drawer closed; which plate is in it is unknown until the reader reports it."""
        return PlateReaderTwin(self.config.id, self.plates, self.config.wavelength_range_nm)

    def twin_from_snapshot(self, snap: dict[str, Any]) -> PlateReaderTwin:
        return PlateReaderTwin.from_snapshot(
            snap, self.config.id, self.plates, self.config.wavelength_range_nm
        )

    def touched(self, prims: list[Primitive]) -> set[str]:
        return {p.plate for p in prims if p.plate}

    def labware_of(self, cmd: BaseModel) -> set[str]:
        return cmd.labware_ids() if isinstance(cmd, ReaderCommand) else set()

    def describe_labware(self, twin: Any, labware_id: str) -> dict[str, Any] | None:
        assert isinstance(twin, PlateReaderTwin)
        return twin.describe(labware_id)

    def assume(self, twin: Any, plate: str, location: str | None) -> None:
        """Simulation: another instrument puts ``plate`` in the drawer or takes it out."""
        assert isinstance(twin, PlateReaderTwin)
        if location == twin.drawer:
            twin.plate, twin.plate_known = plate, True
        elif twin.plate == plate:
            twin.plate, twin.plate_known = None, True

    async def policy_context(
        self, cmd: BaseModel, twin: Any, assumed: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """What the reader believes of itself, for ``require_state`` rules."""
        assert isinstance(twin, PlateReaderTwin)
        return {
            "drawer_open": twin.drawer_open,
            "plate_in_reader": twin.plate if twin.plate_known else None,
            "plate_known": twin.plate_known,
        }

    # ------------------------------------------------------------------ read back
    def reconcile(
        self, twin: Any, seen: dict[str, Any], touched: set[str] | None
    ) -> list[dict[str, Any]]:
        """Adopt what the reader reports; a deviation only where belief was definite and wrong.

        The drawer and plate sensors are read whatever ``touched`` is: they are the reader.
        """
        assert isinstance(twin, PlateReaderTwin)
        deviations: list[dict[str, Any]] = []
        if "drawer_open" in seen:
            observed = bool(seen["drawer_open"])
            if twin.drawer_open != observed:
                deviations.append(
                    {"what": "drawer_open", "expected": twin.drawer_open, "observed": observed}
                )
                twin.drawer_open = observed
        if "plate" in seen:
            observed_plate = seen["plate"]
            if twin.plate_known and twin.plate != observed_plate:
                deviations.append(
                    {
                        "what": "plate_in_reader",
                        "labware": twin.plate or observed_plate,
                        "expected": twin.plate,
                        "observed": observed_plate,
                    }
                )
            twin.plate, twin.plate_known = observed_plate, True
        reading = seen.get("last_reading")
        if reading is not None:
            twin.remember(reading)
        return deviations
