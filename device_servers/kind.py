"""What an instrument kind plugs into the shared runtime and server, and the registry of kinds.

A kind is one folder ``device_servers/<kind>/`` whose ``__init__.py`` names a :class:`Kind`
(its configuration model, driver, rules file and prompts) as ``KIND``. Inside it:

- ``config.py``: the kind's configuration (an :class:`~device_servers.contract.InstrumentBase`)
- ``commands.py``: :class:`DeviceCommand` records, and the primitives they expand to
- ``twin.py``: a :class:`TwinBase` (belief, validation, simulation, ``adopt``)
- ``adapter.py`` / ``sim_backend.py``: an :class:`AdapterBase` on PyLabRobot's frontend, and a
  simulated PyLabRobot backend (the only modules that import PyLabRobot)
- ``driver.py``: a :class:`DriverBase` that wires them together

Nothing else registers a kind: :func:`kinds` finds every folder of ``device_servers`` that has
a ``driver.py`` and reads its ``KIND``.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import pkgutil
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar

import anyio
from pydantic import BaseModel, ConfigDict

from device_servers.adapter_support import common_failure, hardware_backend, stdout_to_stderr
from device_servers.contract import InstrumentBase
from device_servers.errors import Code, ConfigurationError, DeviceError, ValidationFailed
from policies import RULES_DIR

if TYPE_CHECKING:
    from device_servers.sim.world import SimWorld

# --------------------------------------------------------------------------- commands


class DeviceCommand(BaseModel):
    """One command of one instrument kind: a frozen, typed record with a tool name and summary.

    The server turns each command model into a tool whose input schema is the model's and
    whose description is ``summary``: the class docstring (what a model reads about the
    tool: units, ranges, preconditions, error codes), unless the class sets it itself.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    name: ClassVar[str]
    summary: ClassVar[str]
    # Text several commands of a kind share (their error codes), appended to the docstring.
    notes: ClassVar[str] = ""

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        if "summary" not in cls.__dict__ and cls.__doc__:
            cls.summary = " ".join(f"{cls.__doc__} {cls.notes}".split())

    def labware_ids(self) -> set[str]:
        """Every labware id the command touches (for policies)."""
        return set()


Event = dict[str, Any]
Deviation = dict[str, Any]

# --------------------------------------------------------------------------- twin


class Twin(Protocol):
    """Belief state of one instrument; changes only through ``apply`` and ``adopt``."""

    def clone(self) -> Twin: ...
    def expand(self, cmd: Any) -> Any: ...
    def apply(self, prim: Any) -> tuple[Any, list[Event]]: ...
    def run(self, cmd: Any) -> tuple[list[Any], list[Event]]: ...
    def snapshot(self, full: bool = False) -> dict[str, Any]: ...
    def adopt(self, seen: dict[str, Any], touched: set[str] | None) -> list[Deviation]: ...
    def assume(self, plate: str, location: str | None) -> None: ...
    def facts(self) -> dict[str, Any]: ...


class TwinBase:
    """What every twin does the same way: run a command as its primitives, list deviations.

    A subclass implements ``clone``, ``snapshot``, ``expand`` (command -> primitives), ``apply``
    (validate one primitive against the belief, change it, return its events) and ``adopt``
    (take what the instrument reports, return where it disagreed).
    """

    def expand(self, cmd: Any) -> Iterable[Any]:
        raise NotImplementedError

    def apply(self, prim: Any) -> tuple[Any, list[Event]]:
        raise NotImplementedError

    def run(self, cmd: Any) -> tuple[list[Any], list[Event]]:
        """Expand and apply a whole command; all-or-nothing is the caller's (work on a clone).

        ``predicted(prim)`` adds what the instrument itself would report after an operation
        (a simulated run shows the same event stream as a real one); ``finished`` may add
        events about the whole command.
        """
        prims: list[Any] = []
        events: list[Event] = []
        for p in self.expand(cmd):
            resolved, evs = self.apply(p)
            prims.append(resolved)
            events.extend(evs)
            events.extend(self.predicted(resolved))
        events.extend(self.finished(cmd, prims))
        return prims, events

    def predicted(self, prim: Any) -> list[Event]:
        """Events the instrument reports after ``prim`` (measured there, predicted here)."""
        return []

    def finished(self, cmd: Any, prims: list[Any]) -> list[Event]:
        """Events about the command as a whole (a no-op move's warning)."""
        return []

    def assume(self, plate: str, location: str | None) -> None:
        """Simulation: another instrument put ``plate`` at ``location`` (None: took it away)."""

    def facts(self) -> dict[str, Any]:
        """What the instrument's ``require_state`` rules may check, from belief."""
        return {}


