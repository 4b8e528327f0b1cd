"""What a transfer leaves open that the planner asks about rather than fill in: how many
times a transfer said "twice" is done, which wells of a plate one well goes into "each", how a
list of volumes that does not match the wells is shared, which part of a plate "half" is."""

from __future__ import annotations

import re

from agents.task.planning import _pipetting as pip
from agents.task.planning import _resolve as r
from agents.task.planning._frames import Frame, Place, _role_cuts, role_at
from agents.task.planning._outcomes import Ask
from agents.task.planning._quantities import Quantity, fmt
from agents.task.planning._wellsets import SelectionError, examples
from agents.task.planning._world import World
from agents.task.planning.families import _said_liquid
from agents.task.planning.families._places import _COPYING, _EACH_AFTER, _SAME_WELLS, _STAMP, _roles

_FLAGS = re.IGNORECASE
# "add 10 uL buffer to A1 twice", "..., 3 times", "... x2": the whole transfer said n times
# ("8 x 500 uL aliquots" is a count of wells, each its volume)
_REPEATED = re.compile(
    r"\b(?:\d+|two|three|four|five)\s*(?:times|x)\b(?!\s*[\d.])|\b(?:twice|thrice)\b"
    r"|\bx\s*\d+\b(?!\s*(?:[.\d]|[uµm]l\b|wells?\b))",  # "x 3 wells": a count of wells
    _FLAGS,
)
_X_COUNT = re.compile(r"(?<![\w.])(?:x\s*[2-9]|[2-9]\s*x)(?![\w.])", _FLAGS)
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
    if _in_a_name(frame, n):  # "triton x100": the lab's "0.1% Triton X-100", no count
        return
    if _counts_copies(frame, n):  # "samples A1 x3 into dest_plate A1-A3": one into each
        frame.ents.replicates = n
        return
    each = fmt(frame.volume.value, "uL") if frame.volume is not None else "the volume"
    raise Ask(
        f"You say {n} times: should each well get {each} {n} times over, or {each} once?",
        ["count"],
        [f"{n} x {each}", f"1 x {each}"],
    )


def _in_a_name(frame: Frame, n: int) -> bool:
    """'x100' said as part of a lab liquid's name ('Triton X-100'), not a count."""
    world = frame.extra.get("world")
    if not isinstance(world, r.World) or not re.search(rf"\bx\s*-?\s*{n}\b", frame.text, _FLAGS):
        return False
    return any(re.search(rf"\bx-?{n}\b", name, _FLAGS) for name in world.liquids)


def _counts_copies(frame: Frame, n: int) -> bool:
    """'x3' said of wells that go into n times as many wells, one copy in each: replicates
    (doing each transfer n times would put n volumes into every well)."""
    if frame.ents.replicates is not None:
        return False
    world = frame.extra.get("world")
    assert world is None or isinstance(world, r.World)

    def count(places: list[Place]) -> int:
        total = 0
        for pl in places:
            if pl.wells is None:
                continue
            lw = world.labware(pl.labware.name) if world and pl.labware else None
            total += len(pl.wells.expand(lw.rows if lw else 8, lw.cols if lw else 12))
        return total

    sources, dests = _roles(frame)
    taken, into = count(sources), count(dests)
    plates = {d.labware.name for d in dests if d.labware is not None}
    if _X_COUNT.search(frame.text) and len(plates) == n and all(d.wells is None for d in dests):
        return True  # "stamp src x2 (dst, qc)": one copy onto each plate named
    if not _X_COUNT.search(frame.text):  # "to A1-A3 3 times", "twice": the transfer said again,
        # unless the wells of the copies follow it ("a set twice (columns 1-6 and 7-12)")
        said = _REPEATED.search(frame.text)
        after = [d.wells.start for d in dests if d.wells is not None]
        return bool(taken > 1 and said and after and said.end() <= min(after) and into == n * taken)
    if taken == 0 and frame.ents.liquids and not any(s.wells for s in sources):
        return _count_before(frame, dests) and into == n  # "dye x3 -> plate_1 A1-A3": a well each
    return taken > 0 and into == n * taken


