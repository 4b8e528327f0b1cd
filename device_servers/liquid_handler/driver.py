"""The liquid handler as a runtime driver: wiring only (commands, geometry, twin, adapter)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel

from device_servers.errors import Code, DeviceError, ValidationFailed
from device_servers.kind import DriverBase
from device_servers.liquid_handler._deck import EPS
from device_servers.liquid_handler.catalogue import (
    initial_liquids,
    load_catalogue,
    usable_catalogue,
)
from device_servers.liquid_handler.commands import COMMANDS, LHCommand, Primitive
from device_servers.liquid_handler.config import LiquidHandlerConfig, deck_location
from device_servers.liquid_handler.progress import remainder, summary
from device_servers.liquid_handler.twin import LiquidHandlerTwin

if TYPE_CHECKING:
    from device_servers.liquid_handler.adapter import LiquidHandlerAdapter


class LiquidHandlerDriver(DriverBase[LiquidHandlerConfig]):
    """A PyLabRobot deck: geometry from the PyLabRobot deck (or its cache), liquids from the
    lab file."""

    kind = "liquid_handler"
    command_set = COMMANDS
    op_seconds: ClassVar[Mapping[str, float]] = {
        "pick": 4.0,
        "drop": 4.0,
        "aspirate": 5.0,
        "dispense": 5.0,
    }

    def estimate(self, prims: list[Any]) -> float:
        """Channels move together: a run of the same operation on distinct channels (eight
        tips picked up at once) takes as long as one."""
        total, motion, op = 0.0, set[int](), ""
        for p in prims:
            if p.op != op or p.channel in motion:
                motion, op = set(), p.op
                total += self.seconds(p)
            motion.add(p.channel)
        return total

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
            usable_catalogue(self.config, self.catalogue),
            self.locations,
            initial_liquids(self.config, self.catalogue),
            self.config.num_channels,
        )

    def twin_from_snapshot(self, snap: dict[str, Any]) -> LiquidHandlerTwin:
        return LiquidHandlerTwin.from_snapshot(snap)

    def touched(self, prims: list[Primitive]) -> set[str]:
        return {p.labware for p in prims if p.labware}

    # ------------------------------------------------------------------ partial outcomes
    def progress(self, cmd: BaseModel, prims: list[Primitive], done: int) -> dict[str, Any]:
        """What of ``cmd`` happened (per well, per channel) and, as arguments of the same
        command, exactly what is left after its first ``done`` operations."""
        rest = remainder(cmd, prims, done) if isinstance(cmd, LHCommand) else None
        return {"summary": summary(prims, done), "remainder": rest}

    async def precheck(self, twin: Any, prim: Primitive) -> None:
        """Between the operations of one command: the well an aspiration or a dispense is
        about to use, as the instrument reports it now, must allow it (a source holding less
        than believed, a destination already fuller). A backend that cannot report wells
        (most hardware) is left to its own liquid-level detection."""
        if prim.op not in ("aspirate", "dispense") or prim.labware is None:
            return
        seen = await self.adapter.observe({prim.labware})
        cell = ((seen or {}).get("wells") or {}).get(prim.labware, {}).get(prim.well)
        if cell is None:
            return
        volume, where = float(cell["volume_ul"]), f"{prim.labware}:{prim.well}"
        if prim.op == "aspirate" and volume + EPS < prim.volume:
            raise ValidationFailed(
                Code.INSUFFICIENT_VOLUME,
                f"{where} holds {volume:g} uL, {prim.volume:g} uL needed: stopped before "
                "aspirating",
                f"read_back; refill {where} or take the rest from another source",
            )
        room = cell.get("max_volume_ul")
        if prim.op == "dispense" and room is not None and volume + prim.volume > room + EPS:
            raise ValidationFailed(
                Code.WELL_OVERFLOW,
                f"{where} holds {volume:g} uL of {room:g}: {prim.volume:g} uL more would "
                "overflow, stopped before dispensing",
                f"read_back; dispense at most {max(room - volume, 0):g} uL into {where}",
            )

    def failed(self, twin: Any, prim: Primitive, exc: DeviceError) -> None:
        """A pick-up that failed marks its tip spot: it is not taken again."""
        if prim.op == "pick" and exc.code == Code.NO_TIP and prim.labware and prim.well:
            assert isinstance(twin, LiquidHandlerTwin)
            twin.mark_failed(prim.labware, prim.well)
