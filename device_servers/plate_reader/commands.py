"""Plate-reader commands as frozen, typed records, and the one operation each expands to.

A reader command is one physical operation (open the drawer, close it, read a plate), so each
expands to exactly one :class:`Primitive`. Wavelengths are in nanometres; absorbance is in
optical density (OD), fluorescence in relative fluorescence units (RFU), luminescence in
relative light units (RLU).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from pydantic import Field, model_validator

from device_servers.kind import DeviceCommand, command_table

_WELLS = (
    "Wells to read: names ('A1') or ranges ('A1:A12', 'row A', 'column 3', 'all'). "
    "Default: every well of the plate. UNKNOWN_WELL for a well the plate does not have."
)
_NEEDS_PLATE = (
    "Needs the drawer closed (PRECONDITION_FAILED while it is open: close_drawer) and the plate "
    "detected in the reader (UNKNOWN_LABWARE otherwise: the plate mover puts it at "
    "'<reader>:drawer', then close_drawer lets the reader detect it)."
)
_RESULT = (
    "Executed, the result's `measurements` holds one reading {plate, mode, values: {well: "
    "number}, unit, simulated}; a simulated reader says simulated=true. SENSOR_INVALID (no "
    "values returned) when the detector reports NaN or a value outside its physical range: "
    "read again or ask a person."
)


class ReaderCommand(DeviceCommand):
    """Base of the plate-reader commands."""


class OpenDrawer(ReaderCommand):
    """Open the reader's drawer (plate out) so the plate mover can put a plate on it or take the
    plate away. No arguments; opening an open drawer does nothing. While the drawer is open
    nothing can be read (PRECONDITION_FAILED).
    """

    name: ClassVar[str] = "open_drawer"


class CloseDrawer(ReaderCommand):
    """Close the reader's drawer (plate in). Afterwards the reader detects which plate, if any, is
    in it and the state's `plate_in_reader` says so. Pass expect_plate to say which plate should
    be there (e.g. the one the plate mover just put there): a dry run then predicts it, and an
    executed close reports a `deviation` if the reader detects something else.
    """

    name: ClassVar[str] = "close_drawer"
    expect_plate: str | None = Field(
        default=None,
        max_length=64,
        description="The plate you expect in the drawer; None: let the reader tell.",
    )

    def labware_ids(self) -> set[str]:
        return {self.expect_plate} if self.expect_plate else set()


class _Read(ReaderCommand):
    """A reading of the plate in the reader."""

    notes: ClassVar[str] = f"{_NEEDS_PLATE} {_RESULT}"
    plate: str = Field(max_length=64, description="Plate labware id, e.g. 'plate_1'.")
    wells: list[str] | None = Field(default=None, min_length=1, max_length=1536, description=_WELLS)

    def labware_ids(self) -> set[str]:
        return {self.plate}


class ReadAbsorbance(_Read):
    """Read the absorbance (optical density, OD, 0 to 4) of wells of the plate in the reader at
    wavelength_nm (integer nanometres, within the reader's wavelength range: OUT_OF_RANGE
    otherwise; the safety policy may allow a narrower range: POLICY_DENIED). An empty well reads
    the blank (about 0.05 OD); a dye dilution reads proportionally above it.
    """

    name: ClassVar[str] = "read_absorbance"
    wavelength_nm: int = Field(description="Wavelength in nm, e.g. 600.")


class ReadFluorescence(_Read):
    """Read the fluorescence (RFU, >= 0) of wells of the plate in the reader, exciting at
    excitation_nm and measuring at emission_nm (integer nanometres, both within the reader's
    wavelength range: OUT_OF_RANGE; emission must be longer than excitation: INVALID_ARGUMENT).
    """

    name: ClassVar[str] = "read_fluorescence"
    excitation_nm: int = Field(description="Excitation wavelength in nm, e.g. 485.")
    emission_nm: int = Field(description="Emission wavelength in nm, e.g. 528; > excitation.")

    @model_validator(mode="after")
    def _stokes(self) -> ReadFluorescence:
        if self.emission_nm <= self.excitation_nm:
            raise ValueError(
                f"emission_nm ({self.emission_nm}) must be longer than excitation_nm "
                f"({self.excitation_nm})"
            )
        return self


class ReadLuminescence(_Read):
    """Read the luminescence (RLU, >= 0) of wells of the plate in the reader; no light source, so
    no wavelength.
    """

    name: ClassVar[str] = "read_luminescence"


COMMANDS = command_table(
    OpenDrawer, CloseDrawer, ReadAbsorbance, ReadFluorescence, ReadLuminescence
)

Op = Literal["open_drawer", "close_drawer", "absorbance", "fluorescence", "luminescence"]


@dataclass(frozen=True, slots=True)
class Primitive:
    """One physical operation of the reader.

    For reads, ``wells`` are resolved well names in the order asked; ``plate`` is the plate
    read. For ``close_drawer``, ``plate`` is the plate the caller expects (None: unknown).
    """

    op: Op
    plate: str | None = None
    wells: tuple[str, ...] = ()
    wavelength_nm: int | None = None
    excitation_nm: int | None = None
    emission_nm: int | None = None

    @property
    def is_read(self) -> bool:
        return self.op in ("absorbance", "fluorescence", "luminescence")
