"""The heater-shaker as a runtime driver: wiring only (commands, twin, adapter)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from device_servers.heater_shaker.commands import COMMANDS, Primitive
from device_servers.heater_shaker.config import HeaterShakerConfig
from device_servers.heater_shaker.twin import HeaterShakerTwin, Limits
from device_servers.kind import DriverBase


class HeaterShakerDriver(DriverBase[HeaterShakerConfig]):
    """One heater-shaker: a block with a target temperature and a plate holder that shakes.

    Its policy facts are its twin's (``HeaterShakerTwin.facts``); the plate a command touches
    is whatever sits on the holder, so commands name no labware.
    """

    kind = "heater_shaker"
    command_set = COMMANDS
    adapter_class = "device_servers.heater_shaker.adapter:HeaterShakerAdapter"
    # A timed shake and a wait (its predicted ramp) carry their own duration_s.
    op_seconds: ClassVar[Mapping[str, float]] = {
        "set_temperature": 1.0,
        "stop": 1.0,
        "lock": 2.0,
        "unlock": 2.0,
    }

    @property
    def holder(self) -> str:
        return f"{self.config.id}:holder"

    def initial_twin(self) -> HeaterShakerTwin:
        """Heater off at ambient, unlocked, no plate believed: read_back learns the plate."""
        cfg = self.config
        limits = Limits(
            (float(cfg.temperature_range_c[0]), float(cfg.temperature_range_c[1])),
            (int(cfg.rpm_range[0]), int(cfg.rpm_range[1])),
            cfg.ramp_c_per_min,
            cfg.ambient_c,
        )
        return HeaterShakerTwin(
            self.holder, limits, current_c=cfg.ambient_c, plate_types=dict(cfg.plate_types)
        )

    def twin_from_snapshot(self, snap: dict[str, Any]) -> HeaterShakerTwin:
        return HeaterShakerTwin.from_snapshot(snap, self.config.plate_types)

    def touched(self, prims: list[Primitive]) -> set[str]:
        return {self.holder} if prims else set()
