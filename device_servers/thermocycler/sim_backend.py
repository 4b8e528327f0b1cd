"""A PyLabRobot thermocycler backend that acts on Labwright's simulated world.

It overrides only the machine calls (like PyLabRobot's chatterbox), so the real
``Thermocycler`` frontend runs above it; it never prints (stdout may carry an MCP stream).

Physics, in simulated time (real elapsed seconds x ``time_scale``): the block moves toward its
target at ``block_ramp_c_per_s`` (heater off: toward ambient), the lid likewise. A profile
(``run_protocol``: one stage of steps, fire and forget) ramps to each step's temperature and
holds it; when its last hold ends the block keeps that temperature and the world counts one
cycle. The world keeps each ramp's start and wall-clock time, so every process computes the
same temperatures. Faults fire on each action: the common ones and
``temperature_never_reached`` (the block stalls ``short_by_c``, default 5 C, short of a target,
so a profile never ends).
"""

from __future__ import annotations

import math
import time
from typing import Any

from pylabrobot.thermocycling import ThermocyclerBackend
from pylabrobot.thermocycling.standard import BlockStatus, LidStatus, Protocol

from device_servers.sim.faults import HeatedSimulation
from device_servers.sim.world import SimWorld
from device_servers.thermocycler.config import ThermocyclerConfig


def _ramp(start: float, goal: float, rate: float, seconds: float, short_by: float = 0.0) -> float:
    reach = max(abs(goal - start) - short_by, 0.0)
    return start + math.copysign(min(rate * seconds, reach), goal - start)


