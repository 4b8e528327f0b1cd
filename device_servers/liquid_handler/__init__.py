"""The liquid handler: commands, twin, PyLabRobot adapter and simulated backend.

``KIND`` is what the registry of kinds (:mod:`device_servers.kind`) reads.
"""

from device_servers.kind import Kind
from device_servers.liquid_handler.config import LiquidHandlerConfig
from device_servers.liquid_handler.prompts import PROMPTS

KIND = Kind(LiquidHandlerConfig, PROMPTS)

__all__ = ["KIND", "LiquidHandlerConfig"]
