"""Liquid-handler commands as frozen, typed records, and the primitive operations they expand to.

A command is what a client asks for (``transfer`` 50 uL from A1 to B1..B12); a primitive is
one physical motion of one channel (pick up a tip, aspirate, dispense, drop a tip). The twin
validates and applies primitives; the adapter executes them. Volumes are in microlitres.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from pydantic import Field

from device_servers.kind import DeviceCommand, command_table


class LHCommand(DeviceCommand):
    """Base of the liquid-handler commands."""


class PickUpTips(LHCommand):
    """Pick up one tip per channel from a tip rack. Needs the channels empty (else
    TIP_ALREADY_ATTACHED) and tips present at the spots (else TIPRACK_EMPTY). Leave `spots` out
    to take the next available tips of the rack.
    """

    name: ClassVar[str] = "pick_up_tips"
    rack: str = Field(description="Tip rack labware id, e.g. 'tips_1'.")
    spots: list[str] | None = Field(
        default=None, description="Tip spots, one per channel, e.g. ['A1']. Default: next free."
    )
    channels: list[int] = Field(default=[0], min_length=1, max_length=16)

    def labware_ids(self) -> set[str]:
        return {self.rack}


class DropTips(LHCommand):
    """Drop the tips of the given channels (default: every channel holding one) into the trash, or
    back to where they came from with destination='rack'. Needs a tip on each named channel
    (else NO_TIP).
    """

    name: ClassVar[str] = "drop_tips"
    channels: list[int] | None = Field(default=None, max_length=16)
    destination: Literal["trash", "rack"] = "trash"


class Aspirate(LHCommand):
    """Aspirate volume_ul (uL) from each well into the tip of the matching channel. Needs a tip on
    each channel (NO_TIP), enough liquid in the well (INSUFFICIENT_VOLUME) and room in the tip
    (VOLUME_EXCEEDS_TIP).
    """

    name: ClassVar[str] = "aspirate"
    labware: str
    wells: list[str] = Field(min_length=1, max_length=16, description="One well per channel.")
    volume_ul: float = Field(description="Microlitres per well, > 0.")
    channels: list[int] | None = Field(default=None, description="Default: 0..len(wells)-1.")

    def labware_ids(self) -> set[str]:
        return {self.labware}


class Dispense(LHCommand):
    """Dispense volume_ul (uL) from the tip of each channel into the matching well. Needs that much
    liquid in the tip (INSUFFICIENT_VOLUME) and room in the well (WELL_OVERFLOW).
    """

    name: ClassVar[str] = "dispense"
    labware: str
    wells: list[str] = Field(min_length=1, max_length=16)
    volume_ul: float
    channels: list[int] | None = None

    def labware_ids(self) -> set[str]:
        return {self.labware}


class Transfer(LHCommand):
    """Move volume_ul (uL) from one source well to each destination well with channel 0: picks up a
    tip, aspirates, dispenses, optionally mixes, drops the tip (a new tip per destination with
    new_tip='always'). Needs free tips (TIPRACK_EMPTY), enough source liquid
    (INSUFFICIENT_VOLUME) and room in each destination (WELL_OVERFLOW).
    """

    name: ClassVar[str] = "transfer"
    source: str
    source_well: str
    destination: str
    destination_wells: list[str] = Field(min_length=1, max_length=384)
    volume_ul: float
    tip_rack: str | None = Field(default=None, description="Default: the first rack with tips.")
    new_tip: Literal["always", "once"] = "always"
    mix_after: int = Field(default=0, description="Mix cycles in each destination after dispense.")
    mix_volume_ul: float | None = None
    first_done: int = Field(
        default=0,
        ge=0,
        description="The rest of an interrupted transfer: how many operations of the FIRST "
        "destination already happened (in order: pick up, aspirate, dispense, each mix "
        "aspiration and dispense, drop); those are skipped. 1 = the tip on channel 0 is used.",
    )

    def labware_ids(self) -> set[str]:
        ids = {self.source, self.destination}
        if self.tip_rack:
            ids.add(self.tip_rack)
        return ids


class Mix(LHCommand):
    """Mix a well by aspirating and dispensing volume_ul (uL) `repetitions` times with the tip
    already on `channel` (NO_TIP without one). The well must hold at least volume_ul.
    """

    name: ClassVar[str] = "mix"
    labware: str
    well: str
    volume_ul: float
    repetitions: int = 3
    channel: int = 0
    first_done: int = Field(
        default=0,
        ge=0,
        description="The rest of an interrupted mix: how many of its operations (aspiration, "
        "dispense, aspiration, ...) already happened; 1 = dispense what the tip holds first.",
    )

    def labware_ids(self) -> set[str]:
        return {self.labware}


COMMANDS = command_table(PickUpTips, DropTips, Aspirate, Dispense, Transfer, Mix)

Op = Literal["pick", "drop", "aspirate", "dispense"]


@dataclass(frozen=True, slots=True)
class Primitive:
    """One motion of one channel.

    For ``pick``, ``labware``/``well`` are the rack and spot (``None`` = next free, resolved by
    the twin). For ``drop``, ``labware`` is None for the trash, else the rack and spot.
    ``part`` groups the primitives of one destination of a transfer (or one well of a
    multi-well command), so what is left of an interrupted command can be named.
    """

    op: Op
    channel: int
    labware: str | None = None
    well: str | None = None
    volume: float = 0.0
    part: int = 0  # which destination (transfer), cycle (mix) or well/channel it serves