class SimulatedThermocyclerBackend(HeatedSimulation, ThermocyclerBackend):
    """One thermocycler in the simulated world, with fault injection."""

    device = "the thermocycler"

    def __init__(self, world: SimWorld, config: ThermocyclerConfig) -> None:
        super().__init__(world, config.id, time_scale=config.time_scale, ambient_c=config.ambient_c)
        self.block = f"{config.id}:block"
        self.block_rate, self.lid_rate = config.block_ramp_c_per_s, config.lid_ramp_c_per_s

    # -------------------------------------------------------------- lifecycle
    async def setup(self) -> None:
        if "block_t0" not in self.world.status(self.instrument):
            now = time.time()
            self.world.set_status(
                self.instrument,
                lid_open=True,
                block_target=None,
                block_start_c=self.ambient_c,
                block_t0=now,
                lid_target=None,
                lid_start_c=self.ambient_c,
                lid_t0=now,
                short_by_c=0.0,
                profile=None,
                running=False,
                cycles_done=0,
            )

    def abort(self) -> None:
        """The emergency path: end a profile, heaters off (bypasses the fault plan)."""
        super().abort()
        self._rebase_block(block_target=None, profile=None, running=False)
        self._rebase_lid(lid_target=None)

    # -------------------------------------------------------------- physics
    def _profile_now(self, st: dict[str, Any]) -> tuple[float, int, float, bool]:
        """(block temperature, step index, hold left, finished) of the running profile."""
        prof = st["profile"]
        left = self.sim_seconds_since(float(prof["t0"]))
        temp = float(prof["start_c"])
        short = float(st.get("short_by_c", 0.0))
        for i, (celsius, hold) in enumerate(prof["steps"]):
            gap = abs(celsius - temp)
            if short and gap > short:
                return _ramp(temp, celsius, self.block_rate, left, short), i, hold, False
            ramp_s = gap / self.block_rate
            if left < ramp_s:
                return _ramp(temp, celsius, self.block_rate, left), i, hold, False
            if left < ramp_s + hold:
                return celsius, i, ramp_s + hold - left, False
            left -= ramp_s + hold
            temp = celsius
        return temp, len(prof["steps"]) - 1, 0.0, True

    def _status(self) -> dict[str, Any]:
        """The instrument's status, with a finished profile settled (one cycle more, the
        block holding its last temperature)."""
        st = self.world.status(self.instrument)
        if st.get("profile"):
            temp, _, _, finished = self._profile_now(st)
            if finished:
                self.world.set_status(
                    self.instrument,
                    profile=None,
                    running=False,
                    block_target=temp,
                    block_start_c=temp,
                    block_t0=time.time(),
                    cycles_done=int(st.get("cycles_done", 0)) + 1,
                )
                st = self.world.status(self.instrument)
        return st

    def block_temperature(self, st: dict[str, Any] | None = None) -> float:
        st = st if st is not None else self._status()
        if st.get("profile"):
            return self._profile_now(st)[0]
        goal = self.ambient_c if st.get("block_target") is None else float(st["block_target"])
        start = float(st.get("block_start_c", self.ambient_c))
        seconds = self.sim_seconds_since(float(st.get("block_t0", time.time())))
        return _ramp(start, goal, self.block_rate, seconds, float(st.get("short_by_c", 0.0)))

    def lid_temperature(self, st: dict[str, Any] | None = None) -> float:
        st = st if st is not None else self._status()
        goal = self.ambient_c if st.get("lid_target") is None else float(st["lid_target"])
        start = float(st.get("lid_start_c", self.ambient_c))
        return _ramp(
            start, goal, self.lid_rate, self.sim_seconds_since(float(st.get("lid_t0", 0.0)))
        )

    def _rebase_block(self, **values: Any) -> None:
        now = self.block_temperature()
        self.world.set_status(
            self.instrument, block_start_c=now, block_t0=time.time(), short_by_c=0.0, **values
        )

    def _rebase_lid(self, **values: Any) -> None:
        now = self.lid_temperature()
        self.world.set_status(self.instrument, lid_start_c=now, lid_t0=time.time(), **values)

    # -------------------------------------------------------------- machine calls
    async def open_lid(self) -> None:
        await self.act_on("open_lid", lambda: self.world.set_status(self.instrument, lid_open=True))

    async def close_lid(self) -> None:
        await self.act_on(
            "close_lid", lambda: self.world.set_status(self.instrument, lid_open=False)
        )

    async def set_block_temperature(self, temperature: list[float]) -> None:
        await self.act_on(
            "set_block_temperature",
            lambda: self._rebase_block(block_target=float(temperature[0]), profile=None),
        )

    async def set_lid_temperature(self, temperature: list[float]) -> None:
        await self.act_on(
            "set_lid_temperature", lambda: self._rebase_lid(lid_target=float(temperature[0]))
        )

    async def deactivate_block(self) -> None:
        await self.act_on(
            "deactivate_block",
            lambda: self._rebase_block(block_target=None, profile=None, running=False),
        )

    async def deactivate_lid(self) -> None:
        await self.act_on("deactivate_lid", lambda: self._rebase_lid(lid_target=None))

    async def run_protocol(
        self, protocol: Protocol, block_max_volume: float, first: bool = False
    ) -> None:
        """Start one stage's steps (fire and forget); ``first``: a new profile's first cycle."""
        steps = [[float(s.temperature[0]), float(s.hold_seconds)] for s in protocol.stages[0].steps]

        def effect() -> None:
            start = self.block_temperature()
            done = 0 if first else int(self.world.status(self.instrument).get("cycles_done", 0))
            self.world.set_status(
                self.instrument,
                profile={"steps": steps, "t0": time.time(), "start_c": start},
                running=True,
                cycles_done=done,
                short_by_c=0.0,
            )

        await self.act_on("run_protocol", effect)

    # -------------------------------------------------------------- sensors
    async def get_block_current_temperature(self) -> list[float]:
        return [round(self.block_temperature(), 2)]

    async def get_block_target_temperature(self) -> list[float]:
        target = self._status().get("block_target")
        return [] if target is None else [float(target)]

    async def get_lid_current_temperature(self) -> list[float]:
        return [round(self.lid_temperature(), 2)]

    async def get_lid_target_temperature(self) -> list[float]:
        target = self._status().get("lid_target")
        return [] if target is None else [float(target)]

    async def get_lid_open(self) -> bool:
        return bool(self._status().get("lid_open", True))

    async def get_lid_status(self) -> LidStatus:
        return LidStatus.HOLDING_AT_TARGET if self._status().get("lid_target") else LidStatus.IDLE

    async def get_block_status(self) -> BlockStatus:
        st = self._status()
        return BlockStatus.HOLDING_AT_TARGET if st.get("block_target") else BlockStatus.IDLE

    async def get_hold_time(self) -> float:
        st = self._status()
        return self._profile_now(st)[2] if st.get("profile") else 0.0

    async def get_current_cycle_index(self) -> int:
        return 0

    async def get_total_cycle_count(self) -> int:
        return 1 if self._status().get("profile") else 0

    async def get_current_step_index(self) -> int:
        st = self._status()
        return self._profile_now(st)[1] if st.get("profile") else 0

    async def get_total_step_count(self) -> int:
        prof = self._status().get("profile")
        return len(prof["steps"]) if prof else 0

    # -------------------------------------------------------------- read back
    def read_back(self) -> dict[str, Any]:
        """What the instrument's sensors report (complete: it sees all it is believed)."""
        st = self._status()
        return {
            "lid_open": bool(st.get("lid_open", True)),
            "block_c": round(self.block_temperature(st), 2),
            "block_target_c": st.get("block_target"),
            "lid_c": round(self.lid_temperature(st), 2),
            "lid_target_c": st.get("lid_target"),
            "running": bool(st.get("running", False)),
            "cycles_done": int(st.get("cycles_done", 0)),
            "plate": self.world.plate_at(self.block),
            "complete": True,
        }
