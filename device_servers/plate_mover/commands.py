"""Plate-mover commands as frozen, typed records, and the primitive motions they expand to.

A command is what a client asks for (``move_plate`` plate_1 to ``reader1:drawer``); a
primitive is one motion of the arm: ``home``, ``pick`` a plate at a location, ``place`` the
held plate at a location. The twin validates and applies primitives; the adapter executes them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from pydantic import Field

from device_servers.kind import DeviceCommand, command_table

_ERRORS = (
    " Errors: UNKNOWN_LABWARE (not a plate this arm may move), OUT_OF_RANGE (a location "
    "outside the arm's workspace), DECK_COLLISION (the destination holds another plate), "
    "PRECONDITION_FAILED (the gripper holds another plate, or the plate's place is unknown), "
    "POLICY_DENIED (the destination or source instrument is busy, its drawer is closed or its "
    "plate lock is on, or the destination is occupied), GRIP_FAILED (the gripper closed on "
    "nothing: the plate stays where it is)."
)


class PMCommand(DeviceCommand):
    """Base of the plate-mover commands."""


class MovePlate(PMCommand):
    """Move a plate (with everything in its wells) from where it is to `to_location`, a location of
    the arm's workspace named `<owner>:<place>` (e.g. 'lh1:plate_carrier:1', 'reader1:drawer',
    'hs1:holder', 'hotel:1'; get_state lists them). The arm homes first if needed, picks the
    plate at its believed location and places it at the destination; the result's events include
    plate_moved {plate, from, to}. A plate already at to_location is a no-op with a warning
    event. If the gripper already holds the plate (after a failed place), it is only placed.
    Preconditions: the destination is free, the destination and source instruments are ready (a
    reader's drawer open, a heater-shaker unlocked and not shaking, nothing busy).
    """

    name: ClassVar[str] = "move_plate"
    notes: ClassVar[str] = _ERRORS
    plate: str = Field(min_length=1, max_length=64, description="Plate id, e.g. 'plate_1'.")
    to_location: str = Field(
        min_length=1, max_length=128, description="Destination, e.g. 'reader1:drawer'."
    )

    def labware_ids(self) -> set[str]:
        return {self.plate}


class Home(PMCommand):
    """Home the arm (find its reference position). Keeps a held plate in the gripper. move_plate
    homes by itself when the arm is not homed; call this after an emergency stop or a restart,
    once read_back has cleared STATE_STALE.
    """

    name: ClassVar[str] = "home"


COMMANDS = command_table(MovePlate, Home)

Op = Literal["home", "pick", "place"]


@dataclass(frozen=True, slots=True)
class Primitive:
    """One motion of the arm.

    ``pick``: take ``plate`` at ``location``. ``place``: set the held ``plate`` down at
    ``location``; ``origin`` is where it was picked (for the plate_moved event). ``home``: no
    plate, no location.
    """

    op: Op
    plate: str | None = None
    location: str | None = None
    origin: str | None = None
