"""The liquid handler's configuration: a PyLabRobot deck with carriers, labware and liquids."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from device_servers.contract import InstrumentBase, Station, Strict


class CarrierSpec(Strict):
    """A carrier on the deck: a PyLabRobot resource factory name placed at a rail."""

    id: str
    type: str
    rails: int = Field(ge=1, le=60)


class LabwareSpec(Strict):
    """A labware item: a PyLabRobot resource factory name in a carrier slot."""

    id: str = Field(pattern=r"^[A-Za-z0-9_\-]{1,64}$")
    type: str
    carrier: str
    slot: int = Field(ge=0, le=10)


class LiquidSpec(Strict):
    """Initial liquid: ``volume_ul`` of ``liquid`` in each well of ``wells`` ("A1", "A1:H1")."""

    labware: str
    wells: str
    liquid: str = Field(min_length=1, max_length=64)
    volume_ul: float = Field(gt=0)


class LiquidHandlerConfig(InstrumentBase):
    """A liquid handler: a PyLabRobot deck with carriers, labware and initial liquids."""

    kind: Literal["liquid_handler"]
    deck: str = "STARLetDeck"
    num_channels: int = Field(default=8, ge=1, le=16)
    carriers: list[CarrierSpec] = Field(default_factory=list)
    labware: list[LabwareSpec] = Field(default_factory=list)
    liquids: list[LiquidSpec] = Field(default_factory=list)
    tip_usable_volume_ul: dict[str, Annotated[float, Field(gt=0)]] = Field(
        default_factory=dict,
        description="Tip-rack type -> the most one of its tips may hold (uL). Default: the "
        "nominal volume in the type's name (hamilton_96_tiprack_300uL: 300) where PyLabRobot's "
        "maximal volume is larger (it is 400 there), else PyLabRobot's.",
    )

    def stations(self) -> list[Station]:
        """Every slot of every carrier: where labware lives, reachable whenever the arm comes."""
        return [
            Station(place=f"{self.id}:{carrier.id}:*", instrument=self.id, role="home")
            for carrier in self.carriers
        ]

    def plates_here(self) -> dict[str, tuple[str, str]]:
        """Every labware item starts at its deck slot (tip racks too: the arm may move them)."""
        return {
            lw.id: (lw.type, deck_location(self.id, lw.carrier, lw.slot)) for lw in self.labware
        }


def deck_location(instrument: str, carrier: str, slot: int) -> str:
    """The lab-wide name of a liquid-handler deck slot."""
    return f"{instrument}:{carrier}:{slot}"
