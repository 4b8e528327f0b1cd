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

from device_servers.errors import BackendFailed, Code, DeviceError
from device_servers.heater_shaker.commands import Primitive
from device_servers.heater_shaker.config import HeaterShakerConfig
from device_servers.heater_shaker.sim_backend import SimulatedHeaterShakerBackend
from device_servers.kind import AdapterBase
from device_servers.sim.world import SimWorld


class HeaterShakerAdapter(AdapterBase[HeaterShakerConfig]):
    """PyLabRobot ``HeaterShaker`` on the configured backend."""

    backend_base = HeaterShakerBackend

    def __init__(self, config: HeaterShakerConfig, world: SimWorld | None) -> None:
        super().__init__(config, world)
        # Simulated instruments run time_scale times faster than the wall clock.
        self.time_scale = config.time_scale if config.simulated else 1.0
        self._hs: HeaterShaker | None = None

    def simulated_backend(self, world: SimWorld) -> SimulatedHeaterShakerBackend:
        return SimulatedHeaterShakerBackend(
            world,
            self.config.id,
            ambient_c=self.config.ambient_c,
            ramp_c_per_min=self.config.ramp_c_per_min,
            time_scale=self.config.time_scale,
        )

    @property
    def frontend(self) -> HeaterShaker:
        if self._hs is None:
            self._hs = HeaterShaker(
                name=self.config.id,
                size_x=146.2,
                size_y=103.8,
                size_z=74.11,
                backend=self.backend,
                child_location=Coordinate(x=9.66, y=9.05, z=74.11),
            )
        return self._hs

    # ------------------------------------------------------------------ lifecycle
    async def stop(self) -> None:
        # Closing the server leaves the instrument as it is (a run may resume after a
        # restart); PyLabRobot's HeaterShaker.stop() would switch everything off.
        await self.backend.stop()

    async def hardware_abort(self) -> None:
        """Make the instrument safe: motor stopped, heater off."""
        await self.frontend.stop_shaking()
        await self.frontend.deactivate()

    def translate_own(self, exc: BaseException, where: str) -> DeviceError | None:
        if isinstance(exc, TimeoutError):
            return BackendFailed(
                Code.HARDWARE_TIMEOUT,
                f"{where} did not finish in time",
                "the instrument state is unknown: read_back before anything else; if the block "
                "never reaches its target, ask a person to check the heater",
                defined=False,
            )
        if isinstance(exc, ValueError):  # the frontend refuses (e.g. cooling without a cooler)
            return BackendFailed(
                Code.OUT_OF_RANGE, f"{where}: {exc}", "choose a setting the instrument supports"
            )
        return None

    # ------------------------------------------------------------------ commands
    def timeout(self, prim: Primitive) -> float:
        base = self.config.command_timeout_s
        if prim.op == "wait_for_temperature" and prim.timeout_s is not None:
            return base + prim.timeout_s / self.time_scale
        if prim.op == "shake" and prim.duration_s is not None:
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