def _count_before(frame: Frame, dests: list[Place]) -> bool:
    """The "x3" is said before the destination's wells (after them it may mean each well
    gets the volume three times: "to A1-A3 x3")."""
    said = _X_COUNT.search(frame.text)
    after = [d.wells.start for d in dests if d.wells is not None]
    return said is not None and bool(after) and said.end() <= min(after)


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


# "20 uL into 180 uL of diluent", "100 uL to the 100 uL already in B1", "wells holding 50 uL":
# a volume said after where it goes (or what a well holds) is the well's content, and
# "200 uL final" / "to 300 uL" a level: neither is an amount to move
_HELD_BEFORE = re.compile(
    r"\b(?:into|to|onto|in|containing|holding|hold|holds|has|have|had|contains?|over|"
    r"on\s+top\s+of|up\s+to|reach(?:es)?|make\s+up\s+to)\s+(?:the\s+|each\s+|an?\s+)?"
    r"(?:already\s+)?$",
    _FLAGS,
)
_LEVEL_AFTER = re.compile(
    r"\s*(?:(?:per\s+well\s+|each\s+|/\s*well\s+)?(?:final|total)|in\s+total|left|remaining)\b",
    _FLAGS,
)
# "final volume 100 uL", "a total of 200 uL", "leaving 50 uL", "ending at 100 uL"
_LEVEL_BEFORE = re.compile(
    r"\b(?:(?:final|total)(?:\s+(?:volume|vol\.?))?(?:\s+(?:of|is|=|:))?|(?:a\s+)?total\s+of|"
    r"leav(?:e|ing)|end(?:s|ing)?(?:\s+up)?(?:\s+(?:at|with))?|keep(?:ing)?|remain(?:s|ing)?)"
    r"\s*(?:the\s+|each\s+|an?\s+)?$",
    _FLAGS,
)


def _moved(frame: Frame, q: Quantity) -> bool:
    """Whether a volume of the clause is an amount to move (not a size, a content, a level)."""
    after = frame.text[q.end :]
    starts = {m.start for m in frame.ents.labware}
    return not (
        _LABWARE_SIZE.match(after)
        or q.end + len(after) - len(after.lstrip()) in starts  # "the 1.6 mL plate48"
        or _HELD_BEFORE.search(frame.text[: q.start])
        or _LEVEL_AFTER.match(after)
        or _LEVEL_BEFORE.search(frame.text[: q.start])
    )


_LIST_ON = re.compile(r"\s*(?:,|/|;|&|\band\b|\bor\b)\s*\d", _FLAGS)


def unmatched_list(frame: Frame, wells: int) -> None:
    """'add 10, 20 uL buffer to A1, A2, A3', 'buffer to A1-A3 (20 uL) and A4-A6 (40 uL)':
    volumes given as peers - a list sharing one unit, or one in brackets after each set of
    wells - that are not one per well are asked about, never the first given to every well.
    Other volumes of the clause (what a well holds, a level, a step's carry beside a fill)
    have their own roles, read by the stages before."""
    said = [q for q in frame.volumes if _moved(frame, q)]
    text = frame.text
    # "10, 20 uL", "5/10 uL", "10 or 20 uL": bare numbers leading a list to the one with its unit
    listed = [
        q
        for q in said
        if re.fullmatch(r"[\d.,]+", q.text.strip()) and _LIST_ON.match(text[q.end :])
    ]
    if listed:
        last = listed[-1]
        listed += [q for q in said if q.start > last.end][:1]
    ends = {w.end for w in frame.ents.wellsets}
    peers = listed or [q for q in said if _after_wells(text, q.start, ends)]
    _disagrees(frame, said, wells)
    if len({q.value for q in peers}) > 1:
        given = ", ".join(fmt(q.value, "uL") for q in peers)
        raise Ask(
            f"You give {len(peers)} volumes ({given}) for {wells} wells: which volume "
            "goes into which well?",
            ["volume"],
        )


