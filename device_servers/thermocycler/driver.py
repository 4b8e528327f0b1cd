"""The thermocycler as a runtime driver: wiring only (commands, twin, adapter)."""

from __future__ import annotations

from typing import Any

from device_servers.kind import DriverBase
from device_servers.thermocycler.commands import COMMANDS, Primitive
from device_servers.thermocycler.config import ThermocyclerConfig
from device_servers.thermocycler.twin import ThermocyclerTwin


class ThermocyclerDriver(DriverBase[ThermocyclerConfig]):
    """One thermocycler: a lid, a heated block holding a plate at ``<id>:block``, a heated
    lid. Its policy facts are its twin's (``ThermocyclerTwin.facts``)."""

    kind = "thermocycler"
    command_set = COMMANDS
    adapter_class = "device_servers.thermocycler.adapter:ThermocyclerAdapter"

    def initial_twin(self) -> ThermocyclerTwin:
        """Lid open, heaters off at ambient, no plate believed: read_back learns the plate."""
        cfg = self.config
        return ThermocyclerTwin(
            block=f"{cfg.id}:block",
            block_range_c=(float(cfg.block_range_c[0]), float(cfg.block_range_c[1])),
            lid_range_c=(float(cfg.lid_range_c[0]), float(cfg.lid_range_c[1])),
            block_c=cfg.ambient_c,
            lid_c=cfg.ambient_c,
            plate_types=dict(cfg.plate_types),
        )

    def twin_from_snapshot(self, snap: dict[str, Any]) -> ThermocyclerTwin:
        return ThermocyclerTwin.from_snapshot(snap)

    def touched(self, prims: list[Primitive]) -> set[str]:
        return {f"{self.config.id}:block"} if prims else set()
