"""The plate a liquid names: the one work plate that holds it ("to the cells in A1:A6",
"take 30 uL off each lysate in column 6"), and the check that the wells named hold it."""

from __future__ import annotations

import re

from agents.task.planning import _resolve as r
from agents.task.planning._frames import Frame
from agents.task.planning._outcomes import Ask
from agents.task.planning._vocabulary import TREAT_VERBS

_FLAGS = re.IGNORECASE


def beside(frame: Frame, p: r.Planning) -> str | None:
    """A liquid the clause names besides the one it moves, kept on one plate ("to the cells
    in A1:A6", "from the cells in row A"): the plate of wells named without one."""
    moved = frame.liquid.name if frame.liquid is not None else None
    for m in frame.ents.liquids:
        on = {lw for lw, _, _ in p.world.liquids.get(m.name, [])}
        if m.name != moved and len(on) == 1:
            return m.name
    return None


def wells_named_by(frame: Frame, p: r.Planning) -> str | None:
    """'bring each culture well to 150 uL': a liquid written right before "well(s)" names the
    wells that hold it (on the one plate holding it), never what goes in."""
    for m in frame.ents.liquids:
        on = {lw for lw, _, _ in p.world.liquids.get(m.name, [])}
        after = frame.text[m.end :]
        if len(on) == 1 and re.match(r"(?:e?s)?\s+wells?\b", after, re.IGNORECASE):
            return m.name
        # "top off the overnight cultures in growth_plate ...": on the plate that holds them
        at = re.match(r"(?:e?s)?\s+(?:in|on)\s+(?:the\s+)?([\w-]+)", after, re.IGNORECASE)
        if len(on) == 1 and at is not None and at.group(1) in on:
            return m.name
    return None


def taken_out(frame: Frame, p: r.Planning, what: str) -> str | None:
    """'take 30 uL off each lysate in column 6': the liquid taken out names its plate."""
    if what != "take liquid from" or frame.liquid is None:
        return None
    on = {lw for lw, _, _ in p.world.liquids.get(frame.liquid.name, [])}
    return frame.liquid.name if len(on) == 1 else None


def holds(p: r.Planning, plate: str, wells: list[str], liquid: str) -> None:
    """The wells a liquid's plate was found by must hold that liquid, else which is asked."""
    held = {w for lw, w, _ in p.world.liquids.get(liquid, []) if lw == plate}
    if not set(wells) <= held:
        raise Ask(
            f"{liquid} is on {plate}, but not in every well named: which wells should I take "
            "it from?",
            ["wells"],
            sorted(held, key=lambda w: (int(w[1:]), w[0]))[:6],
        )


_WELLS_OF = re.compile(r"\b[\w-]+?(?:e?s)?\s+wells\b", re.IGNORECASE)


def topped(p: r.Planning, plate: str, liquid: str | None) -> list[str]:
    """The wells a top-up of a whole plate means: those holding ``liquid`` ("the amplicon
    wells"), else every well when every well holds something (a part-filled plate is asked)."""
    world, lw = p.world, p.world.labware(plate)
    every = [f"{chr(65 + i)}{c}" for c in range(1, lw.cols + 1) for i in range(lw.rows)]
    if liquid is not None:
        return [w for w in every if world.contents.get((plate, w), {}).get(liquid, 0) > 0]
    held = [w for w in every if world.well_volume(plate, w) > 0]
    return held if len(held) == len(every) else []


_NAMES_WELLS = re.compile(r"(?:e?s)?\s+wells\b", re.IGNORECASE)


