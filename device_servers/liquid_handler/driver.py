"""The liquid handler as a runtime driver: wiring only (commands, geometry, twin, adapter)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from device_servers.kind import DriverBase
from device_servers.liquid_handler.catalogue import initial_liquids, load_catalogue
from device_servers.liquid_handler.commands import COMMANDS, Primitive
from device_servers.liquid_handler.config import LiquidHandlerConfig, deck_location
from device_servers.liquid_handler.twin import LiquidHandlerTwin

if TYPE_CHECKING:
    from device_servers.liquid_handler.adapter import LiquidHandlerAdapter


class LiquidHandlerDriver(DriverBase[LiquidHandlerConfig]):
    """A PyLabRobot deck: geometry from the PyLabRobot deck (or its cache), liquids from the
    lab file."""

    kind = "liquid_handler"
    command_set = COMMANDS

    def wire(self) -> None:
        config = self.config
        self.locations = {
            lw.id: deck_location(config.id, lw.carrier, lw.slot) for lw in config.labware
        }
        if self.world is None and self.cache_dir is not None:
            self.catalogue = load_catalogue(config, self.cache_dir)
        else:
            self.catalogue = self.adapter.catalogue

    def make_adapter(self) -> LiquidHandlerAdapter:
        from device_servers.liquid_handler import adapter  # PyLabRobot: only when needed

        return adapter.LiquidHandlerAdapter(self.config, self.world, initial_liquids)

    def initial_twin(self) -> LiquidHandlerTwin:
        return LiquidHandlerTwin.from_catalogue(
            self.catalogue,
            self.locations,
            initial_liquids(self.config, self.catalogue),
            self.config.num_channels,
        )

    def twin_from_snapshot(self, snap: dict[str, Any]) -> LiquidHandlerTwin:
        return LiquidHandlerTwin.from_snapshot(snap)

    def touched(self, prims: list[Primitive]) -> set[str]:
        return {p.labware for p in prims if p.labware}
