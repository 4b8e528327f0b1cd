"""Faults every simulated instrument plays the same way; each backend adds its own kinds.

A simulated backend asks the world for the fault (if any) that fires on an operation and
plays it here: slow down, hang, drop the connection (before or after the effect), crash the
server process, or report an unknown firmware state.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from device_servers.sim.world import SimWorld

COMMON_FAULTS = frozenset({"delay", "hang", "disconnect", "crash", "adapter_fault"})
YIELDS_PER_OPERATION = 4


async def play_common_fault(
    kind: str,
    params: dict[str, Any],
    effect: Callable[[], Any],
    sleep: Callable[[float], Awaitable[None]],
    device: str,
) -> Any:
    """Play one of :data:`COMMON_FAULTS` around ``effect``; returns what the effect returned."""
    if kind in ("delay", "hang"):
        await sleep(float(params.get("seconds", 0.05 if kind == "delay" else 3600)))
        return effect()
    if kind == "disconnect":
        if params.get("after_effect", False):
            effect()
        raise ConnectionError(f"connection to {device} was lost")
    if kind == "crash":
        if params.get("after_effect", True):
            effect()
        os._exit(137)  # a process crash: no cleanup, no ledger outcome
    if kind == "adapter_fault":
        raise RuntimeError(f"{device} reported an unknown firmware state")
    raise ValueError(f"{kind!r} is not a common fault")


class SimulatedBackend:
    """What every simulated PyLabRobot backend shares: the world, its faults, abortable waits.

    Mixed in before the PyLabRobot backend base (``class X(SimulatedBackend, HeaterShakerBackend)``)
    so the real frontend runs above it. A machine call performs its effect through :meth:`act`,
    which plays the fault the world's plan fires on that operation, if any: the common ones
    here, the kind's own in :meth:`play_own`. ``abort`` (cancel_run, emergency_stop) interrupts
    any wait in :meth:`sleep` with ``ConnectionAbortedError``, and stops the operation about
    to act: :meth:`act` yields to the event loop first (a simulated machine call takes no real
    time, so without it a 1,000-operation command would never let an e-stop in) and checks.
    ``begin`` (each operation's start) clears an earlier abort.
    """

    device = "the instrument"  # how a failure names it

    def __init__(
        self,
        world: SimWorld,
        instrument: str,
        *args: Any,
        time_scale: float = 1.0,
        ambient_c: float = 22.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.world = world
        self.instrument = instrument
        self.time_scale = time_scale  # simulated seconds per real second
        self.ambient_c = ambient_c  # what a heater off drifts back to
        self._abort = asyncio.Event()
        self._time_left: float | None = None  # of the current command, in its own waits

    def allow(self, seconds: float | None) -> None:
        """Start a command that may spend ``seconds`` waiting on the instrument (None: no limit).

        A simulated command's time limit counts the instrument's own waits (travel, a hold,
        a hang), never the host's: a loaded machine that runs the simulation slowly cannot
        make a 0.1 s motion time out, and a hang still times out after exactly its limit.
        """
        self._time_left = seconds

    def spend(self, seconds: float) -> tuple[float, bool]:
        """Take ``seconds`` of the command's time: (how long to wait, whether the command
        runs out of time at the end of that wait)."""
        left = self._time_left
        if left is None:
            return seconds, False
        if seconds > left:
            self._time_left = 0.0
            return left, True
        self._time_left = left - seconds
        return seconds, False

    def sim_seconds_since(self, t0: float) -> float:
        """Simulated seconds since the wall-clock time ``t0`` (any process computes the same)."""
        return max(time.time() - t0, 0.0) * self.time_scale

    async def stop(self) -> None:
        self._abort.set()

    def abort(self) -> None:
        """Interrupt the current operation (the backend's abort path)."""
        self._abort.set()

    def begin(self) -> None:
        """An operation starts: an abort before it was for an earlier one."""
        self._abort.clear()

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds``, unless an abort comes first (then ``ConnectionAbortedError``) or
        the command runs out of time first (then ``TimeoutError``, at its limit)."""
        if self._abort.is_set():
            raise ConnectionAbortedError("operation aborted")
        wait, runs_out = self.spend(seconds)
        try:
            await asyncio.wait_for(self._abort.wait(), timeout=wait)
        except TimeoutError:
            if runs_out:
                raise TimeoutError(f"{self.device} did not answer within its time") from None
            return
        raise ConnectionAbortedError("operation aborted")

    async def act(
        self,
        target: dict[str, Any],
        effect: Callable[[], Any],
        applies: Callable[[str], bool] | None = None,
        before: Callable[[], Awaitable[None]] | None = None,
    ) -> Any:
        """Perform ``effect`` for the operation ``target`` ({op, ...}) under the fault plan.

        ``applies(kind)``: whether a fault of that kind can fire on this operation;
        ``before``: what the machine does between being asked and the effect (travel).
        """
        # An e-stop sent meanwhile gets through here, before the effect: a request takes a few
        # hops from the transport to its handler, one per turn of the event loop.
        for _ in range(YIELDS_PER_OPERATION):
            await asyncio.sleep(0)
        if self._abort.is_set():
            raise ConnectionAbortedError("operation aborted")
        fault = self.world.next_fault(self.instrument, target, applies=applies)
        if before is not None:
            await before()
        if fault is None:
            return effect()
        kind, params = fault["kind"], fault["params"]
        if kind in COMMON_FAULTS:
            return await play_common_fault(kind, params, effect, self.sleep, self.device)
        return await self.play_own(kind, params, effect, target)

    async def act_on(self, op: str, effect: Callable[[], Any]) -> Any:
        """:meth:`act` for an operation known by its name alone."""
        return await self.act({"op": op}, effect)

    async def play_own(
        self, kind: str, params: dict[str, Any], effect: Callable[[], Any], target: dict[str, Any]
    ) -> Any:
        """A fault of the kind's own (an empty grasp, a NaN reading); default: no fault."""
        return effect()


class HeatedSimulation(SimulatedBackend):
    """A simulated instrument with a heater: ``temperature_never_reached`` (params
    ``short_by_c``, default 5 C) makes it stall that far short of its goal."""

    def stall(self, short_by_c: float) -> None:
        self.world.set_status(self.instrument, short_by_c=short_by_c)

    async def play_own(
        self, kind: str, params: dict[str, Any], effect: Callable[[], Any], target: dict[str, Any]
    ) -> Any:
        result = effect()
        if kind == "temperature_never_reached":
            self.stall(float(params.get("short_by_c", 5.0)))
        return result
