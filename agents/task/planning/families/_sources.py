"""Where the liquid comes from when a clause does not say it in full: wells named without
their plate ("pool C1-C3 into blk A1" after a clause that filled norm_out C1-C3), "of each"
and "them" after a fill, "each library" (every well holding one), the heading's source.
"""

from __future__ import annotations

import re

from agents.task.planning import _resolve as r
from agents.task.planning._frames import Frame, Place
from agents.task.planning._labware_names import reservoir_like
from agents.task.planning._outcomes import Ask
from agents.task.planning._wellsets import SelectionError, WellSet
from agents.task.planning.families._held import _ONTO, _holders_on_one_plate
from agents.task.planning.families._places import _POOL, _copies

_FLAGS = re.IGNORECASE
_OF_EACH = re.compile(r"\b(?:of|from)\s+each\b", _FLAGS)
# "40 uL of each into pool A1" (the wells just worked on), not "10 uL of each primer".
_EACH_BACK = re.compile(
    r"\b(?:of|from)\s+(?:each|every|all)(?:\s+(?:one|well|of\s+(?:them|those|these|the\s+wells)))?"
    r"(?=\s*(?:$|[,;.)]|\b(?:into|to|in|onto|and|then|for|with)\b))",
    _FLAGS,
)
_THE_POOL = re.compile(
    r"\b(?:the|that|this)\s+(?:pool|pooled\s+[\w-]+|mixture|combined\s+[\w-]+|mix\b(?!\s*\d))"
    r"|\b(?:of|from)\s+(?:it|there|that\s+well|this\s+well)\b",  # "samples A1 has ... 30 uL of it"
    _FLAGS,
)


# "pool 5 uL of each normalised library", "the diluted samples": what the clause before made
_MADE_BEFORE = re.compile(
    r"\b(?:each|every|all|the)(?:\s+of)?(?:\s+(?:the|our|my))?(?:\s+\d+)?\s+(?:freshly\s+)?"
    r"(?:normali[sz]ed|diluted|equali[sz]ed|adjusted|quantified|purified|cleaned(?:[\s-]up)?)\b",
    _FLAGS,
)
_EACH_BEFORE = re.compile(
    r"\b(?:each|every|all)(?:\s+of)?(?:\s+(?:the|our|my))?(?:\s+\d+)?\s+$", _FLAGS
)


_THE_MANY = re.compile(r"\b(?:the|our|my|these|those)\s+$", _FLAGS)


def _plural(m: object) -> bool:
    """A liquid's name written in the plural ("indexed libraries" for "indexed library")."""
    written, name = str(getattr(m, "written", "")).lower(), str(getattr(m, "name", "")).lower()
    return written != name and written.endswith("s") and not name.endswith("s")


def _each_liquid(frame: Frame, p: r.Planning) -> tuple[str, list[str]] | None:
    """The wells holding a liquid said as "each library", "all the samples", on one plate (or
    as what a stamp copies: "replicate the cells")."""
    copied = _copies(frame)  # "stamp the cells onto assay_plate": every well holding them
    for m in frame.ents.liquids:
        said = (
            _EACH_BEFORE.search(frame.text[: m.start])
            or (copied and m is frame.liquid)
            or (_POOL.match(frame.text) and _THE_MANY.search(frame.text[: m.start]) and _plural(m))
        )  # "pool the indexed libraries into A1": every well holding one
        if not said or m.name not in p.world.liquids:
            continue
        if _ONTO.search(frame.text[: m.start]) and m is not frame.liquid:
            continue  # "add beads to each library": the libraries receive
        found = _holders_on_one_plate(m.name, p)
        if found is not None and len(found[1]) > 1:
            return found
    return None


def _implicit_sources(
    frame: Frame, dests: list[Place], p: r.Planning, wells: WellSet | None = None
) -> list[str]:
    """A source named by wells only (``wells``, else the clause's loose source wells): the one
    other labware the clause names, the heading's source, the one labware holding the named
    liquid, the plate holding liquid in those wells, else the destination's plate."""
    dest_names = {pl.labware.name for pl in dests if pl.labware is not None}
    named = [m.name for m in frame.ents.labware if m.name not in dest_names]
    if named:
        return named[:1]
    if p.head_source:
        return [p.head_source]
    if frame.liquid is not None:
        holders = {lw for lw, _, _ in p.world.liquids.get(frame.liquid.name, [])}
        if len(holders) == 1:
            return list(holders)
    loose = (
        [wells]
        if wells is not None
        else [
            pl.wells
            for role, pl in frame.places
            if role in ("head", "source") and pl.labware is None and pl.wells is not None
        ]
    )
    # "Cherry-pick into conf384:" over "- B2 -> A9", "..., next 30 uL from C5 to A2": the
    # heading's (or the clause before's) plate receives, so the wells to take from are on the
    # plate that holds liquid in them
    receiving = dest_names or (
        {p.head_dest} if p.head_dest and not p.head_source else {p.plate} if p.plate else set()
    )
    if receiving and loose and (held := _holding_plates(loose, receiving, p)):
        return held
    if dest_names:
        return sorted(dest_names)[:1]
    return [p.plate] if p.plate else r.work_plates(p.world)


