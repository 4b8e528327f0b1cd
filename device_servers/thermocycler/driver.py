"""The thermocycler as a runtime driver: wiring only (commands, twin, adapter)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

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
    op_seconds: ClassVar[Mapping[str, float]] = {
        "open_lid": 10.0,
        "close_lid": 10.0,
        "set_lid": 1.0,
        "stop": 1.0,
    }

    def seconds(self, prim: Primitive) -> float:
        """A cycle holds each of its temperatures and ramps between them at the block's
        rate; a block target is reached at that rate from ambient at worst (an estimate)."""
        ramp = self.config.block_ramp_c_per_s
        if prim.op == "cycle" and prim.cycle is not None:
            temps = [c for c, _ in prim.cycle.steps]
            ramps = sum(abs(a - b) for a, b in zip(temps, temps[1:] + temps[:1], strict=True))
            return sum(s for _, s in prim.cycle.steps) + ramps / ramp
        if prim.op == "set_block" and prim.celsius is not None:
            return abs(prim.celsius - self.config.ambient_c) / ramp
        return super().seconds(prim)

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
