"""A PyLabRobot heater-shaker backend that acts on Labwright's simulated world.

It overrides only the machine calls (like PyLabRobot's chatterbox), so the real
``HeaterShaker`` frontend runs above it. It never prints (stdout may carry an MCP stream).

Physics: the block moves toward its target (or, heater off, toward ambient) at
``ramp_c_per_min``, in simulated time: real elapsed seconds x ``time_scale``. The world keeps
the ramp's start temperature and wall-clock start, so any process computes the same current
temperature. Faults from the world's fault plan fire here, on each action (never on reads):
``delay``, ``hang``, ``disconnect``, ``crash``, ``adapter_fault`` and
``temperature_never_reached`` (the block stalls ``short_by_c``, default 5 C, short of its goal).
"""

from __future__ import annotations

import math
import time
from typing import Any

from pylabrobot.heating_shaking import HeaterShakerBackend

from device_servers.heater_shaker.config import HeaterShakerConfig
from device_servers.sim.faults import HeatedSimulation
from device_servers.sim.world import SimWorld


class SimulatedHeaterShakerBackend(HeatedSimulation, HeaterShakerBackend):
    """One heater-shaker in the simulated world, with fault injection."""

    device = "the heater-shaker"

    def __init__(self, world: SimWorld, config: HeaterShakerConfig) -> None:
        super().__init__(world, config.id, time_scale=config.time_scale, ambient_c=config.ambient_c)
        self.holder = f"{config.id}:holder"
        self.ramp_c_per_min = config.ramp_c_per_min

    # -------------------------------------------------------------- lifecycle
    async def setup(self) -> None:
        if "t0" not in self.world.status(self.instrument):
            self.world.set_status(
                self.instrument,
                target_c=None,
                start_c=self.ambient_c,
                t0=time.time(),
                short_by_c=0.0,
                locked=False,
                shaking=False,
                rpm=0,
            )

    def abort(self) -> None:
        """The emergency path: interrupt a hanging call, stop the motor, heater off.

        Like a hardware stop relay it bypasses the command channel (and the fault plan).
        """
        super().abort()
        self._rebase(target_c=None)
        self.world.set_status(self.instrument, shaking=False, rpm=0)

    @property
    def supports_active_cooling(self) -> bool:
        return True

    @property
    def supports_locking(self) -> bool:
        return True

    # -------------------------------------------------------------- physics
    def temperature(self, status: dict[str, Any] | None = None) -> float:
        """The block temperature now (degrees Celsius)."""
        st = status if status is not None else self.world.status(self.instrument)
        start = float(st.get("start_c", self.ambient_c))
        goal = st.get("target_c")
        goal = self.ambient_c if goal is None else float(goal)
        elapsed = self.sim_seconds_since(float(st.get("t0", time.time())))
        reach = max(abs(goal - start) - float(st.get("short_by_c", 0.0)), 0.0)
        moved = min(self.ramp_c_per_min / 60.0 * elapsed, reach)
        return start + math.copysign(moved, goal - start)

    def stall(self, short_by_c: float) -> None:
        """The block stops short of its goal from where it is now."""
        self._rebase()
        super().stall(short_by_c)

    def _rebase(self, **values: Any) -> None:
        """Start a new ramp from the temperature the block has now."""
        self.world.set_status(
            self.instrument, start_c=self.temperature(), t0=time.time(), short_by_c=0.0, **values
        )

    # -------------------------------------------------------------- machine calls
    async def set_temperature(self, temperature: float) -> None:
        await self.act_on("set_temperature", lambda: self._rebase(target_c=float(temperature)))

    async def get_current_temperature(self) -> float:
        return round(self.temperature(), 2)

    async def deactivate(self) -> None:
        await self.act_on("deactivate", lambda: self._rebase(target_c=None))

    async def start_shaking(self, speed: float) -> None:
        def effect() -> None:
            st = self.world.status(self.instrument)
            if not st.get("locked"):
                self.world.incident(
                    self.instrument, "shaken_unlocked", {"rpm": speed, "plate": self._plate()}
                )
            self.world.set_status(self.instrument, shaking=True, rpm=int(speed))

        await self.act_on("start_shaking", effect)

    async def stop_shaking(self) -> None:
        await self.act_on(
            "stop_shaking", lambda: self.world.set_status(self.instrument, shaking=False, rpm=0)
        )

    async def lock_plate(self) -> None:
        await self.act_on("lock_plate", lambda: self.world.set_status(self.instrument, locked=True))

    async def unlock_plate(self) -> None:
        await self.act_on(
            "unlock_plate", lambda: self.world.set_status(self.instrument, locked=False)
        )

    # -------------------------------------------------------------- read back
    def _plate(self) -> str | None:
        return self.world.plate_at(self.holder)

    def read_back(self) -> dict[str, Any]:
        """What the instrument's sensors report (complete: it can see all it is believed)."""
        st = self.world.status(self.instrument)
        return {
            "current_c": round(self.temperature(st), 2),
            "target_c": st.get("target_c"),
            "locked": bool(st.get("locked", False)),
            "shaking": bool(st.get("shaking", False)),
            "rpm": int(st.get("rpm", 0)),
            "plate": self._plate(),
            "complete": True,
        }
