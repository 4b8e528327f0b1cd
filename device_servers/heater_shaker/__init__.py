"""The heater-shaker: commands, twin, PyLabRobot adapter and simulated backend.

Public surface: :class:`~device_servers.heater_shaker.driver.HeaterShakerDriver` (what the
runtime plugs in) and the command records in :mod:`device_servers.heater_shaker.commands`.

``KIND`` is what the registry of kinds (:mod:`device_servers.kind`) reads.
"""

from device_servers.heater_shaker.config import HeaterShakerConfig
from device_servers.kind import Kind

KIND = Kind(HeaterShakerConfig)

__all__ = ["KIND", "HeaterShakerConfig"]
