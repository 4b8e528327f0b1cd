"""How much a removal or an addition moves when the request says it by what the wells hold:
"leaving 30 uL", "down to 50 uL", "an equal volume of water", "double the volume", "half (50%)
of the medium"."""

from __future__ import annotations

import re

from agents.task.planning import _pipetting as pip
from agents.task.planning import _resolve as r
from agents.task.planning._frames import Frame
from agents.task.planning._outcomes import Ask, Refuse
from agents.task.planning._quantities import Quantity, fmt

_FLAGS = re.IGNORECASE
# "leaving 30 uL in each well", "down to 50 uL", "to a residual of 20 uL": what stays behind
RESIDUAL = re.compile(
    r"\b(?:leaving|leave|keep(?:ing)?|down\s+to|residual(?:\s+volume)?\s+of)\s+"
    r"(?:only\s+|just\s+|about\s+|approx(?:\.|imately)?\s+|ca\.?\s+|~\s*)?"
    r"(?P<v>\d+(?:\.\d+)?)\s*(?P<u>u[lL]|µ[lL]|m[lL])\b",
    _FLAGS,
)
# "then take it back out to waste": what the clause before put in, out again
IT_OUT = re.compile(
    r"^(?:take|pull|draw|suck|get)\s+(?:it|them)\s+(?:back\s+)?out(?:\s+again)?"
    r"\s+(?:to|into)\s+(?:the\s+)?(?:waste|trash|bin)\W*$",
    _FLAGS,
)
EQUAL = re.compile(
    r"\b(?:an?\s+)?(?:equal|the\s+same)\s+volume\s+of\b|^double\s+the\s+volume\b", _FLAGS
)
SHARE = re.compile(
    r"\b(half|a\s+third|one\s+third|two\s+thirds|a\s+quarter|one\s+quarter|three\s+quarters"
    r"|1/2|1/3|2/3|1/4|3/4|(\d+(?:\.\d+)?)\s*%)\s+(?:of\s+)?(?:the\s+|its\s+|their\s+)?"
    r"(?:old\s+|spent\s+)?(?:medium|media|volume|liquid|supernatant|buffer)\b",
    _FLAGS,
)
# "pool everything", "all of them", "the entire contents": each source's whole volume.
WHOLE = re.compile(
    r"\b(?:everything|(?:the\s+)?(?:entire|whole|full)\s+(?:volume|contents?)"
    r"|all\s+(?:of\s+)?(?:the\s+|its\s+|their\s+)?(?:volume|contents?|liquid)|all\s+of\b(?!\s+the\s+wells))",
    _FLAGS,
)
# "divide A1 equally into B1:B5", "split evenly across", "into 3 equal parts"
_EVENLY = re.compile(
    r"\b(?:equally|evenly|equal\s+(?:parts|portions|volumes|aliquots|shares))\b", _FLAGS
)
_REFILL = re.compile(
    r"^(?:and\s+)?(?:replace|refill|replenish|top\s+(?:up|off)|add\s+back|put\s+back)\b", _FLAGS
)
_SHARES = {"half": 0.5, "third": 1 / 3, "thirds": 2 / 3, "quarter": 0.25, "quarters": 0.75}


# "Remove half", "take off 90% of it": a share of what the wells hold, the wells said before.
_SHARE_ALONE = re.compile(
    r"^(?:remove|aspirate|discard|take\s+(?:off|out)|exchange|replace)\s+(half|a\s+third|one\s+third|"
    r"two\s+thirds|a\s+quarter|one\s+quarter|three\s+quarters|(\d+(?:\.\d+)?)\s*%)"
    r"(?:\s+of\s+(?:it|them|each(?:\s+well)?|that|those))?\W*$",
    _FLAGS,
)


def share(text: str) -> float | None:
    """ "half of the medium" -> 0.5, "50% of the media" -> 0.5 (None: no share said)."""
    m = SHARE.search(text) or _SHARE_ALONE.match(text)
    if m is None:
        return None
    if m.group(2):
        return float(m.group(2)) / 100
    if "/" in m.group(1):  # "replace 1/2 the medium"
        top, bottom = m.group(1).split("/")
        return int(top) / int(bottom)
    return _SHARES[m.group(1).split()[-1].lower()]