def _holding_plates(loose: list[WellSet], dests: set[str], p: r.Planning) -> list[str]:
    """The plate that source wells named without one are on, when the destination's plate
    holds nothing there: the plate the clause before worked on ("add 40 uL to norm_out C1-C3,
    then pool C1-C3 into blk A1"), else the one plate that holds liquid in all of them."""
    if p.plate and p.plate not in dests and p.wells:
        view = p.world.labware(p.plate)
        if {w for ws in loose for w in ws.expand(view.rows, view.cols)} & set(p.wells):
            return [p.plate]
    holders = [
        lw
        for lw in r.work_plates(p.world)
        if (wells := _loose_on(loose, lw, p)) and all(p.world.well_volume(lw, w) > 0 for w in wells)
    ]
    if any(p.world.well_volume(d, w) > 0 for d in dests for w in _loose_on(loose, d, p)):
        return []  # the destination's plate holds them: a move within it
    holders = [h for h in holders if h not in dests]
    if len(holders) > 1 and (last := _last_source(p)) in holders:
        return [last]  # "from amplicons A1 to rxn A1, then 5 uL from A2 to rxn B1": the same
    if len(holders) > 1:
        raise Ask("Which plate are those wells on?", ["plate"], holders)
    return holders


def _last_source(p: r.Planning) -> str | None:
    """The plate the clause before took liquid from (a move still waiting, or emitted)."""
    if p.pending:
        return str(p.pending[-1].src[0])
    for step in reversed(p.world.steps):
        if step.command in ("transfer", "aspirate"):
            return str(step.args.get("source") or step.args.get("labware"))
    return None


def _loose_on(loose: list[WellSet], lw: str, p: r.Planning) -> list[str]:
    view = p.world.labware(lw)
    try:
        return [w for ws in loose for w in ws.expand(view.rows, view.cols)]
    except SelectionError:
        return []


def _unnamed_sources(
    frame: Frame, p: r.Planning, has_dest: bool
) -> list[tuple[str, list[str] | None]]:
    """The sources of a clause that names none, from what was said before it (or [])."""
    text = frame.text
    if p.head_source and (p.head_source_wells or _OF_EACH.search(text)):
        return [(p.head_source, list(p.head_source_wells) or None)]  # "25 uL of each"
    if _OF_EACH.search(text) and p.head_dest and p.head_wells:
        return [(p.head_dest, list(p.head_wells))]  # "Normalise A3 and B3: 60 uL from each"
    if (
        has_dest
        and p.plate
        and len(p.wells or []) > 1
        and (_EACH_BACK.search(text) or (frame.ents.refers_back and _POOL.match(text)))
    ):
        return [(p.plate, list(p.wells or []))]  # "add 50 uL to A1-A4, then pool 40 uL of each"
    if has_dest and p.plate and p.wells and _MADE_BEFORE.search(text):
        return [(p.plate, list(p.wells))]  # "... then pool 5 uL of each normalised library"
    if p.plate and p.wells and len(p.wells) <= 2 and _THE_POOL.search(text):
        return [(p.plate, list(p.wells))]  # "then 40 uL of the pool into quant A1"
    if each := _each_liquid(frame, p):
        return [each]  # "pool 5 uL of each library into ...": every well holding one
    if _copies(frame) and frame.liquid is None and not frame.ents.wellsets:
        # "stamp the mother plate onto X" with two plates holding liquid: which is the copy's
        full = [
            lw
            for lw in r.work_plates(p.world)
            if any(at == lw and v > 0 for (at, _), v in p.world.volume.items())
        ]
        raise Ask("Which plate should I copy from?", ["source"], full or r.work_plates(p.world))
    return []


def bulk_liquid(world: r.World, lw: str, wells: list[str]) -> str | None:
    """The one liquid in the trough well a clause took from by its place ("From res A3
    dispense 25 uL into X, then 25 uL into Y": Y gets the same); None for a plate's wells."""
    if len(wells) != 1 or not reservoir_like(world.labware(lw)):
        return None
    held = world.contents.get((lw, wells[0]), {})
    return next(iter(held)) if len(held) == 1 else None
