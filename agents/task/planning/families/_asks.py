"""What a transfer leaves open that the planner asks about rather than fill in: how many
times a transfer said "twice" is done, which wells of a plate one well goes into "each", how a
list of volumes that does not match the wells is shared, which part of a plate "half" is."""

from __future__ import annotations

import re

from agents.task.planning import _resolve as r
from agents.task.planning._frames import Frame, _role_cuts, role_at
from agents.task.planning._outcomes import Ask
from agents.task.planning._quantities import fmt
from agents.task.planning._wellsets import examples
from agents.task.planning.families._places import _EACH_AFTER, _SAME_WELLS

_FLAGS = re.IGNORECASE
# "add 10 uL buffer to A1 twice", "..., 3 times", "... x2": the whole transfer said n times
# ("8 x 500 uL aliquots" is a count of wells, each its volume)
_REPEATED = re.compile(
    r"\b(?:\d+|two|three|four|five)\s*(?:times|x)\b(?!\s*[\d.])|\b(?:twice|thrice)\b"
    r"|\bx\s*\d+\b(?!\s*(?:[.\d]|[uµm]l\b))",
    _FLAGS,
)
_SPREADS = re.compile(r"^(?:spot|distribute|aliquot|dispense|dot)\b", _FLAGS)
# "fill half of assay_plate_3": a part of the plate, not every well
PART_OF = re.compile(
    r"\b(?:half|a\s+third|a\s+quarter|part|some|most|rest|remainder)\b(?:\s+of)?(?:\s+the)?\s+#?",
    _FLAGS,
)


def repeats(frame: Frame) -> None:
    """A transfer said to be done n times (not a mix's cycles) is asked about: n dispenses of
    the volume, or one - never done once with the count left out."""
    n = frame.ents.times
    if n is None or n < 2 or frame.ents.mix or not _REPEATED.search(frame.text):
        return
    each = fmt(frame.volume.value, "uL") if frame.volume is not None else "the volume"
    raise Ask(
        f"You say {n} times: should each well get {each} {n} times over, or {each} once?",
        ["count"],
        [f"{n} x {each}", f"1 x {each}"],
    )


def one_into_many(frame: Frame, src: list[str]) -> bool:
    """'spot cDNA_plate A1 into qPCR384, 4 uL each': one well said to go into several wells
    of a plate that names none - which wells is asked, never the source's position taken."""
    if len(src) != 1 or _SAME_WELLS.search(frame.text):
        return False
    each = any(_EACH_AFTER.match(frame.text[q.end :]) for q in frame.volumes)
    return bool(each or _SPREADS.match(frame.text))


# "the 2.2 mL block", "300 uL tips": a size that names labware, no volume to move
_LABWARE_SIZE = re.compile(
    r"\s*(?:deep[\s-]?well\s+)?(?:blocks?|plates?|tubes?|tips?|troughs?|reservoirs?|racks?)\b",
    _FLAGS,
)


def unmatched_list(frame: Frame, wells: int) -> None:
    """'add 10, 20 uL buffer to A1, A2, A3', 'buffer to A1-A3 (20 uL) and A4-A6 (40 uL)':
    volumes that are not one per well are asked about, never the first given to every well."""
    starts = {m.start for m in frame.ents.labware}
    said = [
        q
        for q in frame.volumes
        if not _LABWARE_SIZE.match(frame.text[q.end :])
        and q.end + len(frame.text[q.end :]) - len(frame.text[q.end :].lstrip()) not in starts
    ]  # "the 1.6 mL plate48": the plate's size
    if len({q.value for q in said}) > 1:
        given = ", ".join(fmt(q.value, "uL") for q in said)
        raise Ask(
            f"You give {len(said)} volumes ({given}) for {wells} wells: which volume "
            "goes into which well?",
            ["volume"],
        )


# "some wells in row A", "the first few wells of row A", "most of row A": part of a set
_SOME_OF = re.compile(
    r"\b(?:some|several|(?:the\s+(?:first|last)\s+)?(?:a\s+)?few|a\s+couple(?:\s+of)?|most|part|half)"
    r"\s+(?:of\s+)?(?:the\s+)?(?:#+\s+)?(?:wells?|rows?|columns?|cols?)\b",
    _FLAGS,
)


def part_of(frame: Frame, plate: str, world: r.World, named: bool = False) -> None:
    """'fill half of assay_plate_3', 'some wells in row A': which part of the plate or of the
    set is asked, never every well of it."""
    said = (None if named else PART_OF.search(frame.ents.marked)) or _SOME_OF.search(
        frame.ents.marked
    )
    if said is not None:
        if role_at(_role_cuts(frame.text, frame.ents.liquids), said.start()) == "source":
            raise Ask("Which wells should the liquid come from?", ["wells"])  # "from most of"
        view = world.labware(plate)
        raise Ask(
            f"Which wells of {plate} should receive it?", ["wells"], examples(view.rows, view.cols)
        )
