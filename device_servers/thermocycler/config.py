"""The thermocycler's configuration: block and lid ranges, ramp rates, a plate on its block."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from device_servers.contract import Heated, InstrumentBase, PlateTypes, Requirement, Station


class ThermocyclerConfig(InstrumentBase, Heated, PlateTypes):
    """A thermocycler (PyLabRobot ``Thermocycler``) holding one plate at ``<id>:block``.

    The ranges are what the machine can physically do (OUT_OF_RANGE beyond them); the lab's
    rules may allow less. ``time_scale`` is simulated seconds per real second: with 60, a
    one-minute hold takes one real second in the simulated backend.
    """

    kind: Literal["thermocycler"]
    block_range_c: tuple[float, float] = (0.0, 100.0)
    lid_range_c: tuple[float, float] = (20.0, 115.0)
    block_ramp_c_per_s: float = Field(default=3.0, gt=0)
    lid_ramp_c_per_s: float = Field(default=1.0, gt=0)
    block_max_volume_ul: float = Field(default=100.0, gt=0)

    def stations(self) -> list[Station]:
        """The block: lid open and no profile running for a plate to go in or out."""
        lid_open = Requirement(fact="lid_open", made_by="open_lid", undone_by="close_lid")
        idle = Requirement(fact="running", equals=False)
        return [self.station("block", lid_open, idle, plate_fact="plate")]
