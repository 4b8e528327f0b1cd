"""The heater-shaker's adapter: the only module of this server (with the simulated backend)
that imports PyLabRobot.

It builds PyLabRobot's ``HeaterShaker`` frontend on the configured backend (simulated by
default; a hardware backend only when configured), executes primitives through it, reports
what the instrument measured (``temperature_reached``) and translates every PyLabRobot or
backend exception into a Labwright :class:`DeviceError` with a code, once, here.

Durations are instrument time: a simulated backend runs ``time_scale`` times faster than the
wall clock, so waits and shakes take ``seconds / time_scale`` real seconds.
"""

from __future__ import annotations

from typing import Any

import anyio
from pylabrobot.heating_shaking import HeaterShaker, HeaterShakerBackend
from pylabrobot.resources import Coordinate

from device_servers.heater_shaker.commands import Primitive
from device_servers.heater_shaker.config import HeaterShakerConfig
from device_servers.heater_shaker.sim_backend import SimulatedHeaterShakerBackend
from device_servers.kind import HeatedAdapter

# The frontend, its footprint (mm), where the plate sits on it.
MACHINE = (HeaterShaker, (146.2, 103.8, 74.11), Coordinate(x=9.66, y=9.05, z=74.11))


class HeaterShakerAdapter(HeatedAdapter[HeaterShakerConfig]):
    """PyLabRobot ``HeaterShaker`` on the configured backend."""

    backend_base = HeaterShakerBackend
    simulated_class = SimulatedHeaterShakerBackend
    machine = MACHINE
    safe_calls = ("stop_shaking", "deactivate")  # motor stopped, heater off

    # ------------------------------------------------------------------ commands
    def timeout(self, prim: Primitive) -> float:
        base = self.config.command_timeout_s
        if prim.op == "wait_for_temperature" and prim.timeout_s is not None:
            return base + prim.timeout_s / self.time_scale
        if prim.op in ("shake", "hold") and prim.duration_s is not None:
            return base + prim.duration_s / self.time_scale
        return base

    async def call(self, prim: Primitive) -> list[dict[str, Any]] | None:
        hs = self.frontend
        if prim.op == "set_temperature":
            assert prim.celsius is not None
            await hs.set_temperature(prim.celsius)
        elif prim.op == "wait_for_temperature":
            return await self._wait(prim)
        elif prim.op == "shake":
            assert prim.rpm is not None and prim.duration_s is not None
            # The frontend (re)locks the plate when the backend can, then starts the motor.
            await hs.shake(speed=prim.rpm)
            await self.pause(prim.duration_s / self.time_scale)
            await hs.stop_shaking()
        elif prim.op == "hold":
            assert prim.duration_s is not None
            await self.pause(prim.duration_s / self.time_scale)  # the block holds its target
        elif prim.op == "stop":
            await hs.stop_shaking()
            await hs.deactivate()
        elif prim.op == "lock":
            await hs.lock_plate()
        else:
            await hs.unlock_plate()
        return None

    async def _wait(self, prim: Primitive) -> list[dict[str, Any]]:
        """Poll the block until it is within tolerance of the target, in instrument time."""
        assert prim.celsius is not None and prim.tolerance_c is not None
        limit = (prim.timeout_s or 1800) / self.time_scale
        poll = min(1.0, max(0.01, 1.0 / self.time_scale))
        with anyio.move_on_after(limit) as scope:
            while True:
                current = await self.frontend.get_temperature()
                if abs(current - prim.celsius) <= prim.tolerance_c:
                    return [
                        {
                            "type": "temperature_reached",
                            "data": {"target_c": prim.celsius, "current_c": current},
                        }
                    ]
                await self.pause(poll)
        assert scope.cancel_called
        raise TimeoutError(f"the block did not reach {prim.celsius} C within {prim.timeout_s} s")

    # ------------------------------------------------------------------ read back
    async def observe(self, labware: set[str] | None = None) -> dict[str, Any] | None:
        """What the instrument reports of itself; None when it cannot be reached."""
        sim = self.sim
        if sim is not None:
            return dict(sim.read_back())
        current = await self.hardware_read(self.frontend.get_temperature)
        if current is None:
            return None
        # A hardware heater-shaker reports its temperature, not its clamp or its plate.
        return {
            "current_c": current,
            "target_c": self.frontend.target_temperature,
            "complete": False,
        }
