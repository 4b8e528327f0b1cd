"""What no answer can make possible: refused before anything is asked.

A request that leaves something open (which plate? which wells?) and also states a value
beyond a limit ("Shake the plate at 2500 rpm", "0.2 uL into each well of row A", "well Q5"
with only 96-well plates) cannot be done whatever the person answers. Asking first wastes a
round and hides the real reason, so when a builder asks, these values are checked against
every candidate the answer could name: a value beyond the limit of all of them is refused with
its physical or policy reason. Only values the clause gives for what it does are checked
(never "buffer pre-warmed to 90 C"), and only what holds for every candidate.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from agents.task.planning import _resolve as r
from agents.task.planning._frames import Frame
from agents.task.planning._outcomes import Refuse
from agents.task.planning._wellsets import SelectionError, WellSet
from agents.task.planning.families._cycler_hold import cycler_only

_LIQUID = frozenset({"transfer", "dilution", "chain", "volumes", "mix"})
_LANES = re.compile(r"\b(\d{1,3})\s+(columns|cols|rows)\b", re.IGNORECASE)  # "13 columns of"


def check(frames: Iterable[Frame | None], p: r.Planning) -> None:
    """Refuse the first stated value that is beyond the limits of every candidate."""
    for frame in frames:
        if frame is None:
            continue
        if frame.family in _LIQUID:
            _volumes(frame, p)
            _too_full(frame, p)
            _wells(frame, p)
            times = frame.ents.mix_times or (frame.ents.times if frame.family == "mix" else None)
            if times:  # "mix the wells 100 times": beyond what any mixing may repeat
                r.within(times, "mix_repetitions", None, p.world, "mixing", "times")
        elif frame.family == "incubate":
            _heater_shaker(frame, p)
        elif frame.family == "read":
            _reader(frame, p)


def _only(kind: str, p: r.Planning) -> str | None:
    """The lab's one instrument of a kind (a limit is only certain for one)."""
    found = p.world.lab.of_kind(kind)
    return found[0].id if len(found) == 1 else None


def _volumes(frame: Frame, p: r.Planning) -> None:
    """A per-well volume below the least every liquid handler may pipette (its policy); a
    volume above the most is split into passes, so only the least is certain."""
    handler = _only("liquid_handler", p)
    if handler is None or frame.total is not None:
        return
    stated = [q for q in [frame.volume, *frame.volumes] if q is not None and q.kind == "volume"]
    for rule in p.world.lab.instruments[handler].policy:
        least = rule.get("min")
        if rule.get("type") != "limit" or rule.get("arg") != "volume_ul" or least is None:
            continue
        if "transfer" not in (rule.get("commands") or ["transfer"]):
            continue
        for q in stated:
            if q is not frame.final and 0 < q.value < float(least):
                why = rule.get("reason") or rule.get("id")
                raise Refuse(f"{q.text}: the lab's policy forbids it — {why}", "policy_limit")


def _too_full(frame: Frame, p: r.Planning) -> None:
    """A volume per well beyond what a well of every plate the clause sends it to holds ("60 uL
    to lc384 A1", wells of 50 uL): refused for the well's size before asking where from."""
    if frame.family != "transfer" or frame.volume is None or frame.total is not None:
        return
    dests = {pl.labware.name for role, pl in frame.places if role == "dest" and pl.labware}
    if not dests or not all(m.sure for m in frame.ents.labware):
        return
    sizes = {lw: p.world.labware(lw).well_max_volume_ul for lw in dests}
    if all(frame.volume.value > size for size in sizes.values()):
        lw, size = max(sizes.items(), key=lambda kv: kv[1])
        raise Refuse(
            f"{frame.volume.text} is more than a {lw} well holds ({round(size, 3):g} uL)",
            "capacity",
        )


def _wells(frame: Frame, p: r.Planning) -> None:
    """Wells (or a count of wells) that are on none of the plates the clause could mean."""
    candidates = r.work_plates(p.world)
    for _, place in frame.places:
        if place.wells is None or place.labware is not None or place.unknown is not None:
            continue
        if not any(_on(place.wells, lw, p) for lw in candidates):
            raise Refuse(
                f"{place.wells.text} is on none of the lab's plates "
                f"({', '.join(_size(lw, p) for lw in candidates)})",
                "plate_size",
            )
    named = [m.name for m in frame.ents.labware if m.sure and m.name in candidates]
    candidates = named or candidates
    count = frame.ents.well_count
    if count and all(_wells_of(lw, p) < count for lw in candidates):
        raise Refuse(
            f"{count} wells: no plate it could mean has that many "
            f"({', '.join(_size(lw, p) for lw in candidates)})",
            "plate_size",
        )
    for m in _LANES.finditer(frame.text):
        n, lanes = int(m.group(1)), m.group(2).lower()
        views = {lw: p.world.labware(lw) for lw in candidates}
        if views and all(n > (v.rows if lanes == "rows" else v.cols) for v in views.values()):
            sizes = ", ".join(f"{lw} is {v.rows}x{v.cols}" for lw, v in views.items())
            raise Refuse(
                f"{m.group(0)}: no plate it could mean has that many ({sizes})", "plate_size"
            )


def _on(wells: WellSet, labware: str, p: r.Planning) -> bool:
    view = p.world.labware(labware)
    try:
        return bool(wells.expand(view.rows, view.cols))
    except SelectionError:
        return False


def _wells_of(labware: str, p: r.Planning) -> int:
    view = p.world.labware(labware)
    return view.rows * view.cols


def _size(labware: str, p: r.Planning) -> str:
    return f"{labware} has {_wells_of(labware, p)} wells"


def _heater_shaker(frame: Frame, p: r.Planning) -> None:
    hs = _only("heater_shaker", p)
    if hs is None:
        return
    if frame.temperature is not None and not (
        frame.speed is None and cycler_only(frame.temperature.value, hs, p.world)
    ):  # ("incubate at 95 C for 10 min": the thermocycler may hold it, once a plate is named)
        r.within(frame.temperature.value, "temperature_range_c", hs, p.world, "temperature", "C")
    if frame.speed is not None:
        r.within(frame.speed.value, "rpm_range", hs, p.world, "speed", "rpm")
    if frame.duration is not None:
        r.within(frame.duration.value, "duration_range_s", None, p.world, "duration", "s")


def _reader(frame: Frame, p: r.Planning) -> None:
    reader = _only("plate_reader", p)
    if reader is None or len(frame.wavelengths) != 1:
        return  # excitation and emission are checked by the reader's builder
    value = frame.wavelengths[0].value
    r.within(value, "wavelength_range_nm", reader, p.world, "wavelength", "nm")
