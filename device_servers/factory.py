"""Build an instrument runtime from its configuration: the driver and rules of its kind (from
the registry of kinds, :mod:`device_servers.kind`), its stores and the simulated world."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

from device_servers.contract import InstrumentBase
from device_servers.kind import Driver, kind_of
from policies import PolicyEngine, PolicyError, build_engine

if TYPE_CHECKING:
    from device_servers.runtime import InstrumentRuntime
    from device_servers.sim.world import SimWorld  # a simulation needs no world (nor SQLite)


def make_driver(
    config: InstrumentBase, world: SimWorld | None, cache_dir: Path | None = None
) -> Driver:
    """The driver of the instrument's kind.

    With no world and a ``cache_dir``, the driver is for simulation only and may take its
    geometry from the cache instead of building the PyLabRobot deck.
    """
    driver_class = kind_of(config.kind).driver_class()
    return driver_class(config, world, cache_dir)  # type: ignore[return-value]


def make_policy(config: InstrumentBase) -> PolicyEngine:
    """The instrument's safety rules: its kind's rules file (or the lab's), then overrides."""
    kind = kind_of(config.kind)
    if config.policy.rules_file is None and not kind.rules_file.exists():
        raise PolicyError(
            f"{kind.rules_file}: the {kind.name} kind has no rules file; every kind needs its "
            "own safety rules before an instrument of it can be served"
        )
    return build_engine(
        kind.name,
        config.policy.rules_file or kind.rules_file,
        config.policy.rules,
        config.policy.protected_labware,
    )


def make_runtime(config: InstrumentBase, db_path: Path, world_path: Path) -> InstrumentRuntime:
    from device_servers.runtime import InstrumentRuntime
    from device_servers.sim.world import SimWorld
    from state_store import connect

    world = SimWorld(world_path) if config.simulated else None
    driver = make_driver(config, world)
    return InstrumentRuntime(config, driver, connect(db_path), make_policy(config))


@contextlib.asynccontextmanager
async def open_runtime(
    config: InstrumentBase, db_path: Path, world_path: Path
) -> AsyncIterator[InstrumentRuntime]:
    """A started runtime, closed on exit. Configured faults are armed in the world once."""
    runtime = make_runtime(config, db_path, world_path)
    await runtime.start()
    world = runtime.driver.world
    if (
        world is not None
        and config.faults
        and not world.conn.execute(
            "SELECT 1 FROM faults WHERE instrument=?", (config.id,)
        ).fetchone()
    ):
        for spec in config.faults:
            world.add_fault(config.id, spec.model_dump())
    try:
        yield runtime
    finally:
        await runtime.close()
