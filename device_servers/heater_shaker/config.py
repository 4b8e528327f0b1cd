"""The heater-shaker's configuration."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from device_servers.contract import InstrumentBase


class HeaterShakerConfig(InstrumentBase):
    """A heater-shaker (PyLabRobot ``HeaterShaker``) holding one plate at ``<id>:holder``.

    ``time_scale`` is simulated seconds per real second: with 60, a one-minute shake or ramp
    takes one real second in the simulated backend.
    """

    kind: Literal["heater_shaker"]
    temperature_range_c: tuple[float, float] = (4.0, 100.0)
    rpm_range: tuple[int, int] = (200, 3000)
    ramp_c_per_min: float = Field(default=10.0, gt=0)
    ambient_c: float = 22.0
    time_scale: float = Field(default=1.0, gt=0, le=1_000_000)
    plate_types: dict[str, str] = Field(default_factory=dict)
