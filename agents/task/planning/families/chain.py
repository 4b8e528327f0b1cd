"""The carrying steps of a serial dilution, as people spell them out: "then transfer 100 uL
from A1 to A2 and so on along the row to A12", "A1 -> B1 -> C1, 50 uL each", "carry 50 uL
from A1 down to H1, mix 5x", "100 uL column to column", "25 uL per step".

The chain's wells come from the clause (an arrow chain; a first and a last well) or from the
serial-dilution sentence it belongs to ("across row A", "down column 1 from A1 to G1",
"5 steps starting at B1"). Every transfer mixes after its dispense (3 cycles unless said) and
takes a new tip (8 with the 8-channel head, which carries a column at a time).
"""

from __future__ import annotations

import re

from agents.task.planning import _pipetting as pip
from agents.task.planning import _resolve as r
from agents.task.planning._clauses import Clause
from agents.task.planning._entities import Entities
from agents.task.planning._frames import Frame
from agents.task.planning._outcomes import Ask, Refuse
from agents.task.planning._quantities import fmt
from agents.task.planning._wellsets import WellSet
from agents.task.planning._world import World
from agents.task.planning.families import Family
from agents.task.planning.families import _chains as geometry

_FLAGS = re.IGNORECASE
MIX_CYCLES = 3
CHAIN_WORDS = re.compile(
    r"\band\s+so\s+on\b|\bon\s+down\b|\b(?:on\s+)?down\s+to\b|\beach\s+step\b|\bper\s+step\b|\bstep\s+by\s+step\b"
    r"|\bcolumn\s+to\s+column\b|\brow\s+to\s+row\b|\bserial\s+(?:(?:1:\d+|\d+-fold|\d+x)\s+)?transfers?\b|\bonwards?\b|\bchain\b"
    r"|\bsuccessive(?:ly)?\b|\b(?:moving|carrying|carry|carried|passing|passed)\b|\bmoved\s+each\b"
    r"|\b(?:moved|transferred)\s+(?:along|down|across|on)\b"
    # "transfer 100 uL down the column (A1 to G1 | to G3 | stopping at G3)": well to well
    r"|\d\s*[uµm][lL]\s+(?:down|across|along)\s+the\s+(?:column|row)\b(?!\s+(?:of|on|in)\b)"
    # "transfer 100 uL down the column, mixing each time": a volume carried along a line, mixed
    r"|\b(?:transfer|move|pipette|pass)\s+\d+(?:\.\d+)?\s*(?:u[lL]|µ[lL])\s+(?:down|across|along)\b"
    r"(?=[^;]*\bmix|\s+(?:the\s+)?(?:columns?|cols?|rows?)\b[^;]*?\bfrom\s+[A-Pa-p]\d{1,2}\s+(?:to|through|thru)\s+[A-Pa-p]\d)"
    r"|\bsteps?\s+of\s+\d|-fold\s+steps\b|\d\s*(?:u[lL]|µ[lL])\s+steps?\b"
    r"|\b(?:down|across|along)\s+(?:each|every|both)\s+(?:columns?|rows?)\s+to\s+[A-Pa-p]\d"
    r"|\b(?:continue|carry\s+on|keep\s+going|proceed)\s+(?:down\s+|across\s+|along\s+)?(?:to|until|through)\b",
    _FLAGS,
)
_STARTING = re.compile(
    r"\b(?:starting|beginning|start)\s+(?:at|in|from|with)\s+([A-Pa-p]\d{1,2})\b", _FLAGS
)


# "serially dilute dye down column 2, 150 uL final": what each well ends at, no carried volume
_ENDS_AT = re.compile(r"\b(?:final|total|per\s+well|each\s+well|/\s*well|in\s+each)\b", _FLAGS)


def _moved(ents: Entities) -> list[str]:
    """The liquids a clause names, but for what a well already holds ("transfer 100 uL from
    A1 into the buffer in A2, ... continue to A8": the chain carries the mixture)."""
    text = ents.text
    return [
        m.name
        for m in ents.liquids
        if not (
            re.search(r"\b(?:in(?:to)?|with)\s+the\s+$", text[: m.start], _FLAGS)
            and re.match(r"\s+(?:in|of)\s+[A-Pa-p]\d{1,2}\b", text[m.end :])
        )
    ]


def detect(clause: Clause, ents: Entities) -> int | None:
    text = ents.text
    chain = any(w.chain for w in ents.wellsets)
    if chain and ents.fold is not None and ents.liquids:
        return None  # "2-fold serial dilution of dye along A1 -> B1 -> C1": the whole dilution
    if ents.volumes() and (chain or (CHAIN_WORDS.search(text) and not _moved(ents))):
        return 92
    if re.match(r"^serially\s+(?:dilute|transfer|carry)\b", text, _FLAGS) and (
        ents.volumes() and ents.fold is None and ents.wellsets and not _ENDS_AT.search(text)
    ):
        return 92  # "serially dilute 150 uL from A1 to A8": the steps after the fills
    return None


_EACH_LINE = re.compile(r"\b(?:each|every|both)\s+(?:columns?|cols?|rows?)\b", _FLAGS)


