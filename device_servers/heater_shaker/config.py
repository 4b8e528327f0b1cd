"""The heater-shaker's configuration."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from device_servers.contract import Heated, InstrumentBase, PlateTypes, Requirement, Station


class HeaterShakerConfig(InstrumentBase, Heated, PlateTypes):
    """A heater-shaker (PyLabRobot ``HeaterShaker``) holding one plate at ``<id>:holder``.

    ``time_scale`` is simulated seconds per real second: with 60, a one-minute shake or ramp
    takes one real second in the simulated backend.
    """

    kind: Literal["heater_shaker"]
    temperature_range_c: tuple[float, float] = (4.0, 100.0)
    rpm_range: tuple[int, int] = (200, 3000)
    ramp_c_per_min: float = Field(default=10.0, gt=0)

    def stations(self) -> list[Station]:
        """The holder: unlocked and still for a plate to go on or off."""
        unlocked = Requirement(
            fact="locked", equals=False, made_by="unlock_plate", undone_by="lock_plate"
        )
        still = Requirement(fact="shaking", equals=False)
        return [self.station("holder", unlocked, still, plate_fact="plate")]
