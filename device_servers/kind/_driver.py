"""The driver a kind plugs in: wiring of its commands, twin and adapter."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol

from pydantic import BaseModel

from device_servers.contract import Station
from device_servers.errors import DeviceError
from device_servers.kind._adapter import Adapter, ConfigT
from device_servers.kind._command import Deviation, DeviceCommand
from device_servers.kind._twin import Twin

# Instrument seconds of an operation a kind gives no estimate for.
DEFAULT_OP_S = 5.0

if TYPE_CHECKING:
    from device_servers.sim.world import SimWorld


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
    def footprint(self, twin: Twin, prims: list[Any]) -> dict[str, Any]: ...
    def labware_of(self, cmd: BaseModel) -> set[str]: ...
    def describe_labware(self, twin: Twin, labware_id: str) -> dict[str, Any] | None: ...
    def reconcile(
        self, twin: Twin, seen: dict[str, Any], touched: set[str] | None
    ) -> list[Deviation]: ...
    def assume(self, twin: Twin, plate: str, location: str | None) -> None: ...
    def stations(self) -> list[Station]: ...
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
    # "module:Class" of the kind's AdapterBase, imported (with PyLabRobot) on first use.
    adapter_class: ClassVar[str] = ""
    # Estimated instrument seconds of each operation, by its ``op`` (the simulation's
    # timeline); a primitive that carries ``duration_s`` (a timed shake) takes that long.
    op_seconds: ClassVar[Mapping[str, float]] = {}

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
        """The adapter on (config, world); override when it needs more."""
        module_name, _, class_name = self.adapter_class.partition(":")
        cls = getattr(importlib.import_module(module_name), class_name)
        adapter: Adapter = cls(self.config, self.world)
        return adapter

    def initial_twin(self) -> Any:
        raise NotImplementedError

    def twin_from_snapshot(self, snap: dict[str, Any]) -> Any:
        raise NotImplementedError

    def touched(self, prims: list[Any]) -> set[str]:
        """What a read back after these primitives must look at (labware ids)."""
        return set()

    def seconds(self, prim: Any) -> float:
        """Estimated instrument seconds one resolved operation takes."""
        held = getattr(prim, "duration_s", None)
        if held is not None:
            return float(held)
        return float(self.op_seconds.get(str(getattr(prim, "op", "")), DEFAULT_OP_S))

    def footprint(self, twin: Any, prims: list[Any]) -> dict[str, Any]:
        """What a simulated command uses and how long it takes: the labware its operations
        touch plus the plate held at this instrument's stations (a shake acts on the plate on
        the holder), and its estimated instrument seconds. The task agent derives which steps
        depend on which, and the run's timeline, from these."""
        stations = self.stations()
        places = {st.place for st in stations}
        labware = {x for x in self.touched(prims) if x not in places}
        facts = twin.facts()
        for st in stations:
            held = facts.get(st.plate_fact) if st.plate_fact else None
            if held:
                labware.add(str(held))
        return {"labware": sorted(labware), "seconds": round(self.estimate(prims), 3)}

    def estimate(self, prims: list[Any]) -> float:
        """Estimated instrument seconds of a command's operations, one after another."""
        return sum(map(self.seconds, prims))

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

    def stations(self) -> list[Station]:
        """How a plate reaches this instrument (published in ``get_state``)."""
        return self.config.stations()

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
