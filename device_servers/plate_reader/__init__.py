"""The plate reader: commands, twin, PyLabRobot adapter and simulated backend.

Public surface: :class:`PlateReaderDriver` (in ``driver``), the command records in
``commands`` and :class:`PlateReaderTwin` (in ``twin``). Only ``adapter`` and ``sim_backend``
import PyLabRobot, and they are imported only when an instrument is driven.

``KIND`` is what the registry of kinds (:mod:`device_servers.kind`) reads.
"""

from device_servers.kind import Kind, default_rules
from device_servers.plate_reader.config import PlateReaderConfig

KIND = Kind(
    "plate_reader",
    PlateReaderConfig,
    "device_servers.plate_reader.driver:PlateReaderDriver",
    default_rules("plate_reader"),
)

__all__ = ["KIND", "PlateReaderConfig"]
