"""The liquid handler as a runtime driver: commands, twin and adapter put together."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from device_servers.contract import LiquidHandlerConfig, deck_location
from device_servers.liquid_handler.catalogue import initial_liquids, load_catalogue
from device_servers.liquid_handler.commands import COMMANDS, LHCommand, Primitive
from device_servers.liquid_handler.prompts import PROMPTS
from device_servers.liquid_handler.twin import Labware, LiquidHandlerTwin, Tip, Well
from device_servers.sim.world import SimWorld

if TYPE_CHECKING:
    from device_servers.liquid_handler.adapter import LiquidHandlerAdapter

_TOL = 0.01  # uL: below this, belief and read-back agree


class LiquidHandlerDriver:
    kind = "liquid_handler"
    prompts = PROMPTS

    def __init__(
        self, config: LiquidHandlerConfig, world: SimWorld | None, cache_dir: Path | None = None
    ) -> None:
        self.commands: dict[str, type[BaseModel]] = dict(COMMANDS)
        self.config = config
        self.world = world
        self.locations = {
            lw.id: deck_location(config.id, lw.carrier, lw.slot) for lw in config.labware
        }
        self._adapter: LiquidHandlerAdapter | None = None
        if world is None and cache_dir is not None:
            # Simulation only: the geometry can come from the cache, without PyLabRobot.
            self.catalogue = load_catalogue(config, cache_dir)
        else:
            self.catalogue = self.adapter.catalogue

    @property
    def adapter(self) -> LiquidHandlerAdapter:
        if self._adapter is None:
            from device_servers.liquid_handler import adapter  # PyLabRobot: only when needed

            self._adapter = adapter.LiquidHandlerAdapter(self.config, self.world, initial_liquids)
        return self._adapter

    # ------------------------------------------------------------------ twin
    def initial_twin(self) -> LiquidHandlerTwin:
        labware: dict[str, Labware] = {}
        for lw_id, item in self.catalogue.items():
            lw = Labware(lw_id, item["kind"], item["type"], item["rows"], item["cols"])
            lw.location = self.locations[lw_id]
            if item["kind"] == "tip_rack":
                lw.tips = dict.fromkeys(item["names"], True)
                lw.tip_max_volume = item["tip_max_volume"]
            else:
                lw.wells = {n: Well(0.0, item["max_volumes"][n]) for n in item["names"]}
            labware[lw_id] = lw
        for liq in initial_liquids(self.config, self.catalogue):
            for n in liq["wells"]:
                well = labware[liq["labware"]].wells[n]
                well.volume = liq["volume_ul"]
                well.contents = {liq["liquid"]: liq["volume_ul"]}
        return LiquidHandlerTwin(labware, self.config.num_channels)

    def twin_from_snapshot(self, snap: dict[str, Any]) -> LiquidHandlerTwin:
        return LiquidHandlerTwin.from_snapshot(snap)

    def touched(self, prims: list[Primitive]) -> set[str]:
        return {p.labware for p in prims if p.labware}

    def labware_of(self, cmd: BaseModel) -> set[str]:
        return cmd.labware_ids() if isinstance(cmd, LHCommand) else set()

    def assume(self, twin: Any, plate: str, location: str | None) -> None:
        """Simulation: the plate mover takes ``plate`` off the deck or brings it back."""
        assert isinstance(twin, LiquidHandlerTwin)
        lw = twin.labware.get(plate)
        if lw is not None:
            lw.present = location == lw.location

    def describe_labware(self, twin: Any, labware_id: str) -> dict[str, Any] | None:
        snap = twin.snapshot()["labware"]
        return snap.get(labware_id)

    # ------------------------------------------------------------------ read back
    def reconcile(
        self, twin: Any, seen: dict[str, Any], touched: set[str] | None
    ) -> list[dict[str, Any]]:
        """Bring belief in line with what the instrument reports; list every disagreement."""
        assert isinstance(twin, LiquidHandlerTwin)
        deviations: list[dict[str, Any]] = []
        for lw_id, present in seen.get("present", {}).items():
            lw = twin.labware.get(lw_id)
            if lw is None or (touched is not None and lw_id not in touched):
                continue
            if lw.present != present:
                deviations.append(
                    {
                        "what": "labware_present",
                        "labware": lw_id,
                        "location": lw.location,
                        "expected": lw.present,
                        "observed": present,
                    }
                )
                lw.present = present
        for lw_id, wells in seen.get("wells", {}).items():
            if touched is not None and lw_id not in touched:
                continue
            lw = twin.labware.get(lw_id)
            if lw is None:
                continue
            for name, obs in wells.items():
                well = lw.wells.get(name)
                if well is None:
                    continue
                if abs(well.volume - obs["volume_ul"]) > _TOL:
                    deviations.append(
                        {
                            "what": "well_volume",
                            "labware": lw_id,
                            "well": name,
                            "expected": round(well.volume, 4),
                            "observed": round(obs["volume_ul"], 4),
                        }
                    )
                    well.volume = obs["volume_ul"]
                    well.contents = dict(obs["contents"])
        for rack_id, tips in seen.get("tips", {}).items():
            if touched is not None and rack_id not in touched:
                continue
            rack = twin.labware.get(rack_id)
            if rack is None:
                continue
            for spot, present in tips.items():
                if rack.tips.get(spot) != present:
                    deviations.append(
                        {
                            "what": "tip_present",
                            "labware": rack_id,
                            "well": spot,
                            "expected": rack.tips.get(spot),
                            "observed": present,
                        }
                    )
                    rack.tips[spot] = present
        for idx, obs in enumerate(seen.get("channels", [])):
            if idx >= len(twin.channels):
                break
            chan = twin.channels[idx]
            has = obs["tip"] is not None
            if (chan.tip is not None) != has:
                deviations.append(
                    {
                        "what": "channel_tip",
                        "channel": idx,
                        "expected": chan.tip is not None,
                        "observed": has,
                    }
                )
                chan.tip = (
                    Tip(
                        obs["tip"].get("rack", "?"),
                        obs["tip"].get("spot", "?"),
                        obs["tip"].get("max_volume", 0.0),
                    )
                    if has
                    else None
                )
            if obs.get("contents") is not None:
                volume = sum(obs["contents"].values())
                if abs(chan.volume - volume) > _TOL:
                    deviations.append(
                        {
                            "what": "tip_volume",
                            "channel": idx,
                            "expected": round(chan.volume, 4),
                            "observed": round(volume, 4),
                        }
                    )
                chan.contents = dict(obs["contents"])
        return deviations
