"""The adapter a kind plugs in: the seam to the instrument, simulated or real.

asyncio and anyio are imported where an adapter is built or acts: simulating a protocol
imports this module (every driver names its adapter) but never builds one.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar

from device_servers.adapter_support import (
    backend_class,
    common_failure,
    hardware_backend,
    stdout_to_stderr,
)
from device_servers.contract import InstrumentBase
from device_servers.errors import BackendFailed, Code, ConfigurationError, DeviceError
from device_servers.kind._command import Event

if TYPE_CHECKING:
    from device_servers.sim.world import SimWorld


class Adapter(Protocol):
    """The seam to the instrument (simulated or real)."""

    async def setup(self) -> None: ...
    async def close(self) -> None: ...
    async def abort(self) -> None: ...
    async def execute(self, prim: Any, timeout_s: float | None = None) -> list[Event] | None: ...
    async def observe(self, labware: set[str] | None = None) -> dict[str, Any] | None: ...
    async def resync(self) -> dict[str, Any] | None: ...
    def check_backend(self) -> None: ...


ConfigT = TypeVar("ConfigT", bound=InstrumentBase)
T = TypeVar("T")


# A simulated command is also bounded by wall time: its limit x this + this many seconds.
SIM_HOST_SLACK = 10.0


class Aborted(Exception):
    """cancel_run or emergency_stop interrupted the operation (see :meth:`AdapterBase.pause`)."""


class AdapterBase(Generic[ConfigT]):
    """PyLabRobot's frontend on a lazily built backend; lifecycle; one translation of failures.

    A subclass names ``backend_base`` (the PyLabRobot backend class a hardware backend must
    be), builds its simulated backend (``simulated_backend``) and its frontend (``frontend``),
    performs one primitive (``call``) and says what the instrument reports (``observe``).
    Every exception of a call goes through :meth:`translate` once: ``translate_own`` for the
    kind's own failures, then what any backend can raise.
    """

    backend_base: ClassVar[type]
    # The simulated backend, built on (world, config) unless simulated_backend says otherwise.
    simulated_class: ClassVar[type]
    subject: ClassVar[str] = "the instrument"

    def __init__(self, config: ConfigT, world: SimWorld | None) -> None:
        self.config = config
        self.world = world
        # Simulated instruments may run faster than the wall clock (``time_scale``).
        self.time_scale = float(getattr(config, "time_scale", 1.0)) if config.simulated else 1.0
        self._backend: Any = None
        self._frontend: Any = None
        self._ready = False
        import asyncio

        self.aborting = asyncio.Event()

    # ------------------------------------------------------------------ construction
    @property
    def backend(self) -> Any:
        """Constructed on first use: simulating a protocol needs no backend."""
        if self._backend is None:
            spec = self.config.backend
            if spec.type == "simulated":
                if self.world is None:
                    raise ConfigurationError("backend: a simulated backend needs the lab's world")
                self._backend = self.simulated_backend(self.world)
            else:
                self._backend = hardware_backend(spec, self.backend_base, self.hardware_args())
        return self._backend

    def check_backend(self) -> None:
        """Resolve and type-check a hardware backend's class without constructing it (its
        path was checked against the allowed packages when the lab file was read)."""
        if self.config.backend.type != "simulated":
            backend_class(self.config.backend, self.backend_base)

    def simulated_backend(self, world: SimWorld) -> Any:
        return self.simulated_class(world, self.config)

    def hardware_args(self) -> dict[str, Any] | None:
        """Constructor arguments of a hardware backend (None: the lab file's ``args``)."""
        return None

    @property
    def frontend(self) -> Any:
        """The PyLabRobot frontend (machine) on the backend, built once."""
        if self._frontend is None:
            self._frontend = self.make_frontend()
        return self._frontend

    def make_frontend(self) -> Any:
        raise NotImplementedError

    @property
    def sim(self) -> Any:
        """The simulated backend, or None on hardware."""
        from device_servers.sim.faults import SimulatedBackend

        backend = self.backend
        return backend if isinstance(backend, SimulatedBackend) else None

    # ------------------------------------------------------------------ lifecycle
    async def setup(self) -> None:
        if self.world is not None and self.sim is not None:
            # The simulated world holds plates to what each instrument says of its places.
            self.world.set_stations(self.config.id, self.config.stations())
        await self.before_setup()
        with stdout_to_stderr():
            await self.frontend.setup()
        self._ready = True
        await self.after_setup()

    async def before_setup(self) -> None:
        """Before the frontend starts (seed the simulated world)."""

    async def after_setup(self) -> None:
        """After the frontend started (bring trackers in line with the instrument)."""

    async def close(self) -> None:
        if self._ready:
            with stdout_to_stderr(), contextlib.suppress(Exception):
                await self.stop()
            self._ready = False

    async def stop(self) -> None:
        """What closing the server does to the instrument (the frontend's stop)."""
        await self.frontend.stop()

    async def abort(self) -> None:
        """Interrupt the current operation (cancel_run, emergency_stop); never raises."""
        self.aborting.set()
        sim = self.sim
        if sim is not None:
            sim.abort()
            return
        import anyio

        with stdout_to_stderr(), contextlib.suppress(Exception):
            with anyio.fail_after(self.config.command_timeout_s):
                await self.hardware_abort()

    async def hardware_abort(self) -> None:
        """The hardware's stop path (none by default: the backend stops with its call)."""

    async def hardware_read(self, read: Callable[[], Awaitable[T]]) -> T | None:
        """A read of a hardware instrument within the command timeout; None if it fails."""
        import anyio

        try:
            with stdout_to_stderr(), anyio.fail_after(self.config.command_timeout_s):
                return await read()
        except Exception:
            return None

    async def pause(self, seconds: float) -> None:
        """Wait ``seconds`` of wall time unless an abort comes first (then :class:`Aborted`);
        on a simulated instrument the wait is part of the command's time (``TimeoutError``
        when it runs out)."""
        sim = self.sim
        wait, runs_out = sim.spend(seconds) if sim is not None else (seconds, False)
        import anyio

        with anyio.move_on_after(wait):
            await self.aborting.wait()
            raise Aborted()
        if runs_out:
            raise TimeoutError(f"{self.subject} did not finish within its time")

    # ------------------------------------------------------------------ commands
    async def execute(self, prim: Any, timeout_s: float | None = None) -> list[Event] | None:
        """Perform one primitive; return the events the instrument measured.

        Its time limit is wall-clock time on hardware. A simulated instrument spends it in
        its own waits (:meth:`SimulatedBackend.allow`): the host's speed is no part of what a
        simulation checks. The wall clock still ends a simulation stuck in host code, with
        room for a loaded machine (``SIM_HOST_SLACK``).
        """
        import anyio

        self.aborting.clear()
        limit = timeout_s or self.timeout(prim)
        sim = self.sim
        if sim is not None:
            sim.begin()  # an abort before this operation was for an earlier one
            sim.allow(limit)
            limit = limit * SIM_HOST_SLACK + SIM_HOST_SLACK
        try:
            with (
                self.translating(self.where(prim)),
                stdout_to_stderr(),
                anyio.fail_after(limit),
            ):
                return await self.call(prim)
        finally:
            if sim is not None:
                sim.allow(None)

    async def call(self, prim: Any) -> list[Event] | None:
        raise NotImplementedError

    def where(self, prim: Any) -> str:
        """How an error names the operation."""
        return str(getattr(prim, "op", prim))

    def timeout(self, prim: Any) -> float:
        return self.config.command_timeout_s

    @contextlib.contextmanager
    def translating(self, where: str) -> Iterator[None]:
        """The one boundary where a backend's exceptions become Labwright errors."""
        try:
            yield
        except DeviceError:
            raise
        except Exception as exc:
            raise self.translate(exc, where) from exc

    def translate(self, exc: BaseException, where: str) -> DeviceError:
        own = self.translate_own(exc, where)
        if own is not None:
            return own
        if isinstance(exc, Aborted | ConnectionAbortedError):  # cancel_run, emergency_stop
            return BackendFailed(
                Code.CONNECTION_LOST,
                f"{where} was aborted (cancel_run or emergency_stop) part-way",
                f"read_back {self.subject} to see where it stopped; do not re-send blindly",
                defined=False,
            )
        return common_failure(exc, where, self.subject)

    def translate_own(self, exc: BaseException, where: str) -> DeviceError | None:
        """The kind's own failures (a physical refusal of the simulated world, ...)."""
        return None

    # ------------------------------------------------------------------ read back
    async def observe(self, labware: set[str] | None = None) -> dict[str, Any] | None:
        raise NotImplementedError

    async def resync(self) -> dict[str, Any] | None:
        """Full read back (and the frontend's trackers brought in line with it)."""
        return await self.observe(None)


class HeatedAdapter(AdapterBase[ConfigT]):
    """An adapter whose instrument heats: a timeout is a temperature never reached, a value
    the frontend refuses is a setting the instrument does not support, and closing the server
    leaves the heater as it is (a run may resume after a restart).

    Its frontend is a PyLabRobot machine holding one plate: ``machine`` is (its class, its
    footprint (x, y, z) in mm, where the plate sits: a PyLabRobot Coordinate); on hardware,
    ``safe_calls`` (frontend methods, in order) make it safe after an abort.
    """

    machine: ClassVar[tuple[type, tuple[float, float, float], Any]]
    safe_calls: ClassVar[tuple[str, ...]] = ()

    def make_frontend(self) -> Any:
        frontend, (x, y, z), plate_at = self.machine
        return frontend(
            self.config.id,
            size_x=x,
            size_y=y,
            size_z=z,
            backend=self.backend,
            child_location=plate_at,
        )

    async def hardware_abort(self) -> None:
        for call in self.safe_calls:
            await getattr(self.frontend, call)()

    async def stop(self) -> None:
        await self.backend.stop()

    def translate_own(self, exc: BaseException, where: str) -> DeviceError | None:
        if isinstance(exc, TimeoutError):
            return BackendFailed(
                Code.HARDWARE_TIMEOUT,
                f"{where} did not finish in time",
                f"{self.subject}'s state is unknown: read_back before anything else; if it "
                "never reaches its temperature, ask a person to check the heater",
                defined=False,
            )
        if isinstance(exc, ValueError):  # the frontend refuses (cooling without a cooler, zones)
            return BackendFailed(
                Code.OUT_OF_RANGE, f"{where}: {exc}", "choose a setting the instrument supports"
            )
        return None
