"""The heater-shaker as a runtime driver: commands, twin and adapter put together."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from device_servers.contract import HeaterShakerConfig
from device_servers.heater_shaker.commands import COMMANDS, Primitive
from device_servers.heater_shaker.twin import HeaterShakerTwin, Limits
from device_servers.sim.world import SimWorld

if TYPE_CHECKING:
    from device_servers.heater_shaker.adapter import HeaterShakerAdapter

_TEMP_TOL = 0.05  # C: below this, believed and reported targets agree


class HeaterShakerDriver:
    """One heater-shaker: a block with a target temperature and a plate holder that shakes."""

    kind = "heater_shaker"

    def __init__(
        self, config: HeaterShakerConfig, world: SimWorld | None, cache_dir: Path | None = None
    ) -> None:
        self.commands: dict[str, type[BaseModel]] = dict(COMMANDS)
        self.config = config
        self.world = world
        self.holder = f"{config.id}:holder"
        self._adapter: HeaterShakerAdapter | None = None

    @property
    def adapter(self) -> HeaterShakerAdapter:
        if self._adapter is None:
            from device_servers.heater_shaker import adapter  # PyLabRobot: only when needed

            self._adapter = adapter.HeaterShakerAdapter(self.config, self.world)
        return self._adapter

    # ------------------------------------------------------------------ twin
    def initial_twin(self) -> HeaterShakerTwin:
        """Heater off at ambient, unlocked, no plate believed: read_back learns the plate."""
        cfg = self.config
        limits = Limits(
            (float(cfg.temperature_range_c[0]), float(cfg.temperature_range_c[1])),
            (int(cfg.rpm_range[0]), int(cfg.rpm_range[1])),
            cfg.ramp_c_per_min,
            cfg.ambient_c,
        )
        return HeaterShakerTwin(self.holder, limits, current_c=cfg.ambient_c)

    def twin_from_snapshot(self, snap: dict[str, Any]) -> HeaterShakerTwin:
        return HeaterShakerTwin.from_snapshot(snap)

    def touched(self, prims: list[Primitive]) -> set[str]:
        return {self.holder} if prims else set()

    def labware_of(self, cmd: BaseModel) -> set[str]:
        return set()  # the plate is whatever sits on the holder: see policy_context

    def describe_labware(self, twin: Any, labware_id: str) -> dict[str, Any] | None:
        labware: dict[str, Any] = twin.snapshot()["labware"]
        return labware.get(labware_id)

    def assume(self, twin: Any, plate: str, location: str | None) -> None:
        """Simulation: another instrument puts ``plate`` on the holder or takes it away."""
        assert isinstance(twin, HeaterShakerTwin)
        if location == self.holder:
            twin.plate = plate
            twin.plate_type = self.config.plate_types.get(plate)
        elif twin.plate == plate:
            twin.plate, twin.plate_type = None, None

    async def policy_context(
        self, cmd: BaseModel, twin: Any, assumed: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Facts ``require_state`` rules may check, from the twin (belief, kept fresh by the
        read back after every command)."""
        assert isinstance(twin, HeaterShakerTwin)
        return {
            "plate_present": twin.plate is not None,
            "plate": twin.plate,
            "plate_locked": twin.locked,
            "shaking": twin.shaking,
            "heating": twin.target_c is not None,
        }

    # ------------------------------------------------------------------ read back
    def reconcile(
        self, twin: Any, seen: dict[str, Any], touched: set[str] | None
    ) -> list[dict[str, Any]]:
        """Adopt what the instrument reports; list every disagreement with the belief.

        The current temperature is a measurement of a block that ramps on its own: it is
        adopted without a deviation. Target, clamp, motor and plate are settings: a
        disagreement is a deviation.
        """
        assert isinstance(twin, HeaterShakerTwin)
        deviations: list[dict[str, Any]] = []

        def differ(what: str, expected: Any, observed: Any) -> None:
            deviations.append({"what": what, "expected": expected, "observed": observed})

        if "current_c" in seen and seen["current_c"] is not None:
            twin.current_c = float(seen["current_c"])
        if "target_c" in seen:
            obs = seen["target_c"]
            same = (obs is None and twin.target_c is None) or (
                obs is not None
                and twin.target_c is not None
                and abs(float(obs) - twin.target_c) <= _TEMP_TOL
            )
            if not same:
                differ("target_c", twin.target_c, obs)
                twin.target_c = None if obs is None else float(obs)
        for key in ("locked", "shaking", "rpm"):
            if key in seen and seen[key] != getattr(twin, key):
                differ(key, getattr(twin, key), seen[key])
                setattr(twin, key, seen[key])
        if "plate" in seen and seen["plate"] != twin.plate:
            differ("plate", twin.plate, seen["plate"])
            twin.plate = seen["plate"]
            twin.plate_type = self.config.plate_types.get(seen["plate"] or "")
        return deviations
