"""The plate reader's configuration."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from device_servers.contract import InstrumentBase, PlateTypes, Requirement, Station


class PlateReaderConfig(InstrumentBase, PlateTypes):
    """A plate reader (PyLabRobot ``PlateReader``) with one drawer at location ``<id>:drawer``.

    The simulated backend computes readings from what is really in the wells of the plate in
    its drawer: ``blank`` plus, per liquid, its signal per unit of volume fraction, plus noise
    from a seeded generator. Results always say ``simulated: true``.
    """

    kind: Literal["plate_reader"]
    wavelength_range_nm: tuple[int, int] = (230, 1000)
    absorbance_blank: float = Field(default=0.045, ge=0)
    absorbance_per_fraction: dict[str, float] = Field(default_factory=lambda: {"dye": 2.0})
    fluorescence_per_fraction: dict[str, float] = Field(default_factory=dict)
    luminescence_per_fraction: dict[str, float] = Field(default_factory=dict)
    noise_sd: float = Field(default=0.002, ge=0)
    seed: int = 0

    def stations(self) -> list[Station]:
        """The drawer: open and idle for a plate to go in or out; closed again after."""
        opened = Requirement(fact="drawer_open", made_by="open_drawer", undone_by="close_drawer")
        idle = Requirement(fact="busy", equals=False, default=False)
        secured = {"after_enter": "close_drawer", "after_leave": "close_drawer"}
        return [
            self.station(
                "drawer",
                opened,
                idle,
                plate_arg="expect_plate",
                plate_fact="plate_in_reader",
                **secured,
            )
        ]