def _singles(frame: Frame) -> list[str]:
    out = []
    for w in frame.ents.wellsets:
        for part in w.parts:
            if part.kind == "well":
                out.append(str(part.args[0]))
    return out


_STEPWISE = re.compile(
    r"\b(column|col|row)\s+to\s+\1\s+(?:from\s+)?(?:(?:column|col|row)\s+)?(\w{1,2})\s+"
    r"(?:to|through|thru|-)\s+(?:(?:column|col|row)\s+)?(\w{1,2})\b",
    _FLAGS,
)


def _stepwise(frame: Frame, plate: str, p: r.Planning) -> list[list[str]] | None:
    """ "100 uL column to column from 1 to 12": one chain per row (or column) in use."""
    m = _STEPWISE.search(frame.text)
    if m is None:
        return None
    view = p.world.labware(plate)
    letters = [chr(65 + i) for i in range(view.rows)]
    used = [w for w in (p.wells if p.plate == plate else [])]
    if m.group(1).lower().startswith("col"):
        a, b = int(m.group(2)), int(m.group(3))
        rows = sorted({w[0] for w in used}, key=letters.index) or letters
        step = 1 if b >= a else -1
        return [[f"{row}{c}" for c in range(a, b + step, step)] for row in rows]
    a, b = letters.index(m.group(2).upper()), letters.index(m.group(3).upper())
    cols = sorted({int(w[1:]) for w in used}) or list(range(1, view.cols + 1))
    step = 1 if b >= a else -1
    return [[f"{letters[i]}{c}" for i in range(a, b + step, step)] for c in cols]


def lines(frame: Frame, plate: str, header: Frame | None, p: r.Planning) -> list[list[str]]:
    """The chains of wells this clause carries liquid along."""
    if header is not None and not header.ents.wellsets and not p.head_wells:
        header = None  # "Std curve on bca_plate: ..., then 2-fold down to G1": no wells above
    if (stepwise := _stepwise(frame, plate, p)) is not None:
        return stepwise
    for w in frame.ents.wellsets:
        if w.chain:
            return [w.expand(p.world.labware(plate).rows, p.world.labware(plate).cols)]
    singles = _singles(frame)
    view = p.world.labware(plate)
    areas = [w for w in frame.ents.wellsets if any(part.kind != "well" for part in w.parts)]
    if len(areas) == 1 and not singles:  # "column 1 across the plate, 8-channel"
        across = geometry.across_from(frame, p, areas[0].expand(view.rows, view.cols), view.cols)
        if across is not None:
            return across
    if (
        len(areas) == 1
        and not singles
        and (
            header is None
            or len(geometry.chains_of(header, plate, p, geometry.direction(frame))) <= 1
        )
    ):
        wells = areas[0].expand(view.rows, view.cols)
        if len({w[0] for w in wells}) == 1 or len({w[1:] for w in wells}) == 1:
            return [wells]  # "from A3 through A8": one line, in the order written
    if len(areas) == 1 and not singles and header is None and (spans := _span(areas[0], plate, p)):
        return spans  # "from column 1 through column 6": along each row the plan filled
    if len(singles) == 1 and not areas and (start := _fullest_in_line(singles[0], plate, p)):
        singles = [start, singles[0]]  # "100 uL carried each step down to H1": from the stock
    if len(singles) >= 2 and not areas and _EACH_LINE.search(frame.text):
        # "moving 100 uL down each column to G1 and G2": each from its own stock well
        starts = [_fullest_in_line(end, plate, p) for end in singles]
        if all(starts) and len(set(starts)) == len(singles):
            return [geometry.line(a, b) for a, b in zip(starts, singles, strict=True) if a]
    if len(singles) >= 2:
        first = geometry.line(singles[0], singles[-1])
        if header is not None:
            found = geometry.chains_of(header, plate, p, geometry.direction(frame))
            if len(found) > 1 and any(first[0] in c or first[-1] in c for c in found):
                return [geometry.clip(c, first) for c in found]
            if len(found) > 1:
                # "from row A to row G, down each column": the same span in every line
                return [geometry.clip(c, first) for c in found]
        return [first]
    if header is not None:
        found = geometry.chains_of(header, plate, p, geometry.direction(frame))
        if areas:  # "down each column from row A to row G": that span of every line
            span = areas[0].expand(view.rows, view.cols)
            return [geometry.clip(c, span) for c in found]
        return [_poured_run(c, plate, p) for c in found]
    if (filled := _filled_lines(frame, plate, p)) is not None:
        return filled
    raise Ask("Which wells should the dilution carry through (e.g. A1 -> B1 -> C1)?", ["wells"], [])


def _poured_run(chain: list[str], plate: str, p: r.Planning) -> list[str]:
    """ "...row B: 150 uL buffer in B2-B6, 300 uL dye in B1, then carry 150 uL down the row":
    the run of the heading's line this plan filled from its first well, not the whole line."""
    poured = {w for (lw, w), _ in p.world.poured if lw == plate}
    run = [w for w in chain[: next((i for i, w in enumerate(chain) if w not in poured), None)]]
    return run if len(run) >= 2 and len(run) < len(chain) else chain


