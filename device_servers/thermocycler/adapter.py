"""The thermocycler's adapter: the only module of this server (with the simulated backend)
that imports PyLabRobot.

It builds PyLabRobot's ``Thermocycler`` frontend on the configured backend (simulated by
default; a hardware backend only when configured) and performs primitives through it: a cycle
is one stage handed to the frontend's ``run_protocol`` (fire and forget), then polled with
``is_profile_running`` until it ends, abortably, and reported as a ``cycle_completed`` event.
Every exception is translated once, by :class:`~device_servers.kind.AdapterBase`.
"""

from __future__ import annotations

from typing import Any

from pylabrobot.resources import Coordinate
from pylabrobot.thermocycling import Thermocycler, ThermocyclerBackend
from pylabrobot.thermocycling.standard import Protocol, Stage, Step

from device_servers.kind import HeatedAdapter
from device_servers.thermocycler.commands import Primitive
from device_servers.thermocycler.config import ThermocyclerConfig
from device_servers.thermocycler.sim_backend import SimulatedThermocyclerBackend
from device_servers.thermocycler.twin import cycle_data

# The frontend, its footprint (mm), where the plate sits on it.
MACHINE = (Thermocycler, (172.0, 316.0, 154.0), Coordinate(x=0.0, y=82.0, z=97.0))


class ThermocyclerAdapter(HeatedAdapter[ThermocyclerConfig]):
    """PyLabRobot ``Thermocycler`` on the configured backend; a profile runs on it one cycle
    (one single-stage protocol) at a time."""

    backend_base = ThermocyclerBackend
    simulated_class = SimulatedThermocyclerBackend
    machine = MACHINE
    safe_calls = ("deactivate_block", "deactivate_lid")  # heaters off, the lid as it is
    subject = "the thermocycler"

    # ------------------------------------------------------------------ commands
    def where(self, prim: Primitive) -> str:
        if prim.cycle is not None:
            return f"cycle {prim.cycle.number}/{prim.cycle.of} of stage {prim.cycle.stage}"
        return prim.op

    def timeout(self, prim: Primitive) -> float:
        base = self.config.command_timeout_s
        if prim.cycle is None:
            return base
        temps = [c for c, _ in prim.cycle.steps]
        ramp = (max(temps) - min(temps) + 100.0) / self.config.block_ramp_c_per_s
        hold = sum(h for _, h in prim.cycle.steps)
        return base + (ramp * len(temps) + hold) / self.time_scale

    async def call(self, prim: Primitive) -> list[dict[str, Any]] | None:
        tc = self.frontend
        if prim.op == "open_lid":
            await tc.open_lid()
        elif prim.op == "close_lid":
            await tc.close_lid()
        elif prim.op == "set_block":
            assert prim.celsius is not None
            await tc.set_block_temperature([prim.celsius])
        elif prim.op == "set_lid":
            assert prim.celsius is not None
            await tc.set_lid_temperature([prim.celsius])
        elif prim.op == "stop":
            await tc.deactivate_block()
            await tc.deactivate_lid()
        else:
            return await self._cycle(prim)
        return None

    async def _cycle(self, prim: Primitive) -> list[dict[str, Any]]:
        """One pass through a stage's steps: hand it to the machine, poll until it ends."""
        assert prim.cycle is not None
        cycle = prim.cycle
        stage = Stage(steps=[Step([c], hold_seconds=h) for c, h in cycle.steps], repeats=1)
        protocol = Protocol(stages=[stage])
        new_profile = (cycle.stage, cycle.number) == (1, 1)
        first = {"first": new_profile} if self.sim is not None else {}
        await self.frontend.run_protocol(protocol, self.config.block_max_volume_ul, **first)
        poll = min(1.0, max(0.01, 1.0 / self.time_scale))
        while await self.frontend.is_profile_running():
            await self.pause(poll)
        block = await self.frontend.get_block_current_temperature()
        return [{"type": "cycle_completed", "data": {**cycle_data(prim), "block_c": block[0]}}]

    # ------------------------------------------------------------------ read back
    async def observe(self, labware: set[str] | None = None) -> dict[str, Any] | None:
        """What the instrument reports of itself; None when it cannot be reached."""
        sim = self.sim
        if sim is not None:
            return dict(sim.read_back())
        lid_open = await self.hardware_read(self.frontend.get_lid_open)
        block = await self.hardware_read(self.frontend.get_block_current_temperature)
        if lid_open is None or block is None:
            return None
        # A hardware thermocycler does not report the plate on its block: a person confirms.
        return {"lid_open": bool(lid_open), "block_c": block[0], "complete": False}
