"""A PyLabRobot liquid-handler backend that acts on Labwright's simulated world.

It overrides only the machine calls (like PyLabRobot's chatterbox), so the real
``LiquidHandler`` frontend runs above it. It never prints (stdout may be an MCP stream).
Faults from the world's fault plan fire here, at the lowest seam, never in the twin.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from pylabrobot.liquid_handling.backends.backend import LiquidHandlerBackend
from pylabrobot.liquid_handling.standard import (
    Drop,
    DropTipRack,
    MultiHeadAspirationContainer,
    MultiHeadAspirationPlate,
    MultiHeadDispenseContainer,
    MultiHeadDispensePlate,
    Pickup,
    PickupTipRack,
    ResourceDrop,
    ResourceMove,
    ResourcePickup,
    SingleChannelAspiration,
    SingleChannelDispense,
)
from pylabrobot.resources import ItemizedResource, Resource, Tip, Trash

from device_servers.sim.faults import SimulatedBackend
from device_servers.sim.world import PhysicalError, SimWorld


def locate(resource: Resource) -> tuple[str, str]:
    """(labware id, well or spot name) of a PyLabRobot well or tip spot."""
    parent = resource.parent
    if isinstance(parent, ItemizedResource):
        return parent.name, parent.get_child_identifier(resource)
    return resource.name, "A1"


class SimulatedLiquidHandlerBackend(SimulatedBackend, LiquidHandlerBackend):
    """Single-channel operations on the simulated world, with fault injection."""

    def __init__(
        self,
        world: SimWorld,
        instrument: str,
        num_channels: int = 8,
        locations: dict[str, str] | None = None,
    ) -> None:
        super().__init__(world, instrument)
        self._num_channels = num_channels
        # labware id -> its deck slot (lab-wide name); plates can leave with a plate mover.
        self.locations = dict(locations or {})

    def _here(self, labware: str) -> bool:
        """Is the labware really at its deck slot? (Unknown to the world counts as here.)"""
        where = self.world.location_of(labware)
        return where is None or where == self.locations.get(labware, where)

    @property
    def num_channels(self) -> int:
        return self._num_channels

    async def setup(self) -> None:
        await super().setup()

    def can_pick_up_tip(self, channel_idx: int, tip: Tip) -> bool:
        return True

    async def _act(
        self,
        op: str,
        channel: int,
        labware: str | None,
        well: str | None,
        effect: Callable[[], None],
    ) -> None:
        if labware is not None and not self._here(labware):
            raise PhysicalError(
                "labware_absent", f"no {labware} at {self.locations.get(labware, '?')}"
            )
        await self.act(
            {"op": op, "channel": channel, "labware": labware, "well": well},
            effect,
            applies=lambda kind: kind != "tip_pickup_fail" or op == "pick",
        )

    async def play_own(
        self, kind: str, params: dict[str, Any], effect: Callable[[], Any], target: dict[str, Any]
    ) -> Any:
        op, channel, labware, well = (target[k] for k in ("op", "channel", "labware", "well"))
        if kind == "tip_pickup_fail" and op == "pick":
            raise PhysicalError(
                "pickup_failed", f"tip pick-up failed: no tip detected on channel {channel}"
            )
        elif kind == "less_liquid":
            where_lw = params.get("labware", labware)
            where_well = params.get("well", well)
            current = self.world.well(where_lw, where_well)["volume_ul"]
            volume = params.get("volume_ul", current * float(params.get("factor", 0.5)))
            self.world.set_well(where_lw, where_well, float(volume))
            effect()
        else:
            effect()

    # -------------------------------------------------------------- single channel
    async def pick_up_tips(self, ops: list[Pickup], use_channels: list[int], **_: Any) -> None:
        for op, ch in zip(ops, use_channels, strict=True):
            rack, spot = locate(op.resource)
            await self._act(
                "pick",
                ch,
                rack,
                spot,
                partial(self.world.pick, self.instrument, ch, rack, spot),
            )

    async def drop_tips(self, ops: list[Drop], use_channels: list[int], **_: Any) -> None:
        for op, ch in zip(ops, use_channels, strict=True):
            if isinstance(op.resource, Trash):
                rack: str | None
                spot: str | None
                rack, spot = None, None
            else:
                rack, spot = locate(op.resource)
            await self._act(
                "drop",
                ch,
                rack,
                spot,
                partial(self.world.drop, self.instrument, ch, rack, spot),
            )

    async def aspirate(
        self, ops: list[SingleChannelAspiration], use_channels: list[int], **_: Any
    ) -> None:
        for op, ch in zip(ops, use_channels, strict=True):
            lw, well = locate(op.resource)
            await self._act(
                "aspirate",
                ch,
                lw,
                well,
                partial(self.world.aspirate, self.instrument, ch, lw, well, op.volume),
            )

    async def dispense(
        self, ops: list[SingleChannelDispense], use_channels: list[int], **_: Any
    ) -> None:
        for op, ch in zip(ops, use_channels, strict=True):
            lw, well = locate(op.resource)
            await self._act(
                "dispense",
                ch,
                lw,
                well,
                partial(self.world.dispense, self.instrument, ch, lw, well, op.volume),
            )

    # -------------------------------------------------------------- read back
    def read_back(self, labware: dict[str, str]) -> dict[str, Any]:
        """What the instrument's sensors report: wells, tip racks and channels."""
        out: dict[str, Any] = {
            "wells": {},
            "tips": {},
            "present": {lw_id: self._here(lw_id) for lw_id in labware},
            "channels": self.world.channels(self.instrument),
        }
        for lw_id, kind in labware.items():
            if kind == "tip_rack":
                out["tips"][lw_id] = self.world.tips(lw_id)
            else:
                out["wells"][lw_id] = self.world.wells(lw_id)
        return out

    # -------------------------------------------------------------- not simulated
    async def _unsupported(self, what: str) -> None:
        raise NotImplementedError(f"the simulated liquid handler has no {what}")

    async def pick_up_tips96(self, pickup: PickupTipRack, **_: Any) -> None:
        await self._unsupported("96 head")

    async def drop_tips96(self, drop: DropTipRack, **_: Any) -> None:
        await self._unsupported("96 head")

    async def aspirate96(
        self, aspiration: MultiHeadAspirationPlate | MultiHeadAspirationContainer, **_: Any
    ) -> None:
        await self._unsupported("96 head")

    async def dispense96(
        self, dispense: MultiHeadDispensePlate | MultiHeadDispenseContainer, **_: Any
    ) -> None:
        await self._unsupported("96 head")

    async def pick_up_resource(self, pickup: ResourcePickup) -> None:
        await self._unsupported("gripper")

    async def move_picked_up_resource(self, move: ResourceMove) -> None:
        await self._unsupported("gripper")

    async def drop_resource(self, drop: ResourceDrop) -> None:
        await self._unsupported("gripper")
