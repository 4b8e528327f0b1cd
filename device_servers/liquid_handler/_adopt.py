"""How the liquid handler's twin adopts a read back: labware presence, wells, tips, channels.

Called only by :meth:`LiquidHandlerTwin.adopt`; every disagreement between belief and
instrument becomes a deviation, and the instrument's report wins.
"""

from __future__ import annotations

from typing import Any

from device_servers.kind import deviation
from device_servers.liquid_handler._deck import Channel, Labware, Tip

_TOL = 0.01  # uL: below this, belief and instrument agree


def adopt_read_back(
    labware: dict[str, Labware],
    channels: list[Channel],
    seen: dict[str, Any],
    touched: set[str] | None,
) -> list[dict[str, Any]]:
    """Adopt ``seen`` into ``labware`` and ``channels`` (only ``touched`` labware if given)."""
    deviations: list[dict[str, Any]] = []

    def wanted(lw_id: str) -> bool:
        return touched is None or lw_id in touched

    for lw_id, present in seen.get("present", {}).items():
        lw = labware.get(lw_id)
        if lw is None or not wanted(lw_id):
            continue
        if lw.present != present:
            deviations.append(
                deviation(
                    "labware_present", lw.present, present, labware=lw_id, location=lw.location
                )
            )
            lw.present = present
    for lw_id, wells in seen.get("wells", {}).items():
        lw = labware.get(lw_id)
        if lw is None or not wanted(lw_id):
            continue
        for name, obs in wells.items():
            well = lw.wells.get(name)
            if well is None:
                continue
            if abs(well.volume - obs["volume_ul"]) > _TOL:
                deviations.append(
                    deviation(
                        "well_volume",
                        round(well.volume, 4),
                        round(obs["volume_ul"], 4),
                        labware=lw_id,
                        well=name,
                    )
                )
                well.volume = obs["volume_ul"]
                well.contents = dict(obs["contents"])
    for rack_id, tips in seen.get("tips", {}).items():
        rack = labware.get(rack_id)
        if rack is None or not wanted(rack_id):
            continue
        for spot, present in tips.items():
            if rack.tips.get(spot) != present:
                deviations.append(
                    deviation(
                        "tip_present", rack.tips.get(spot), present, labware=rack_id, well=spot
                    )
                )
                rack.tips[spot] = present
    for idx, obs in enumerate(seen.get("channels", [])[: len(channels)]):
        deviations.extend(_adopt_channel(idx, channels[idx], obs, labware))
    return deviations


def _observed_tip(seen: dict[str, Any], labware: dict[str, Labware]) -> Tip:
    """A tip found on a channel: it may hold its rack's usable volume, not the physical
    maximum the instrument reports (a "300 uL" tip that PyLabRobot says holds 400)."""
    rack = labware.get(seen.get("rack", ""))
    usable = rack.tip_max_volume if rack is not None and rack.tip_max_volume else None
    return Tip(seen.get("rack", "?"), seen.get("spot", "?"), usable or seen.get("max_volume", 0.0))


def _adopt_channel(
    idx: int, chan: Channel, obs: dict[str, Any], labware: dict[str, Labware]
) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    has = obs["tip"] is not None
    if (chan.tip is not None) != has:
        out.append(deviation("channel_tip", chan.tip is not None, has, channel=idx))
        chan.tip = _observed_tip(obs["tip"], labware) if has else None
    if obs.get("contents") is not None:
        volume = sum(obs["contents"].values())
        if abs(chan.volume - volume) > _TOL:
            out.append(
                deviation("tip_volume", round(chan.volume, 4), round(volume, 4), channel=idx)
            )
        chan.contents = dict(obs["contents"])
    return out
