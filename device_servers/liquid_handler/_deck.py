"""The liquid handler's deck as the twin holds it: labware, wells, tips and channels.

Plain data, plus the arithmetic of mixtures (``take`` a volume out of one, ``pour`` one into
another). Only the twin changes these objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

EPS = 1e-6  # uL: below this a volume is nothing


@dataclass(slots=True)
class Well:
    volume: float
    max_volume: float
    contents: dict[str, float] = field(default_factory=dict)


@dataclass(slots=True)
class Labware:
    """A plate (``wells``) or a tip rack (``tips``: spot -> present)."""

    id: str
    kind: str  # "plate" | "tip_rack"
    type: str
    rows: int
    cols: int
    wells: dict[str, Well] = field(default_factory=dict)
    tips: dict[str, bool] = field(default_factory=dict)
    tip_max_volume: float = 0.0
    location: str = ""  # its deck slot, lab-wide name (lh1:plate_carrier:1)
    present: bool = True  # False once read back elsewhere (a plate mover took it)
    failed: set[str] = field(default_factory=set)  # tip spots whose pick-up failed: not used


@dataclass(slots=True)
class Tip:
    rack: str
    spot: str
    max_volume: float


@dataclass(slots=True)
class Channel:
    tip: Tip | None = None
    contents: dict[str, float] = field(default_factory=dict)

    @property
    def volume(self) -> float:
        return sum(self.contents.values())


def take(contents: dict[str, float], volume: float) -> dict[str, float]:
    """Remove ``volume`` from a mixture proportionally; return what was removed."""
    total = sum(contents.values())
    if total <= 0:
        return {}
    share = min(volume / total, 1.0)
    removed = {}
    for name in list(contents):
        part = contents[name] * share
        removed[name] = part
        left = contents[name] - part
        if left <= EPS:
            del contents[name]
        else:
            contents[name] = left
    return removed


def pour(contents: dict[str, float], added: dict[str, float]) -> None:
    for name, vol in added.items():
        contents[name] = contents.get(name, 0.0) + vol


def r4(value: float) -> float:
    """Volumes as the twin reports them (0.1 nL)."""
    return round(value, 4)


def deck_from_catalogue(
    catalogue: dict[str, Any], locations: dict[str, str], liquids: list[dict[str, Any]]
) -> dict[str, Labware]:
    """The deck as configured: geometry from the catalogue, liquids from the lab file."""
    labware: dict[str, Labware] = {}
    for lw_id, item in catalogue.items():
        lw = Labware(lw_id, item["kind"], item["type"], item["rows"], item["cols"])
        lw.location = locations[lw_id]
        if item["kind"] == "tip_rack":
            lw.tips = dict.fromkeys(item["names"], True)
            lw.tip_max_volume = item["tip_max_volume"]
        else:
            lw.wells = {n: Well(0.0, item["max_volumes"][n]) for n in item["names"]}
        labware[lw_id] = lw
    for liq in liquids:
        for n in liq["wells"]:
            well = labware[liq["labware"]].wells[n]
            well.volume = liq["volume_ul"]
            well.contents = {liq["liquid"]: liq["volume_ul"]}
    return labware


def copy_labware(lw: Labware) -> Labware:
    return Labware(
        lw.id,
        lw.kind,
        lw.type,
        lw.rows,
        lw.cols,
        {n: Well(w.volume, w.max_volume, dict(w.contents)) for n, w in lw.wells.items()},
        dict(lw.tips),
        lw.tip_max_volume,
        lw.location,
        lw.present,
        set(lw.failed),
    )


def copy_channel(c: Channel) -> Channel:
    tip = None if c.tip is None else Tip(c.tip.rack, c.tip.spot, c.tip.max_volume)
    return Channel(tip, dict(c.contents))


def snapshot_deck(
    labware: dict[str, Labware], channels: list[Channel], full: bool
) -> dict[str, Any]:
    """Structured state. ``full`` lists empty wells too (used for persistence)."""
    out: dict[str, Any] = {}
    for lw in labware.values():
        entry: dict[str, Any] = {
            "kind": lw.kind,
            "type": lw.type,
            "rows": lw.rows,
            "cols": lw.cols,
            "location": lw.location,
            "present": lw.present,
        }
        if lw.kind == "tip_rack":
            entry["tip_max_volume_ul"] = lw.tip_max_volume
            entry["tips_present"] = [s for s, p in lw.tips.items() if p]
            # Usable tips: a spot whose pick-up failed is not taken again.
            entry["tips_remaining"] = sum(s not in lw.failed for s in entry["tips_present"])
            entry["tips_failed"] = sorted(lw.failed)
            if full:
                entry["tips"] = dict(lw.tips)
        else:
            entry["well_max_volume_ul"] = max((w.max_volume for w in lw.wells.values()), default=0)
            entry["wells"] = {
                n: {
                    "volume_ul": r4(w.volume),
                    "contents": {k: r4(v) for k, v in w.contents.items()},
                    **({"max_volume_ul": w.max_volume} if full else {}),
                }
                for n, w in lw.wells.items()
                if full or w.volume > EPS
            }
        out[lw.id] = entry
    chans = [
        {
            "channel": i,
            "tip": None
            if c.tip is None
            else {"rack": c.tip.rack, "spot": c.tip.spot, "max_volume_ul": c.tip.max_volume},
            "volume_ul": r4(c.volume),
            "contents": {k: r4(v) for k, v in c.contents.items()},
        }
        for i, c in enumerate(channels)
    ]
    return {"labware": out, "channels": chans}


def deck_from_snapshot(snap: dict[str, Any]) -> tuple[dict[str, Labware], list[Channel]]:
    """The deck persisted with ``snapshot_deck(..., full=True)``."""
    labware = {}
    for lw_id, e in snap["labware"].items():
        lw = Labware(lw_id, e["kind"], e["type"], e["rows"], e["cols"])
        lw.location = e.get("location", "")
        lw.present = e.get("present", True)
        if e["kind"] == "tip_rack":
            lw.tips = dict(e["tips"])
            lw.tip_max_volume = e["tip_max_volume_ul"]
            lw.failed = set(e.get("tips_failed", []))
        else:
            lw.wells = {
                n: Well(w["volume_ul"], w["max_volume_ul"], dict(w["contents"]))
                for n, w in e["wells"].items()
            }
        labware[lw_id] = lw
    channels = []
    for s in snap["channels"]:
        c = Channel()
        if s["tip"]:
            c.tip = Tip(s["tip"]["rack"], s["tip"]["spot"], s["tip"]["max_volume_ul"])
        c.contents = dict(s["contents"])
        channels.append(c)
    return labware, channels
