"""The thermocycler: lid, block and lid heaters, temperature profiles run cycle by cycle.

``KIND`` is what the registry of kinds (:mod:`device_servers.kind`) reads.
"""

from device_servers.kind import Kind
from device_servers.thermocycler.config import ThermocyclerConfig

KIND = Kind(ThermocyclerConfig)

__all__ = ["KIND", "ThermocyclerConfig"]
