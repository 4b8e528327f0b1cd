"""The deck's labware geometry (the catalogue) and the configured liquids, as plain data.

Building a PyLabRobot deck costs a few hundred milliseconds (imports and placement checks);
the catalogue depends only on the deck configuration and the PyLabRobot version, so it is
cached as JSON (the user cache directory). Simulating a protocol then needs no PyLabRobot.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from device_servers import wells as wellnames
from device_servers.errors import ConfigurationError
from device_servers.geometry_cache import cached_geometry
from device_servers.liquid_handler.config import LiquidHandlerConfig


def build_catalogue(config: LiquidHandlerConfig) -> dict[str, Any]:
    """Geometry of every labware item, from a PyLabRobot deck built from the config."""
    from device_servers.liquid_handler.adapter import build_deck, describe_resource

    deck = build_deck(config)
    return {lw.id: describe_resource(deck.get_resource(lw.id)) for lw in config.labware}


def load_catalogue(config: LiquidHandlerConfig, cache_dir: Path | None) -> dict[str, Any]:
    """The catalogue, from the cache when it matches the configuration, else built (and cached)."""
    if cache_dir is None:
        return build_catalogue(config)
    layout = config.model_dump(mode="json", include={"deck", "carriers", "labware"})
    return cached_geometry(
        cache_dir, f"catalogue-{config.id}", layout, lambda: build_catalogue(config)
    )


def load_deck_geometry(config: LiquidHandlerConfig, cache_dir: Path | None) -> dict[str, Any]:
    """Positions and sizes on the deck (for pictures of it), cached like the catalogue."""
    from device_servers.liquid_handler.adapter import describe_deck

    if cache_dir is None:
        return describe_deck(config)
    layout = config.model_dump(mode="json", include={"deck", "carriers", "labware"})
    return cached_geometry(cache_dir, f"deck-{config.id}", layout, lambda: describe_deck(config))


def initial_liquids(config: LiquidHandlerConfig, catalogue: dict[str, Any]) -> list[dict[str, Any]]:
    """The configured liquids, expanded to well names and checked against the deck."""
    out = []
    for i, liq in enumerate(config.liquids):
        item = catalogue.get(liq.labware)
        if item is None or item["kind"] != "plate":
            raise ConfigurationError(f"liquids[{i}].labware: no plate {liq.labware!r}")
        try:
            names = wellnames.expand(liq.wells, item["rows"], item["cols"])
        except wellnames.WellRangeError as exc:
            raise ConfigurationError(f"liquids[{i}].wells: {exc}") from exc
        for n in names:
            if liq.volume_ul > item["max_volumes"][n]:
                raise ConfigurationError(
                    f"liquids[{i}].volume_ul: {liq.volume_ul} uL overflows {liq.labware}:{n}"
                    f" (max {item['max_volumes'][n]} uL)"
                )
        out.append(
            {
                "labware": liq.labware,
                "wells": names,
                "liquid": liq.liquid,
                "volume_ul": liq.volume_ul,
            }
        )
    return out


_NOMINAL = re.compile(r"(\d+(?:\.\d+)?)\s*(u|m)l(?![a-z])", re.IGNORECASE)


def nominal_volume(type_name: str) -> float | None:
    """The volume a labware type's name promises: ``..._300uL`` -> 300, ``..._1mL`` -> 1000."""
    found = _NOMINAL.search(type_name)
    if found is None:
        return None
    return float(found.group(1)) * (1000.0 if found.group(2).lower() == "m" else 1.0)


def usable_tip_volume(config: LiquidHandlerConfig, rack_id: str, physical: float) -> float:
    """What one tip of a rack may hold: the configured volume for the rack's type, else the
    nominal volume in its name where PyLabRobot's ``physical`` maximal volume is larger."""
    spec = next(lw for lw in config.labware if lw.id == rack_id)
    configured = config.tip_usable_volume_ul.get(spec.type)
    if configured is not None:
        if configured > physical:
            raise ConfigurationError(
                f"tip_usable_volume_ul.{spec.type}: {configured} uL is more than one of its "
                f"tips holds ({physical} uL)"
            )
        return configured
    nominal = nominal_volume(spec.type)
    return min(physical, nominal) if nominal else physical


def usable_catalogue(config: LiquidHandlerConfig, catalogue: dict[str, Any]) -> dict[str, Any]:
    """The catalogue as the twin sees it: each tip rack's tips hold their usable volume."""
    return {
        lw_id: {**item, "tip_max_volume": usable_tip_volume(config, lw_id, item["tip_max_volume"])}
        if item["kind"] == "tip_rack"
        else item
        for lw_id, item in catalogue.items()
    }
