"""Build an instrument runtime from its configuration (driver by kind, policy, stores)."""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

from device_servers.contract import InstrumentBase
from device_servers.driver import Driver
from device_servers.sim.world import SimWorld

# Instrument kinds and their drivers, imported only when an instrument of that kind is used.
DRIVERS = {
    "liquid_handler": "device_servers.liquid_handler.driver:LiquidHandlerDriver",
    "plate_reader": "device_servers.plate_reader.driver:PlateReaderDriver",
    "heater_shaker": "device_servers.heater_shaker.driver:HeaterShakerDriver",
    "plate_mover": "device_servers.plate_mover.driver:PlateMoverDriver",
}

if TYPE_CHECKING:
    from device_servers.runtime import InstrumentRuntime


def make_driver(
    config: InstrumentBase, world: SimWorld | None, cache_dir: Path | None = None
) -> Driver:
    """The driver of the instrument's kind.

    With no world and a ``cache_dir``, the driver is for simulation only and may take its
    geometry from the cache instead of building the PyLabRobot deck.
    """
    kind = getattr(config, "kind", "?")
    target = DRIVERS.get(kind)
    if target is None:
        raise ValueError(f"instrument {config.id}: no driver for kind {kind}")
    module_name, _, class_name = target.partition(":")
    driver_class = getattr(importlib.import_module(module_name), class_name)
    return driver_class(config, world, cache_dir)  # type: ignore[no-any-return]


def make_runtime(config: InstrumentBase, db_path: Path, world_path: Path) -> InstrumentRuntime:
    from device_servers.runtime import InstrumentRuntime
    from policies import build_engine
    from state_store import connect

    world = SimWorld(world_path) if config.simulated else None
    driver = make_driver(config, world)
    kind = getattr(config, "kind", "")
    policy = build_engine(
        kind, config.policy.rules_file, config.policy.rules, config.policy.protected_labware
    )
    return InstrumentRuntime(config, driver, connect(db_path), policy)


@contextlib.asynccontextmanager
async def open_runtime(
    config: InstrumentBase, db_path: Path, world_path: Path
) -> AsyncIterator[InstrumentRuntime]:
    """A started runtime, closed on exit. Configured faults are armed in the world once."""
    runtime = make_runtime(config, db_path, world_path)
    await runtime.start()
    world = getattr(runtime.driver.adapter, "world", None)
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