def unknown_labware(detail: str, known: Iterable[str], hint: str = "use one of") -> DeviceError:
    """UNKNOWN_LABWARE naming what there is instead."""
    listed = ", ".join(sorted(known)) or "(none configured)"
    return ValidationFailed(Code.UNKNOWN_LABWARE, detail, f"{hint}: {listed}")


def deviation(what: str, expected: Any, observed: Any, **extra: Any) -> Deviation:
    """One disagreement between belief and instrument."""
    return {"what": what, **extra, "expected": expected, "observed": observed}


# --------------------------------------------------------------------------- adapter


class Adapter(Protocol):
    """The seam to the instrument (simulated or real)."""

    async def setup(self) -> None: ...
    async def close(self) -> None: ...
    async def abort(self) -> None: ...
    async def execute(self, prim: Any, timeout_s: float | None = None) -> list[Event] | None: ...
    async def observe(self, labware: set[str] | None = None) -> dict[str, Any] | None: ...
    async def resync(self) -> dict[str, Any] | None: ...


ConfigT = TypeVar("ConfigT", bound=InstrumentBase)
T = TypeVar("T")


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
    subject: ClassVar[str] = "the instrument"

    def __init__(self, config: ConfigT, world: SimWorld | None) -> None:
        self.config = config
        self.world = world
        self._backend: Any = None
        self._ready = False
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

    def simulated_backend(self, world: SimWorld) -> Any:
        raise NotImplementedError

    def hardware_args(self) -> dict[str, Any] | None:
        """Constructor arguments of a hardware backend (None: the lab file's ``args``)."""
        return None

    @property
    def frontend(self) -> Any:
        raise NotImplementedError

    @property
    def sim(self) -> Any:
        """The simulated backend, or None on hardware."""
        from device_servers.sim.faults import SimulatedBackend

        backend = self.backend
        return backend if isinstance(backend, SimulatedBackend) else None

    # ------------------------------------------------------------------ lifecycle
    async def setup(self) -> None:
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
        with stdout_to_stderr(), contextlib.suppress(Exception):
            with anyio.fail_after(self.config.command_timeout_s):
                await self.hardware_abort()

    async def hardware_abort(self) -> None:
        """The hardware's stop path (none by default: the backend stops with its call)."""

    async def hardware_read(self, read: Callable[[], Awaitable[T]]) -> T | None:
        """A read of a hardware instrument within the command timeout; None if it fails."""
        try:
            with stdout_to_stderr(), anyio.fail_after(self.config.command_timeout_s):
                return await read()
        except Exception:
            return None

    async def pause(self, seconds: float) -> None:
        """Wait ``seconds`` of wall time unless an abort comes first (then :class:`Aborted`)."""
        with anyio.move_on_after(seconds):
            await self.aborting.wait()
            raise Aborted()

    # ------------------------------------------------------------------ commands
    async def execute(self, prim: Any, timeout_s: float | None = None) -> list[Event] | None:
        """Perform one primitive; return the events the instrument measured."""
        self.aborting.clear()
        with (
            self.translating(self.where(prim)),
            stdout_to_stderr(),
            anyio.fail_after(timeout_s or self.timeout(prim)),
        ):
            return await self.call(prim)

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
        return self.translate_own(exc, where) or common_failure(exc, where, self.subject)

    def translate_own(self, exc: BaseException, where: str) -> DeviceError | None:
        """The kind's own failures (a physical refusal of the simulated world, ...)."""
        return None

    # ------------------------------------------------------------------ read back
    async def observe(self, labware: set[str] | None = None) -> dict[str, Any] | None:
        raise NotImplementedError

    async def resync(self) -> dict[str, Any] | None:
        """Full read back (and the frontend's trackers brought in line with it)."""
        return await self.observe(None)