def described_wells(
    frame: Frame, p: r.Planning, plate: str, wells: list[str], at: int | None
) -> list[str]:
    """'the overnight culture wells in column 1' (the set written at ``at``): of those wells,
    the ones holding that liquid (never the empty rest of the column); none holding it is
    asked. 'The empty wells of X row A': those of them holding nothing."""
    if at is not None and _REST_OF.search(frame.ents.marked[:at]):
        return _rest_of(p, plate, wells)
    if _EMPTY_WELLS.search(frame.text) and at is not None:
        empty = [w for w in wells if _empty_now(p, plate, w)]
        if not empty:
            raise Ask(f"No well of {plate} named is empty: which wells did you mean?", ["wells"])
        return empty
    moved = frame.liquid.name if frame.liquid is not None else None
    for m in frame.ents.liquids:
        between = frame.ents.text[m.end : at] if at is not None and at >= m.end else ""
        onto = m.name != moved and bool(_ONTO.search(frame.ents.text[: m.start]))
        in_plate = onto and re.fullmatch(r"\s+(?:in|on|of)\s+(?:the\s+)?[\w-]+\s+", between)
        if not (_NAMES_WELLS.match(between) or in_plate) or len(between) > 40:
            continue  # "the culture wells in col 1", "to the cells in hepg2_96 row A"
        if re.search(r"[,;]", between):
            continue
        holding = set(topped(p, plate, m.name))
        kept = [w for w in wells if w in holding]
        if not kept:
            raise Ask(
                f"None of {plate} {wells[0]}..{wells[-1]} holds {m.name}: which wells did you "
                "mean?",
                ["wells"],
                sorted(holding, key=lambda w: (int(w[1:]), w[0]))[:6],
            )
        return kept
    return wells


def holding_any(p: r.Planning, plate: str) -> list[str]:
    """The wells of ``plate`` that hold something, column by column."""
    held = (w for (lid, w), v in p.world.volume.items() if lid == plate and v > 0)
    return sorted(held, key=lambda w: (int(w[1:]), w[0]))


# "Feed the cells with ...": what is fed is where the liquid goes.
_TREATED = re.compile(
    rf"^(?:{TREAT_VERBS})\s+(?:all\s+|each\s+of\s+)?(?:the\s+)?$",
    _FLAGS,
)
_ONTO = re.compile(
    r"\b(?:to|onto|into|over|on)\s+(?:the\s+|all\s+(?:of\s+)?the\s+|each\s+of\s+the\s+|each\s+|every\s+|all\s+)?"
    r"(?:(?:wells?|ones?)\s+(?:containing|holding|with)\s+(?:the\s+)?)?$"  # "each well holding X"
    r"|[\w-]+\s+\(\s*(?:the\s+)?$",  # "to od_plate (culture wells only)"
    _FLAGS,
)
# "to the empty wells of od_plate", "into the unused wells": the wells holding nothing
# "the other wells of row A", "the rest of row A", "all remaining wells in column 1": the set
# said next, without the wells the clause before filled
_REST_OF = re.compile(
    r"\b(?<!every\s)(?<!each\s)(?:(?:all\s+|each\s+of\s+|every\s+one\s+of\s+)?(?:the\s+)?(?:other|remaining|leftover)"
    r"\s+wells?\s+(?:of|in|on|across|along)|(?:all\s+)?(?:the\s+)?(?:rest|remainder)\s+of)"
    r"\s+(?:the\s+)?(?:#+\s+)?(?:wells?\s+)?$",
    _FLAGS,
)


def _rest_of(p: r.Planning, plate: str, wells: list[str]) -> list[str]:
    """The wells of ``wells`` the clause before did not fill (it must have filled some)."""
    before = set(p.wells or []) if p.plate == plate else set()
    rest = [w for w in wells if w not in before]
    if not before & set(wells) or not rest:
        raise Ask(
            f"Nothing before this filled any of {plate} {wells[0]}..{wells[-1]}: which wells "
            "are the rest you mean?",
            ["wells"],
            [f"{wells[0]}..{wells[-1]}"],
        )
    return rest


