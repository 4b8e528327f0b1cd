"""A PyLabRobot plate-reader backend that acts on Labwright's simulated world.

It overrides only the machine calls (like PyLabRobot's chatterbox), so the real ``PlateReader``
frontend runs above it, and it never prints (stdout may be an MCP stream). Physics:

- the drawer is world status ``drawer_open`` of the instrument; a plate is in the reader when
  the world has it at ``<id>:drawer``; the reader reads only that plate, only when closed;
- absorbance = blank + sum over liquids of ``absorbance_per_fraction[liquid]`` x (volume of
  that liquid / volume in the well) + N(0, noise_sd), clipped to the detector's 0-4 OD; an
  empty well reads the blank. Fluorescence and luminescence alike from their tables, over a
  blank of 0, clipped at 0. Noise comes from ``random.Random(seed + n)``, n counting reads.

Faults fire here, at the lowest seam, from ``world.next_fault(id, {"op", "plate"})`` with
``op`` one of open_drawer, close_drawer, read_absorbance, read_fluorescence,
read_luminescence: ``nan_reading`` (params ``wells`` (default all) and ``value`` (default
NaN)), ``hang`` (``seconds``), ``delay`` (``seconds``), ``disconnect`` (``after_effect``),
``crash`` (the process dies after the effect) and ``adapter_fault``.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from typing import Any

from pylabrobot.plate_reading.backend import PlateReaderBackend
from pylabrobot.resources import Plate, Well

from device_servers.plate_reader.config import PlateReaderConfig
from device_servers.sim.faults import SimulatedBackend
from device_servers.sim.world import PhysicalError, SimWorld
from device_servers.wells import row_letter

MAX_OD = 4.0
Grid = list[list[float | None]]


class SimulatedPlateReaderBackend(SimulatedBackend, PlateReaderBackend):
    """One drawer, three read modes, on the simulated world, with fault injection."""

    device = "the plate reader"

    def __init__(self, world: SimWorld, config: PlateReaderConfig) -> None:
        super().__init__(world, config.id)
        self.config = config
        self.drawer = f"{config.id}:drawer"

    # -------------------------------------------------------------- lifecycle
    async def setup(self) -> None:
        if "drawer_open" not in self.world.status(self.instrument):
            self.world.set_status(self.instrument, drawer_open=False)
        self.world.set_status(self.instrument, busy=False)  # a crashed server left it set

    # -------------------------------------------------------------- sensors
    def sense(self) -> dict[str, Any]:
        """What the reader's own sensors report: drawer position and plate presence."""
        return {
            "drawer_open": bool(self.world.status(self.instrument).get("drawer_open", False)),
            "plate": self.world.plate_at(self.drawer),
        }

    # -------------------------------------------------------------- faults
    async def _act(self, op: str, plate: str | None, effect: Callable[[], Any]) -> Any:
        # While it moves or measures the reader is busy: the plate mover keeps out.
        self.world.set_status(self.instrument, busy=True)
        try:
            return await self.act({"op": op, "plate": plate}, effect)
        finally:
            self.world.set_status(self.instrument, busy=False)

    async def play_own(
        self, kind: str, params: dict[str, Any], effect: Callable[[], Any], target: dict[str, Any]
    ) -> Any:
        result = effect()
        if kind == "nan_reading" and isinstance(result, list):
            value = float(params.get("value", math.nan))
            only = params.get("wells")
            for r, row in enumerate(result):
                for c, cell in enumerate(row):
                    if cell is not None and (only is None or _name(r, c) in only):
                        row[c] = value
        return result

    # -------------------------------------------------------------- drawer
    async def open(self) -> None:
        await self._act(
            "open_drawer",
            self.world.plate_at(self.drawer),
            lambda: self.world.set_status(self.instrument, drawer_open=True),
        )

    async def close(self, plate: Plate | None = None) -> None:
        await self._act(
            "close_drawer",
            self.world.plate_at(self.drawer),
            lambda: self.world.set_status(self.instrument, drawer_open=False),
        )

    # -------------------------------------------------------------- reads
    def _check_plate(self, plate: Plate, mode: str) -> None:
        seen = self.sense()
        if seen["drawer_open"]:
            self.world.incident(self.instrument, "read_with_drawer_open", {"plate": plate.name})
            raise PhysicalError("drawer_open", "the drawer is open: the reader cannot measure")
        if seen["plate"] != plate.name:
            self.world.incident(
                self.instrument,
                "read_without_plate",
                {"plate": plate.name, "in_drawer": seen["plate"], "mode": mode},
            )
            there = seen["plate"] or "no plate"
            raise PhysicalError("wrong_plate", f"{plate.name} is not in the reader ({there} is)")

    def _measure(
        self, plate: Plate, wells: list[Well], blank: float, per_fraction: dict[str, float]
    ) -> Grid:
        """One reading of the plate: a rows x columns grid, None for wells not read."""
        status = self.world.status(self.instrument)
        count = int(status.get("reads", 0)) + 1
        self.world.set_status(self.instrument, reads=count)
        rng = random.Random(self.config.seed + count)
        truth = self.world.wells(plate.name)
        grid: Grid = [[None] * plate.num_items_x for _ in range(plate.num_items_y)]
        for well in wells:
            name = plate.get_child_identifier(well)
            state = truth.get(name, {"volume_ul": 0.0, "contents": {}})
            signal = blank
            if state["volume_ul"] > 0:
                for liquid, volume in state["contents"].items():
                    signal += per_fraction.get(liquid, 0.0) * volume / state["volume_ul"]
            grid[well.get_row()][well.get_column()] = signal + rng.gauss(0.0, self.config.noise_sd)
        return grid

    async def _read(
        self,
        op: str,
        plate: Plate,
        wells: list[Well],
        blank: float,
        per_fraction: dict[str, float],
        high: float,
    ) -> Grid:
        def effect() -> Grid:
            self._check_plate(plate, op)
            grid = self._measure(plate, wells, blank, per_fraction)
            return [[None if v is None else min(max(v, 0.0), high) for v in row] for row in grid]

        result: Grid = await self._act(op, plate.name, effect)
        return result

    async def read_absorbance(
        self, plate: Plate, wells: list[Well], wavelength: int
    ) -> list[dict[str, Any]]:
        cfg = self.config
        data = await self._read(
            "read_absorbance",
            plate,
            wells,
            cfg.absorbance_blank,
            cfg.absorbance_per_fraction,
            MAX_OD,
        )
        return [{"wavelength": wavelength, "time": time.time(), "temperature": 25.0, "data": data}]

    async def read_fluorescence(
        self,
        plate: Plate,
        wells: list[Well],
        excitation_wavelength: int,
        emission_wavelength: int,
        focal_height: float,
    ) -> list[dict[str, Any]]:
        data = await self._read(
            "read_fluorescence", plate, wells, 0.0, self.config.fluorescence_per_fraction, math.inf
        )
        return [
            {
                "ex_wavelength": excitation_wavelength,
                "em_wavelength": emission_wavelength,
                "time": time.time(),
                "temperature": 25.0,
                "data": data,
            }
        ]

    async def read_luminescence(
        self, plate: Plate, wells: list[Well], focal_height: float
    ) -> list[dict[str, Any]]:
        data = await self._read(
            "read_luminescence", plate, wells, 0.0, self.config.luminescence_per_fraction, math.inf
        )
        return [{"time": time.time(), "temperature": 25.0, "data": data}]


def _name(row: int, col: int) -> str:
    return f"{row_letter(row)}{col + 1}"
