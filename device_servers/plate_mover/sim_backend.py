"""A PyLabRobot SCARA backend that acts on Labwright's simulated world.

It overrides only the machine calls, so PyLabRobot's ``ExperimentalSCARA`` frontend runs above
it. Positions are joint dicts; each named location has a synthetic one (see
:func:`synthetic_positions`) that this backend maps back to the location's name. A motion takes
``move_s`` real seconds and is abortable (``halt``). It never prints (stdout may be an MCP
stream). Faults from the world's fault plan fire here, at the lowest seam, never in the twin.

Like a real gripper, this one does not know what it holds: closing on nothing leaves it fully
closed (``is_gripper_closed``), which is how the adapter detects an empty grasp.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pylabrobot.arms.backend import AccessPattern, SCARABackend
from pylabrobot.arms.precise_flex.coords import PreciseFlexCartesianCoords
from pylabrobot.resources import Coordinate, Rotation

from device_servers.sim.faults import SimulatedBackend
from device_servers.sim.world import PhysicalError, SimWorld

Position = dict[int, float]


def synthetic_positions(locations: list[str]) -> dict[str, Position]:
    """One joint position per named location (joint 1 encodes which one)."""
    return {where: {1: i * 10.0, 2: 0.0, 3: 0.0, 4: 0.0} for i, where in enumerate(locations)}


def _key(position: Position) -> tuple[tuple[int, float], ...]:
    return tuple(sorted((int(j), round(float(v), 6)) for j, v in position.items()))


HOME: Position = {1: -10.0, 2: 0.0, 3: 0.0, 4: 0.0}


class SimulatedArmBackend(SimulatedBackend, SCARABackend):
    """A plate-moving arm on the simulated world, with fault injection."""

    device = "the arm"

    def __init__(
        self, world: SimWorld, instrument: str, positions: dict[str, Position], move_s: float
    ) -> None:
        super().__init__(world, instrument)
        self.holder = f"{instrument}:gripper"
        self.move_s = move_s
        self._names = {_key(pos): where for where, pos in positions.items()}
        self._position: Position = dict(HOME)
        self._closed = False

    # -------------------------------------------------------------- lifecycle
    async def setup(self) -> None:
        self._abort.clear()
        self.world.set_status(self.instrument, busy=False)

    async def halt(self) -> None:
        """Stop any motion now (PyLabRobot's name for the abort path)."""
        self.abort()

    def _name(self, position: Any) -> str:
        if not isinstance(position, dict):
            raise PhysicalError("unreachable", "the simulated arm takes joint positions only")
        where = self._names.get(_key(position))
        if where is None:
            raise PhysicalError("unreachable", f"no taught location at joints {position}")
        return where

    async def _act(
        self, op: str, plate: str | None, location: str | None, effect: Callable[[], None]
    ) -> None:
        """One motion: travel, then the effect, with whatever fault the world plans."""
        self.world.set_status(self.instrument, busy=True)
        try:
            await self.act(
                {"op": op, "plate": plate, "location": location},
                effect,
                applies=lambda kind: kind != "empty_grasp" or op == "pick",
                before=lambda: self.sleep(self.move_s),
            )
        finally:
            self.world.set_status(self.instrument, busy=False)

    async def play_own(
        self, kind: str, params: dict[str, Any], effect: Callable[[], Any], target: dict[str, Any]
    ) -> Any:
        if kind == "empty_grasp" and target["op"] == "pick":
            self._closed = True  # the fingers met nothing: fully closed
        else:
            effect()

    # -------------------------------------------------------------- gripper
    async def open_gripper(self, gripper_width: float) -> None:
        self._closed = False

    async def close_gripper(self, gripper_width: float) -> None:
        # Without a pick, nothing is between the fingers.
        self._closed = self.held_plate() is None

    async def is_gripper_closed(self) -> bool:
        """Fully closed (end of travel): the gripper holds nothing."""
        return self._closed

    def held_plate(self) -> str | None:
        """What is physically between the fingers."""
        return self.world.plate_at(self.holder)

    # -------------------------------------------------------------- motions
    async def home(self) -> None:
        def effect() -> None:
            self._position = dict(HOME)
            self.world.set_status(self.instrument, homed=True)

        await self._act("home", self.held_plate(), None, effect)

    async def move_to_safe(self) -> None:
        await self.move_to(HOME)

    async def move_to(self, position: PreciseFlexCartesianCoords | Position) -> None:
        where = self._name(position) if position != HOME else None

        def effect() -> None:
            self._position = dict(position) if isinstance(position, dict) else self._position

        await self._act("move", self.held_plate(), where, effect)

    async def approach(
        self,
        position: PreciseFlexCartesianCoords | Position,
        access: AccessPattern | None = None,
    ) -> None:
        await self.move_to(position)

    async def pick_up_resource(
        self,
        position: PreciseFlexCartesianCoords | Position,
        plate_width: float,
        access: AccessPattern | None = None,
    ) -> None:
        where = self._name(position)
        there = self.world.plate_at(where)

        def effect() -> None:
            self._position = dict(position) if isinstance(position, dict) else self._position
            if there is None:
                self._closed = True
                return
            try:
                self.world.take_plate(there, where, self.holder)
            except PhysicalError as exc:
                if exc.kind != "empty_grasp":
                    raise
                self._closed = True
                return
            self._closed = False  # stopped at the plate's width

        await self._act("pick", there, where, effect)

    async def drop_resource(
        self,
        position: PreciseFlexCartesianCoords | Position,
        access: AccessPattern | None = None,
    ) -> None:
        where = self._name(position)
        held = self.held_plate()

        def effect() -> None:
            self._position = dict(position) if isinstance(position, dict) else self._position
            if held is None:
                raise PhysicalError("not_held", f"the gripper holds no plate to put at {where}")
            self.world.put_plate(held, self.holder, where)
            self._closed = False  # opened to release

        await self._act("place", held, where, effect)

    async def get_joint_position(self) -> Position:
        return dict(self._position)

    async def get_cartesian_position(self) -> PreciseFlexCartesianCoords:
        return PreciseFlexCartesianCoords(
            location=Coordinate(x=self._position.get(1, 0.0), y=0.0, z=0.0),
            rotation=Rotation(),
        )

    async def freedrive_mode(self, free_axes: list[int]) -> None:
        raise NotImplementedError("the simulated arm has no freedrive mode")

    async def end_freedrive_mode(self) -> None:
        raise NotImplementedError("the simulated arm has no freedrive mode")

    # -------------------------------------------------------------- read back
    def read_back(self, plates: list[str]) -> dict[str, Any]:
        """What the arm's sensors and the lab report: plate places, gripper, homed."""
        return {
            "locations": {p: self.world.location_of(p) for p in plates},
            "holding": self.held_plate(),
            "homed": bool(self.world.status(self.instrument).get("homed", False)),
            "complete": True,
        }