_EMPTY_WELLS = re.compile(
    r"\b(?:the\s+)?(?:empty|unused|unfilled|free)\s+wells?\b"
    r"|\bwells?\s+(?:(?:that|which)\s+(?:are|is)\s+|still\s+)(?:still\s+)?(?:empty|unused|unfilled)\b",
    _FLAGS,
)


def _empty_now(p: r.Planning, plate: str, well: str) -> bool:
    """Whether ``well`` holds nothing at this point of the plan, the transfers not yet
    emitted (``p.pending``) counted: "then 50 uL DMSO to the empty wells" after row A."""
    now = p.world.well_volume(plate, well)
    now += sum(o.volume for o in p.pending if o.dst == (plate, well))
    now -= sum(o.volume for o in p.pending if o.src == (plate, well))
    return now <= 0


def _onto_liquid(frame: Frame, p: r.Planning) -> tuple[str, list[str]] | None:
    """The wells holding a liquid named as the destination, when they are on one plate."""
    for m in frame.ents.liquids:
        if frame.liquid is not None and m.name == frame.liquid.name:
            continue
        before = frame.text[: m.start]
        if not (_ONTO.search(before) or _TREATED.match(before)) or m.name not in p.world.liquids:
            continue
        found = _holders_on_one_plate(m.name, p)
        if found is not None:
            return found
        plates = sorted({lw for lw, _, _ in p.world.liquids.get(m.name, [])})
        if len(plates) > 1:  # "add 20 uL stain to the cells": cells on three plates
            raise Ask(f"{m.name} are on {', '.join(plates)}: which plate?", ["plate"], plates)
    return None


def _holders_on_one_plate(liquid: str, p: r.Planning) -> tuple[str, list[str]] | None:
    """The plate and wells (in row order) that hold ``liquid`` now, when they are all on one
    plate."""
    holders = [
        (lw, w)
        for (lw, w), mix in p.world.contents.items()
        if mix.get(liquid, 0) > 0 and p.world.well_volume(lw, w) > 0
    ]
    if len({lw for lw, _ in holders}) != 1:
        return None
    return holders[0][0], sorted((w for _, w in holders), key=lambda w: (w[0], int(w[1:])))


def empty_wells(frame: Frame, p: r.Planning, plate: str) -> list[str] | None:
    """The wells of ``plate`` holding nothing at this point when the clause names its
    destination only as "the (remaining) empty wells" (None when it does not); asked when
    none is empty."""
    if not _EMPTY_WELLS.search(frame.text) or frame.ents.wellsets:
        return None
    if not (empty := onto_held(frame, p, plate)):
        raise Ask(
            f"No well of {plate} is empty at that point: which wells did you mean?", ["wells"]
        )
    return empty


def onto_held(frame: Frame, p: r.Planning, plate: str) -> list[str]:
    """ "add 10 uL dye to the cells in ipsc_24": the wells of ``plate`` that hold the liquid
    said as the destination (in row order); [] when none does."""
    moved = frame.liquid.name if frame.liquid is not None else None
    if _EMPTY_WELLS.search(frame.text) and frame.ents.wellsets == []:
        every = [f"{chr(65 + i)}{c}" for i in range(26) for c in range(1, 49)]
        lw = p.world.labware(plate)
        grid = [w for w in every if ord(w[0]) - 65 < lw.rows and int(w[1:]) <= lw.cols]
        return [w for w in grid if _empty_now(p, plate, w)]
    for m in frame.ents.liquids:
        before, after = frame.text[: m.start], frame.text[m.end :]
        if m.name == moved or not (_ONTO.search(before) or _TREATED.match(before)):
            continue  # "the cells in ipsc_24", "the culture wells of X", "(culture wells only)"
        if re.match(
            r"\s+(?:wells?\s+)?(?:in|on|of)\s+(?:the\s+)?[\w-]+|\s+wells(?:\s+only)?\s*\)", after
        ):
            held = topped(p, plate, m.name)
            if held:
                return sorted(held, key=lambda w: (w[0], int(w[1:])))
    return []
