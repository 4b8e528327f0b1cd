"""Device agents: one per instrument, bound to that instrument's MCP session and rules."""

from agents.device.agent import TRANSPORT_ERRORS, DeviceAgent, Observation, action_id_for

__all__ = ["TRANSPORT_ERRORS", "DeviceAgent", "Observation", "action_id_for"]