def equal(frame: Frame, p: r.Planning, plate: str, wells: list[str]) -> str:
    """ "Add an equal volume of water to column 3", "double the volume with buffer": into each
    well as much as it holds."""
    world = p.world
    liquid = r.liquid(frame.liquid, p) if frame.liquid else None
    if liquid is None:
        raise Ask("Which liquid should I add?", ["liquid"], r.liquids(world))
    adds = [(w, round(world.well_volume(plate, w), 4)) for w in wells]
    if not any(v > 0 for _, v in adds):
        raise Ask(f"{plate} {wells[0]}.. hold nothing: how many uL should go in?", ["volume"], [])
    src = r.source_of(liquid, sum(v for _, v in adds), world, {(plate, w) for w in wells})
    ops = [pip.Op(src, (plate, w), v) for w, v in adds if v > 0]
    policy = pip.policy_used(ops, frame.ents.tips or p.tips)
    pip.emit(
        world, world.labware(plate).instrument, ops, frame.ents.channels or p.channels or 1, policy
    )
    p.plate, p.wells = plate, wells
    return f"add to each of {plate} {wells[0]}..{wells[-1]} as much {liquid} as it holds"


def down_to(frame: Frame, p: r.Planning, plate: str, wells: list[str], keep: float) -> str:
    """ "Remove the medium leaving 30 uL", "take row B down to 50 uL": what each well holds
    above the volume it keeps, to waste."""
    world = p.world
    ops = [pip.Op((plate, w), None, round(world.well_volume(plate, w) - keep, 4)) for w in wells]
    ops = [o for o in ops if o.volume > 1e-6]
    if not ops:
        raise Refuse(
            f"{plate} holds no more than {fmt(keep, 'uL')} in those wells", "nothing_to_do"
        )
    channels = frame.ents.channels or p.channels or 1
    pip.emit(world, world.labware(plate).instrument, ops, channels, "per_destination")
    p.plate, p.wells = plate, wells
    return (
        f"take {plate} {wells[0]}..{wells[-1]} ({len(wells)} wells) down to {fmt(keep, 'uL')} "
        "each (the rest to waste, a new tip for every well)"
    )


def whole(
    frame: Frame, src_sets: list[tuple[str, list[str] | None]], p: r.Planning
) -> list[float] | None:
    """ "Pool everything from A1-A3", "all of them": what each source well holds at that point
    of the plan (moves said before and not yet emitted included); None when not said so.
    "Divide lysate A1 equally into B1:B5": what the one source holds becomes the total."""
    evenly = _EVENLY.search(frame.text)
    if not (WHOLE.search(frame.text) or evenly) or not src_sets:
        return None
    if not all(ws for _, ws in src_sets) or (
        evenly and sum(len(ws or []) for _, ws in src_sets) > 1
    ):
        return None
    coming = {(lw, w): 0.0 for lw, ws in src_sets for w in ws or []}
    for op in p.pending:
        if op.dst in coming:
            coming[op.dst] += op.volume
        if op.src in coming:
            coming[op.src] -= op.volume
    held = [round(p.world.well_volume(*k) + v, 4) for k, v in coming.items()]
    if not any(v > 0 for v in held):
        raise Refuse(f"{src_sets[0][0]} holds nothing in those wells", "insufficient_liquid")
    if evenly:
        frame.total = Quantity("volume", held[0], "", 0, 0)  # shared out over the wells
        return None
    return held