def _filled_lines(frame: Frame, plate: str, p: r.Planning) -> list[list[str]] | None:
    """ "..., 125 uL diluent in B-H, carry 125 uL down": each column (or row, "across") of the
    wells this plan filled on the plate, top to bottom, when the clause names none."""
    down = geometry.direction(frame)
    filled = list(dict.fromkeys(w for (lw, w), _ in p.world.poured if lw == plate))
    if down is None or not filled:
        return None
    lines: dict[str, list[str]] = {}
    for w in sorted(filled, key=lambda w: (w[0], int(w[1:])) if not down else (int(w[1:]), w[0])):
        lines.setdefault(w[1:] if down else w[0], []).append(w)
    found = [line for line in lines.values() if len(line) >= 2]
    return found or None


def _span(area: WellSet, plate: str, p: r.Planning) -> list[list[str]] | None:
    """A span of whole columns (or rows): one chain along each row (column) this plan filled
    in it, or every row (column) when it filled none."""
    view = p.world.labware(plate)
    kinds = {part.kind for part in area.parts}
    wells = area.expand(view.rows, view.cols)
    filled = {w for (lw, w), _ in p.world.poured if lw == plate and w in set(wells)}
    if kinds == {"cols"} and len({w[1:] for w in wells}) > 1:
        rows = sorted({w[0] for w in filled or wells})
        return [[w for w in sorted(wells, key=lambda w: int(w[1:])) if w[0] == r_] for r_ in rows]
    if kinds == {"rows"} and len({w[0] for w in wells}) > 1:
        cols = sorted({int(w[1:]) for w in filled or wells})
        return [[w for w in sorted(wells) if int(w[1:]) == c] for c in cols]
    return None


def _fullest_in_line(end: str, plate: str, p: r.Planning) -> str | None:
    """The well this plan filled fullest in line with ``end``: where the stock went."""
    filled = [
        w
        for (lw, w), _ in p.world.poured
        if lw == plate and w != end and (w[0] == end[0] or w[1:] == end[1:])
    ]
    if not filled:
        return None
    return max(dict.fromkeys(filled), key=lambda w: p.world.well_volume(plate, w))


def _down(frame: Frame) -> bool | None:
    return geometry.direction(frame)


def _all_empty(world: World, plate: str, chains: list[list[str]]) -> bool:
    """No well a chain carries into holds anything yet (no diluent to dilute into)."""
    return all(world.well_volume(plate, w) <= 0 for c in chains for w in c[1:])


def build(frame: Frame, p: r.Planning) -> str:
    world = p.world
    header: Frame | None = frame.extra.get("header")  # type: ignore[assignment]
    place = next((pl for _, pl in frame.places if pl.labware is not None), None)
    if place is not None:
        plate = r.labware(place, p, "dilute on")
    elif header is not None and (hp := geometry.series_place(header)):
        plate = r.labware(hp, p, "dilute on")
    else:
        plate = r.labware(frame.head, p, "dilute on")
    chains = lines(frame, plate, header, p)
    if any(len(c) < 2 for c in chains):
        raise Refuse("a dilution chain needs at least two wells", "nothing_to_do")
    t = r.quantity(frame.volume, frame, "How many uL should each step carry?", "volume")
    r.positive_volume(t, frame.volume.text if frame.volume else "")
    if header is not None and header.ents.fold is None and _all_empty(world, plate, chains):
        raise Ask(  # "Serial dilution of X in Y: 200 uL X into A1, then 100 uL along the row"
            "The wells after the first hold nothing yet: how many-fold should each step dilute?",
            ["fold"],
            ["2-fold", "3-fold", "10-fold"],
        )
    ents = frame.ents
    said = header.ents if header is not None else None
    if ents.no_mix or (said is not None and said.no_mix and not ents.mix):
        cycles = 0
    else:
        cycles = ents.mix_times or (said.mix_times if said is not None else None) or MIX_CYCLES
    r.within(cycles or 1, "mix_repetitions", None, world, "mixing", "times")
    mix_volume = frame.mix_volume.value if frame.mix_volume else None
    channels = ents.channels or (said.channels if said else None) or p.channels or 1
    tips = ents.tips or (said.tips if said else None) or p.tips or "per_destination"
    policy: pip.TipPolicy = tips if tips in pip.POLICIES else "per_destination"  # type: ignore[assignment]
    steps = max(len(c) for c in chains) - 1
    geometry.carry(p, plate, chains, (t, cycles, mix_volume), channels, policy)
    p.plate, p.wells = plate, [w for c in chains for w in c]
    p.chain_ends = [c[-1] for c in chains]
    p.policies_used.append(pip.POLICIES[policy] + " along the dilution chain")
    mixing = f"mixing {cycles}x after each" if cycles else "no mixing"
    return (
        f"carry {fmt(t, 'uL')} along {len(chains)} chain(s) on {plate} "
        f"({chains[0][0]} -> ... -> {chains[0][-1]}, {steps} transfers each), {mixing} "
        f"({'8 channels' if channels == 8 else '1 channel'}; tips: {pip.POLICIES[policy]})"
    )


FAMILY = Family("chain", detect, build)
