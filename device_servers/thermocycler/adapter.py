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

from device_servers.errors import BackendFailed, Code, DeviceError
from device_servers.kind import AdapterBase
from device_servers.sim.world import SimWorld
from device_servers.thermocycler.commands import Primitive
from device_servers.thermocycler.config import ThermocyclerConfig
from device_servers.thermocycler.sim_backend import SimulatedThermocyclerBackend
from device_servers.thermocycler.twin import cycle_data


class ThermocyclerAdapter(AdapterBase[ThermocyclerConfig]):
    """PyLabRobot ``Thermocycler`` on the configured backend."""

    backend_base = ThermocyclerBackend
    subject = "the thermocycler"

    def __init__(self, config: ThermocyclerConfig, world: SimWorld | None) -> None:
        super().__init__(config, world)
        # Simulated instruments run time_scale times faster than the wall clock.
        self.time_scale = config.time_scale if config.simulated else 1.0
        self._tc: Thermocycler | None = None

    def simulated_backend(self, world: SimWorld) -> SimulatedThermocyclerBackend:
        cfg = self.config
        return SimulatedThermocyclerBackend(
            world,
            cfg.id,
            ambient_c=cfg.ambient_c,
            block_ramp_c_per_s=cfg.block_ramp_c_per_s,
            lid_ramp_c_per_s=cfg.lid_ramp_c_per_s,
            time_scale=cfg.time_scale,
        )

    @property
    def frontend(self) -> Thermocycler:
        if self._tc is None:
            self._tc = Thermocycler(
                name=self.config.id,
                size_x=172.0,
                size_y=316.0,
                size_z=154.0,
                backend=self.backend,
                child_location=Coordinate(x=0.0, y=82.0, z=97.0),
            )
        return self._tc

    # ------------------------------------------------------------------ lifecycle
    async def stop(self) -> None:
        # Closing the server leaves the block as it is (a profile may resume after a restart).
        await self.backend.stop()

    async def hardware_abort(self) -> None:
        """Make the instrument safe: heaters off (the lid stays where it is)."""
        await self.frontend.deactivate_block()
        await self.frontend.deactivate_lid()

    def translate_own(self, exc: BaseException, where: str) -> DeviceError | None:
        if isinstance(exc, TimeoutError):
            return BackendFailed(
                Code.HARDWARE_TIMEOUT,
                f"{where} did not finish in time",
                "the thermocycler's state is unknown: read_back before anything else; if the "
                "block never reaches its temperature, ask a person to check the heater",
                defined=False,
            )
        if isinstance(exc, ValueError):  # the frontend refuses (zones, volumes)
            return BackendFailed(
                Code.OUT_OF_RANGE, f"{where}: {exc}", "choose a setting the instrument supports"
            )
        return None

    # ------------------------------------------------------------------ commands
    def where(self, prim: Primitive) -> str:
        if prim.op == "cycle":
            return f"cycle {prim.cycle}/{prim.of} of stage {prim.stage}"
        return prim.op

    def timeout(self, prim: Primitive) -> float:
        base = self.config.command_timeout_s
        if prim.op != "cycle":
            return base
        temps = [c for c, _ in prim.steps]
        ramp = (max(temps) - min(temps) + 100.0) / self.config.block_ramp_c_per_s
        hold = sum(h for _, h in prim.steps)
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
        stage = Stage(steps=[Step([c], hold_seconds=h) for c, h in prim.steps], repeats=1)
        protocol = Protocol(stages=[stage])
        first = {"first": prim.stage == 1 and prim.cycle == 1} if self.sim is not None else {}
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
