"""The plate mover: a robotic arm moving plates between named locations of the lab.

Public surface: :class:`PlateMoverDriver` (``device_servers.plate_mover.driver``), its commands
(``move_plate``, ``home``) and its twin. Only ``adapter.py`` and ``sim_backend.py`` import
PyLabRobot.

``KIND`` is what the registry of kinds (:mod:`device_servers.kind`) reads.
"""

from device_servers.kind import Kind
from device_servers.plate_mover.config import PlateMoverConfig

KIND = Kind(PlateMoverConfig)

__all__ = ["KIND", "PlateMoverConfig"]
