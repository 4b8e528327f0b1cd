"""The simulated lab: physical ground truth and fault injection for simulated instruments."""

from device_servers.sim.world import PhysicalError, SimWorld

__all__ = ["PhysicalError", "SimWorld"]