def _after_wells(text: str, start: int, ends: set[int]) -> bool:
    """A volume in brackets right after a set of wells: 'A1-A3 (50 uL)'."""
    before = text[:start]
    opened = before.rstrip()
    return opened.endswith("(") and len(opened[:-1].rstrip()) in ends


# "some wells in row A", "the first few wells of row A", "most of row A": part of a set
_SOME_OF = re.compile(
    r"\b(?:some|several|(?:the\s+(?:first|last)\s+)?(?:a\s+)?few|a\s+couple(?:\s+of)?|most|part|half)"
    r"\s+(?:of\s+)?(?:the\s+)?(?:#+\s+)?(?:wells?|rows?|columns?|cols?)\b",
    _FLAGS,
)


# "the top half of X", "the left side", "quadrant 1", "a corner": a region of the plate that
# no well set says (a 384-well quadrant is interleaved or a block: which is asked)
_REGION = re.compile(
    r"\b(?:(?:top|bottom|upper|lower|left|right)[\s-]+(?:half|side|corner|part)|corners?|"
    r"quadrants?|q[1-4])\b",
    _FLAGS,
)


def part_of(frame: Frame, plate: str, world: r.World, named: bool = False) -> None:
    """'fill half of assay_plate_3', 'some wells in row A', 'every well in the top half of X':
    which part of the plate or of the set is asked, never every well of it."""
    whole = all(w.whole_plate for w in frame.ents.wellsets)
    poured = len({m.name for m in frame.ents.labware}) <= 1  # (a stamp's quadrant is its own)
    poured = poured and not (_STAMP.match(frame.text) or _COPYING.search(frame.text))
    if whole and poured and _REGION.search(frame.text):
        view = world.labware(plate)
        raise Ask(
            f"Which wells of {plate} should receive it?", ["wells"], examples(view.rows, view.cols)
        )
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


def first_source(
    frame: Frame, src_sets: list[tuple[str, list[str] | None]], world: World
) -> tuple[str, list[str] | None]:
    """The clause's first source set, once the liquid it names agrees with what the source
    wells hold: "20 uL of water from reservoir A1" with dye in A1 asks which is meant."""
    _said_liquid.check(frame, src_sets, world)
    return src_sets[0]


def _disagrees(frame: Frame, said: list[Quantity], wells: int) -> None:
    """'Add 50 uL buffer to A1-A4, 100 uL per well': a volume then another per well that is
    neither it nor its total over the wells is asked about, never the later one taken."""
    each = [q for q in said if _EACH_AFTER.match(frame.text[q.end :])]
    before = [q for q in said if each and q.end <= each[0].start and q is not each[0]]
    if not each or not before or _EACH_AFTER.match(frame.text[before[0].end :]):
        return
    first, per = before[0].value, each[0].value
    if abs(first - per) > 1e-6 and abs(first - per * wells) > 1e-6:
        raise Ask(
            f"You give {fmt(first, 'uL')} and then {fmt(per, 'uL')} per well for {wells} "
            "wells: how many uL should go into each well?",
            ["volume"],
            [fmt(first, "uL"), fmt(per, "uL")],
        )


def sources_used(frame: Frame, ops: list[pip.Op], world: World) -> None:
    """Ask when the clause names two or more source places with their wells ("X C4 to Y A1
    and A2 for the assay, X F10 to Y A3 and A4") and the moves take from none of one of them:
    a pairing that drops a source does less than asked, and something else than asked."""
    said = [
        (pl.labware.name, pl.wells)
        for role, pl in frame.places
        if role in ("head", "source") and pl.labware is not None and pl.wells is not None
    ]
    if len(said) < 2 or not ops:
        return
    touched = {op.src for op in ops} | {op.dst for op in ops if op.dst is not None}
    for lw, ws in said:
        view = world.labware(lw)
        try:
            wells = ws.expand(view.rows, view.cols)
        except SelectionError:  # a set that does not fit this plate is another stage's question
            continue
        if not {(lw, w) for w in wells} & touched:
            raise Ask(
                f"I could not tell where {lw} {ws.text} should go: which wells should each "
                "source go into?",
                ["destination"],
            )