def per_well(
    frame: Frame, volume: float, plate: str, wells: int, world: r.World, moves: int = 0
) -> None:
    """One volume into each of ``wells`` wells: more than 0, no more than a well holds, and,
    for "8 x 500 uL aliquots", as many wells as aliquots and the total they add up to. A total
    said beside the volume ("150 uL into F1-F4, 600 uL in total") must be what the ``moves``
    add up to; one that is not is asked about, never dropped."""
    r.positive_volume(volume, frame.volume.text if frame.volume else f"{volume:g} uL")
    room = world.labware(plate).well_max_volume_ul
    if room and volume > room + 1e-6:
        raise Refuse(
            f"{fmt(volume, 'uL')} is more than a {plate} well holds ({fmt(room, 'uL')})",
            "capacity",
        )
    count = frame.extra.get("aliquots")
    total = frame.total.value if frame.total is not None else None
    if (
        not isinstance(count, int)
        and moves
        and frame.volume is not None
        and total is not None
        and abs(total - moves * volume) > 0.01
    ):
        raise Ask(
            f"{moves} x {fmt(volume, 'uL')} is {fmt(moves * volume, 'uL')}, not the "
            f"{fmt(total, 'uL')} in total said: how much should each well get?",
            ["volume"],
            [fmt(total / moves, "uL"), fmt(volume, "uL")],
        )
    if not isinstance(count, int):
        return
    if count != wells:
        raise Ask(
            f"{count} aliquots of {fmt(volume, 'uL')} but {wells} wells to put them in: which "
            "wells, or how many aliquots?",
            ["wells"],
            [f"{count} wells", f"{wells} aliquots"],
        )
    if frame.total is not None and abs(frame.total.value - count * volume) > 0.01:
        raise Ask(
            f"{count} x {fmt(volume, 'uL')} is {fmt(count * volume, 'uL')}, not the "
            f"{fmt(frame.total.value, 'uL')} said: how much should each aliquot be?",
            ["volume"],
            [fmt(frame.total.value / count, "uL"), fmt(volume, "uL")],
        )


def part_out(frame: Frame, p: r.Planning, plate: str, wells: list[str], part: float) -> str:
    """ "Remove half of the medium", "take 90% of the supernatant off": that share of what
    each well holds, to waste (a new tip for every well)."""
    world = p.world
    ops = [pip.Op((plate, w), None, round(world.well_volume(plate, w) * part, 4)) for w in wells]
    ops = [o for o in ops if o.volume > 1e-6]
    if not ops:
        raise Refuse(f"{plate} {wells[0]}.. hold nothing to take a share of", "nothing_to_do")
    channels = frame.ents.channels or p.channels or 1
    pip.emit(world, world.labware(plate).instrument, ops, channels, "per_destination")
    p.plate, p.wells = plate, wells
    return (
        f"take {part:.0%} of what {plate} {wells[0]}..{wells[-1]} ({len(wells)} wells) hold out "
        "to waste (a new tip for every well)"
    )


def refill(
    frame: Frame, p: r.Planning, dest_sets: list[tuple[str, list[str]]]
) -> list[float] | None:
    """ "Remove 90% of the medium and replace with fresh": what the removal just before took
    out of each well goes back in (None when this is no refill of those wells)."""
    wells = [(lw, w) for lw, ws in dest_sets for w in ws]
    if not _REFILL.match(frame.text) or not wells or not all(k in p.removed for k in wells):
        return None
    back, p.removed = [p.removed[k] for k in wells], {}
    return back


def only_what_went_in(world: r.World, plate: str, wells: list[str]) -> None:
    """'Take it back out' empties wells that hold one liquid; wells that held something before
    it went in would lose more than 'it', so how much is asked."""
    mixed = [w for w in wells if len(world.contents.get((plate, w), {})) > 1]
    if mixed:
        raise Ask(
            f"{plate} {mixed[0]} holds more than the liquid just added: how many uL should I "
            "take out of each well?",
            ["volume"],
        )


def mixed_after(frame: Frame) -> tuple[int, float | None]:
    """Mixing after each dispense when the clause (or an "and mix" joined to it) asks for it:
    (cycles, volume); 3 cycles when no count is said, (0, None) when no mixing is."""
    if not frame.ents.mix or frame.ents.no_mix:
        return 0, None
    return frame.ents.mix_times or 3, frame.mix_volume.value if frame.mix_volume else None


# "top each well up with 15 uL", "top off by 20 uL": the amount added, not the level reached.
_BY_AMOUNT = re.compile(
    r"(?:\b(?:with|by|add(?:ing)?|another|extra|additional|an?\s+(?:further|additional|extra))|\bw/)\s*"
    r"(?:(?:another|an?\s+(?:further|additional|extra)|extra|additional)\s+)?$",
    _FLAGS,
)


def amount_added(frame: Frame) -> float | None:
    """The per-well volume a top-up adds when it says an amount, never a level to reach."""
    q = frame.volume
    if q is None or frame.final is not None or frame.total is not None:
        return None
    before = frame.text[: q.start]
    if re.search(r"\bto\s+(?:a\s+)?(?:final\s+|total\s+)?(?:volume\s+of\s+)?$", before, _FLAGS):
        return None  # "q.s. to 200 uL"
    return q.value if _BY_AMOUNT.search(before) else None
