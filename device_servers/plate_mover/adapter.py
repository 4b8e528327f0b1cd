"""The plate mover's adapter: the only module of this server (with the simulated backend) that
imports PyLabRobot.

It constructs the arm backend (simulated by default; a hardware ``SCARABackend`` only when
configured), drives it through PyLabRobot's ``ExperimentalSCARA`` frontend, checks after every
pick that the gripper really holds the plate, reads back plate places, and tells the driver how
ready the instruments around a location are. Every exception is translated into a Labwright
:class:`DeviceError` with a code, once, here.
"""

from __future__ import annotations

import contextlib
from typing import Any

import pylabrobot.resources as plr_resources
from pylabrobot.arms.backend import SCARABackend, VerticalAccess
from pylabrobot.arms.scara import ExperimentalSCARA

from device_servers.contract import location_owner, station_ready
from device_servers.errors import BackendFailed, Code, ConfigurationError, DeviceError
from device_servers.kind import AdapterBase
from device_servers.plate_mover.commands import Primitive
from device_servers.plate_mover.config import PlateMoverConfig
from device_servers.plate_mover.sim_backend import (
    Position,
    SimulatedArmBackend,
    synthetic_positions,
)
from device_servers.sim.world import PhysicalError, SimWorld

SBS_WIDTH_MM = 85.48  # the short side of an SBS/ANSI footprint plate