# --------------------------------------------------------------------------- driver


class Driver(Protocol):
    """One instrument kind as the runtime sees it."""

    kind: str
    commands: dict[str, type[BaseModel]]
    world: SimWorld | None

    @property
    def adapter(self) -> Adapter: ...

    def initial_twin(self) -> Twin: ...
    def twin_from_snapshot(self, snap: dict[str, Any]) -> Twin: ...
    def touched(self, prims: list[Any]) -> set[str]: ...
    def labware_of(self, cmd: BaseModel) -> set[str]: ...
    def describe_labware(self, twin: Twin, labware_id: str) -> dict[str, Any] | None: ...
    def reconcile(
        self, twin: Twin, seen: dict[str, Any], touched: set[str] | None
    ) -> list[Deviation]: ...
    def assume(self, twin: Twin, plate: str, location: str | None) -> None: ...
    async def policy_context(
        self, cmd: BaseModel, twin: Twin, assumed: dict[str, Any] | None = None
    ) -> dict[str, Any]: ...
    def progress(self, cmd: BaseModel, prims: list[Any], done: int) -> dict[str, Any]: ...
    async def precheck(self, twin: Twin, prim: Any) -> None: ...
    def failed(self, twin: Twin, prim: Any, exc: DeviceError) -> None: ...


