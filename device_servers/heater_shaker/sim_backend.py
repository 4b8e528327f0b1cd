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
from collections.abc import Callable
from typing import Any

from pylabrobot.heating_shaking import HeaterShakerBackend

from device_servers.sim.faults import SimulatedBackend
from device_servers.sim.world import SimWorld


class SimulatedHeaterShakerBackend(SimulatedBackend, HeaterShakerBackend):
    """One heater-shaker in the simulated world, with fault injection."""

    device = "the heater-shaker"

    def __init__(
        self,
        world: SimWorld,
        instrument: str,
        *,
        ambient_c: float = 22.0,
        ramp_c_per_min: float = 10.0,
        time_scale: float = 1.0,
    ) -> None:
        super().__init__(world, instrument)
        self.holder = f"{instrument}:holder"
        self.ambient_c = ambient_c
        self.ramp_c_per_min = ramp_c_per_min
        self.time_scale = time_scale

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
        elapsed = max(time.time() - float(st.get("t0", time.time())), 0.0) * self.time_scale
        reach = max(abs(goal - start) - float(st.get("short_by_c", 0.0)), 0.0)
        moved = min(self.ramp_c_per_min / 60.0 * elapsed, reach)
        return start + math.copysign(moved, goal - start)

    def _rebase(self, **values: Any) -> None:
        """Start a new ramp from the temperature the block has now."""
        self.world.set_status(
            self.instrument, start_c=self.temperature(), t0=time.time(), short_by_c=0.0, **values
        )

    async def _act(self, op: str, effect: Callable[[], None]) -> None:
        await self.act({"op": op}, effect)

    async def play_own(
        self, kind: str, params: dict[str, Any], effect: Callable[[], Any], target: dict[str, Any]
    ) -> Any:
        effect()
        if kind == "temperature_never_reached":
            self._rebase()
            self.world.set_status(self.instrument, short_by_c=float(params.get("short_by_c", 5.0)))

    # -------------------------------------------------------------- machine calls
    async def set_temperature(self, temperature: float) -> None:
        await self._act("set_temperature", lambda: self._rebase(target_c=float(temperature)))

    async def get_current_temperature(self) -> float:
        return round(self.temperature(), 2)

    async def deactivate(self) -> None:
        await self._act("deactivate", lambda: self._rebase(target_c=None))

    async def start_shaking(self, speed: float) -> None:
        def effect() -> None:
            st = self.world.status(self.instrument)
            if not st.get("locked"):
                self.world.incident(
                    self.instrument, "shaken_unlocked", {"rpm": speed, "plate": self._plate()}
                )
            self.world.set_status(self.instrument, shaking=True, rpm=int(speed))

        await self._act("start_shaking", effect)

    async def stop_shaking(self) -> None:
        await self._act(
            "stop_shaking", lambda: self.world.set_status(self.instrument, shaking=False, rpm=0)
        )

    async def lock_plate(self) -> None:
        await self._act("lock_plate", lambda: self.world.set_status(self.instrument, locked=True))

    async def unlock_plate(self) -> None:
        await self._act(
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