class PlateMoverAdapter(AdapterBase[PlateMoverConfig]):
    """PyLabRobot ``ExperimentalSCARA`` on the configured backend."""

    backend_base = SCARABackend
    subject = "the arm"

    def __init__(self, config: PlateMoverConfig, world: SimWorld | None) -> None:
        super().__init__(config, world)
        self.id = config.id
        self.holder = f"{config.id}:gripper"
        self.positions, self._backend_args = self._positions()
        self._widths: dict[str, float] = {}

    # ------------------------------------------------------------------ construction
    def _positions(self) -> tuple[dict[str, Position], dict[str, Any]]:
        """Joint positions of every location; hardware needs taught ones (never synthetic)."""
        if self.config.simulated:
            return synthetic_positions(self.config.locations), {}
        args = dict(self.config.backend.args)
        taught = args.pop("taught_positions", None) or {}
        missing = [w for w in self.config.locations if w not in taught]
        if missing:
            raise ConfigurationError(
                f"backend.args.taught_positions: no taught joint position for "
                f"{', '.join(missing)}; a hardware arm never moves to a made-up position"
            )
        return {w: {int(j): float(v) for j, v in taught[w].items()} for w in taught}, args

    def simulated_backend(self, world: SimWorld) -> SimulatedArmBackend:
        move_s = self.config.move_seconds / self.config.time_scale
        return SimulatedArmBackend(world, self.id, self.positions, move_s)

    def hardware_args(self) -> dict[str, Any] | None:
        return self._backend_args

    def make_frontend(self) -> ExperimentalSCARA:
        return ExperimentalSCARA(backend=self.backend)

    @property
    def arm(self) -> ExperimentalSCARA:
        return self.frontend

    def plate_width(self, plate: str) -> float:
        """The gripping width of a plate, from its PyLabRobot type (SBS width if unknown)."""
        if plate not in self._widths:
            width = SBS_WIDTH_MM
            factory = getattr(plr_resources, self.config.plate_types.get(plate, ""), None)
            if callable(factory):
                with contextlib.suppress(Exception):
                    width = float(factory(name=plate).get_size_y())
            self._widths[plate] = width
        return self._widths[plate]

    # ------------------------------------------------------------------ lifecycle
    async def before_setup(self) -> None:
        if self.world is not None and self.sim is not None:
            # Plates start where the lab says, unless the world already knows better.
            for plate, where in self.config.initial_locations.items():
                self.world.place_plate(plate, where)

    async def hardware_abort(self) -> None:
        await self.backend.halt()

    def where(self, prim: Primitive) -> str:
        return f"{prim.op} {prim.plate or ''} at {prim.location or 'home'}".replace("  ", " ")

    def translate_own(self, exc: BaseException, where: str) -> DeviceError | None:
        if not isinstance(exc, PhysicalError):
            return None
        if exc.kind == "occupied":
            return BackendFailed(
                Code.DECK_COLLISION,
                f"{where}: {exc}",
                "the arm still holds the plate; a person checks both plates, then read_back "
                "and place it at a free location",
            )
        if exc.kind == "blocked":
            return BackendFailed(
                Code.DECK_COLLISION,
                f"{where}: {exc}",
                "the arm ran into a closed place: a person checks the arm, the plate and the "
                "instrument, then read_back both",
                defined=False,
            )
        if exc.kind == "not_held":
            return BackendFailed(
                Code.GRIP_FAILED,
                f"{where}: {exc}",
                "the plate may have been dropped: a person finds it, then read_back",
                defined=False,
            )
        return BackendFailed(Code.ADAPTER_FAULT, f"{where}: {exc}", "ask a person to check")

    # ------------------------------------------------------------------ commands
    async def call(self, prim: Primitive) -> list[dict[str, Any]] | None:
        """Perform one motion (no extra events)."""
        if prim.op == "home":
            await self.arm.home()
            return None
        plate = prim.plate or ""
        position = self.positions[prim.location or ""]
        if prim.op == "pick":
            width = self.plate_width(plate)
            await self.arm.pick_up_resource(position, plate_width=width, access=VerticalAccess())
            await self._check_grip(plate, prim.location or "", width)
        else:
            await self.arm.drop_resource(position, access=VerticalAccess())
        return None

    async def _check_grip(self, plate: str, location: str, width: float) -> None:
        """After a pick: the gripper must have stopped on the plate, not closed on nothing."""
        if await self.arm.is_gripper_closed():
            await self.arm.open_gripper(gripper_width=width)
            raise BackendFailed(
                Code.GRIP_FAILED,
                f"the gripper closed on nothing at {location}: {plate} was not picked up",
                f"read_back to see where {plate} is; move it again, or ask a person to check "
                "the plate's seating",
            )
        sim = self.sim
        held = sim.held_plate() if sim is not None else plate
        if held != plate:
            raise BackendFailed(
                Code.ADAPTER_FAULT,
                f"the gripper holds {held}, not {plate}",
                "a person checks which plate is where, then read_back",
                defined=False,
            )

    # ------------------------------------------------------------------ read back
    async def observe(self, labware: set[str] | None = None) -> dict[str, Any] | None:
        """Plate places, the held plate and homing as the instrument reports them.

        A hardware arm cannot see plate places: its read-back is partial (a person confirms).
        """
        plates = sorted(labware if labware is not None else self.config.plates)
        sim = self.sim
        if sim is not None:
            return sim.read_back(plates)
        if await self.hardware_read(self.arm.get_joint_position) is None:
            return None
        return {"locations": {}, "complete": False}

    # ------------------------------------------------------------------ the lab around it
    def ready(self, location: str, assumed: dict[str, Any] | None = None) -> bool | None:
        """Whether the instrument owning ``location`` lets the arm in; None: cannot tell.

        Its station (published by that instrument, given to the arm by the lab) says which
        facts must hold; a location no instrument describes is never ready. ``assumed``:
        facts of that instrument a simulation takes as given (they win).
        """
        station = self.config.stations_reached.get(location)
        if self.world is None or self.sim is None:
            # A hardware arm cannot see another instrument: only a shelf is surely free to use.
            if assumed or station is None or station.role == "shelf":
                return station_ready(station, assumed)
            return None
        status = {**self.world.status(location_owner(location)), **(assumed or {})}
        return station_ready(station, status)

    def occupant(self, location: str) -> tuple[bool, str | None]:
        """(known, plate at ``location``) as the instrument's sensors see it."""
        if self.world is None or self.sim is None:
            return False, None
        return True, self.world.plate_at(location)