class DriverBase(Generic[ConfigT]):
    """Wiring only: the kind's commands, how to build its twin and its adapter.

    The adapter is imported and built on first use (PyLabRobot is imported only then).
    """

    kind: ClassVar[str]
    command_set: ClassVar[Mapping[str, type[DeviceCommand]]]

    def __init__(
        self, config: ConfigT, world: SimWorld | None, cache_dir: Path | None = None
    ) -> None:
        self.commands: dict[str, type[BaseModel]] = dict(self.command_set)
        self.config = config
        self.world = world
        self.cache_dir = cache_dir
        self._adapter: Any = None
        self.wire()

    def wire(self) -> None:
        """What the driver derives from its configuration (geometry), once, at construction.

        Without a world and with a ``cache_dir`` the driver serves simulation only and may
        take its geometry from the cache instead of building PyLabRobot resources.
        """

    @property
    def adapter(self) -> Any:
        if self._adapter is None:
            self._adapter = self.make_adapter()
        return self._adapter

    def make_adapter(self) -> Adapter:
        raise NotImplementedError

    def initial_twin(self) -> Any:
        raise NotImplementedError

    def twin_from_snapshot(self, snap: dict[str, Any]) -> Any:
        raise NotImplementedError

    def touched(self, prims: list[Any]) -> set[str]:
        """What a read back after these primitives must look at (labware ids)."""
        return set()

    def labware_of(self, cmd: BaseModel) -> set[str]:
        return cmd.labware_ids() if isinstance(cmd, DeviceCommand) else set()

    def describe_labware(self, twin: Any, labware_id: str) -> dict[str, Any] | None:
        item = twin.snapshot()["labware"].get(labware_id)
        return dict(item) if item is not None else None

    def reconcile(
        self, twin: Any, seen: dict[str, Any], touched: set[str] | None
    ) -> list[Deviation]:
        """Adopt what the instrument reports; the twin changes itself."""
        return list(twin.adopt(seen, touched))

    def assume(self, twin: Any, plate: str, location: str | None) -> None:
        twin.assume(plate, location)

    async def policy_context(
        self, cmd: BaseModel, twin: Any, assumed: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Facts ``require_state`` rules may check (default: the twin's ``facts()``)."""
        return dict(twin.facts())

    # ------------------------------------------------------------ partial outcomes
    def progress(self, cmd: BaseModel, prims: list[Any], done: int) -> dict[str, Any]:
        """What of ``cmd`` happened once its first ``done`` primitives did (``summary``), and
        the arguments of the same command doing exactly what is left (``remainder``; None
        when that is unknown or nothing is left). By default only "nothing happened yet"
        names what is left: the whole command."""
        return {
            "summary": {"done": [getattr(p, "op", str(p)) for p in prims[:done]]},
            "remainder": cmd.model_dump(mode="json") if done == 0 and prims else None,
        }

    async def precheck(self, twin: Any, prim: Any) -> None:
        """Between the operations of one command: raise a DeviceError when what the
        instrument reports now makes ``prim`` unsafe (nothing is sent then)."""

    def failed(self, twin: Any, prim: Any, exc: DeviceError) -> None:
        """``prim`` failed and did not happen: what the belief should keep of it."""


# --------------------------------------------------------------------------- prompts


@dataclass(frozen=True)
class PromptArg:
    """One argument of a prompt."""

    name: str
    description: str | None = None
    required: bool = False


@dataclass(frozen=True)
class Prompt:
    """A standard procedure offered as an MCP prompt.

    ``render(instrument_id, args)`` returns the procedure's text; it raises ``ValueError``
    for missing or unusable arguments (the server answers INVALID_PARAMS).
    """

    name: str
    description: str
    render: Callable[[str, dict[str, str]], str]
    arguments: tuple[PromptArg, ...] = field(default_factory=tuple)


# --------------------------------------------------------------------------- registry


class Kind:
    """One instrument kind: its configuration model, driver, rules file and prompts.

    ``Kind(SomeConfig)`` is enough for a kind laid out as :mod:`device_servers.kind` says: the
    name is the config's ``kind``, the driver is the :class:`DriverBase` of that kind in
    ``device_servers.<name>.driver`` (imported only when an instrument of the kind is built),
    and the rules are ``policies/rules/<name>.yaml`` (without them the kind cannot be served).
    """

    def __init__(
        self,
        config: type[InstrumentBase],
        prompts: tuple[Prompt, ...] = (),
        *,
        driver_module: str | None = None,
        rules_file: Path | None = None,
    ) -> None:
        literal = config.model_fields["kind"].annotation
        names: tuple[Any, ...] = getattr(literal, "__args__", ())
        if len(names) != 1 or not isinstance(names[0], str):
            raise ConfigurationError(f"{config.__name__}.kind must be one Literal name")
        self.name: str = names[0]
        self.config = config
        self.prompts = prompts
        self.driver_module = driver_module or f"device_servers.{self.name}.driver"
        self.rules_file = rules_file or default_rules(self.name)

    def driver_class(self) -> type[DriverBase[Any]]:
        module = importlib.import_module(self.driver_module)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, DriverBase)
                and getattr(value, "kind", None) == self.name
            ):
                return value
        raise ConfigurationError(f"{self.driver_module} has no driver of kind {self.name!r}")


def default_rules(kind: str) -> Path:
    """Where a kind's default rules live: ``policies/rules/<kind>.yaml``."""
    return RULES_DIR / f"{kind}.yaml"


@cache
def kinds() -> dict[str, Kind]:
    """Every kind of ``device_servers``, by name (each folder with a ``driver.py``)."""
    import device_servers

    found: dict[str, Kind] = {}
    for info in sorted(pkgutil.iter_modules(device_servers.__path__), key=lambda i: i.name):
        folder = Path(device_servers.__path__[0]) / info.name
        if not info.ispkg or not (folder / "driver.py").exists():
            continue
        module = importlib.import_module(f"device_servers.{info.name}")
        kind = getattr(module, "KIND", None)
        if not isinstance(kind, Kind):
            raise ConfigurationError(f"device_servers.{info.name} has a driver but no KIND")
        found[kind.name] = kind
    return found


def kind_of(name: str) -> Kind:
    """The kind called ``name``; ConfigurationError naming the known kinds otherwise."""
    found = kinds().get(name)
    if found is None:
        raise ConfigurationError(f"no instrument kind {name!r} (known: {', '.join(kinds())})")
    return found
