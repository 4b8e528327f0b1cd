"""The plate reader: commands, twin, PyLabRobot adapter and simulated backend.

Public surface: :class:`PlateReaderDriver` (in ``driver``), the command records in
``commands`` and :class:`PlateReaderTwin` (in ``twin``). Only ``adapter`` and ``sim_backend``
import PyLabRobot, and they are imported only when an instrument is driven.

``KIND`` is what the registry of kinds (:mod:`device_servers.kind`) reads.
"""

from device_servers.kind import Kind
from device_servers.plate_reader.config import PlateReaderConfig

KIND = Kind(PlateReaderConfig)

__all__ = ["KIND", "PlateReaderConfig"]
