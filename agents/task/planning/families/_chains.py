"""The chains of a serial dilution: which wells liquid is carried through, and in which order.

Shared by the serial-dilution sentence (:mod:`.dilution`) and its spelled-out carrying steps
(:mod:`.chain`): rows across or columns down, from a first to a last well, n steps from a
starting well, an arrow chain as written.
"""

from __future__ import annotations

import re
from dataclasses import replace

from agents.task.planning import _pipetting as pip
from agents.task.planning import _resolve as r
from agents.task.planning._frames import Frame, Place
from agents.task.planning._outcomes import Ask, Refuse
from agents.task.planning._quantities import FOLD_TIMES, STEP_FOLD
from agents.task.planning._wellsets import WellSet
from agents.task.planning.families._blank_wells import INCL_BLANK, blanks_after
from agents.task.planning.families._diluent_span import without_diluent
from agents.task.planning.families._line_back import filled_line, filled_start
from agents.task.planning.families._spans import spans

_FLAGS = re.IGNORECASE
DOWN = re.compile(
    r"\b(?:down|along\s+(?:the\s+)?columns?|column[\s-]?wise|vertically|top\s+to\s+bottom)\b",
    _FLAGS,
)
_STARTING = re.compile(
    r"\b(?:starting|beginning|start)\s+(?:at|in|from|with)\s+([A-Pa-p]\d{1,2})\b", _FLAGS
)
# What a count of a dilution counts: "7 steps" (transfers), "8 points" / "6 wells" (wells)
_STEP_NOUN = re.compile(
    r"(?<![\w.:/])(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
    rf"(?![\d.])\s*-?\s*{STEP_FOLD}"
    r"(steps?|points?|pts?|dilutions?|concentrations?|conc|wells?|standards?|stds?)\b",
    _FLAGS,
)
_ROW_SPAN = re.compile(r"(?<![\w/-])([A-P])\s*(?:to|through|-|–)\s*([A-P])(?![\w/-])")
_DOWN_TO = re.compile(  # "... down to G1", "(A1 -> G1, ...), H1 PBS": where the points end
    r"(?:\b(?:down|across|along)\s+(?:to|through|until)\s+|->\s*)([A-Pa-p]\d{1,2})\b", _FLAGS
)


def direction(frame: Frame) -> bool | None:
    """True: the chain runs down columns; False: along rows; None: the clause does not say."""
    if re.search(r"\bdown\b|\bcolumn[\s-]?wise\b|\brow\s+to\s+row\b", frame.text, _FLAGS):
        return True
    if re.search(r"\bacross\b|\balong\s+the\s+row\b|\bcolumn\s+to\s+column\b", frame.text, _FLAGS):
        return False
    return None


def line(a: str, b: str) -> list[str]:
    """The wells from a to b along their row or column."""
    (r0, c0), (r1, c1) = (ord(a[0]) - 65, int(a[1:])), (ord(b[0]) - 65, int(b[1:]))
    if r0 == r1:
        step = 1 if c1 >= c0 else -1
        return [f"{a[0]}{c}" for c in range(c0, c1 + step, step)]
    if c0 == c1:
        step = 1 if r1 >= r0 else -1
        return [f"{chr(65 + x)}{c0}" for x in range(r0, r1 + step, step)]
    raise Ask(
        f"{a} and {b} are not on one row or one column: which wells should the chain run through?",
        ["wells"],
        [],
    )


def clip(line: list[str], span: list[str]) -> list[str]:
    """The part of ``line`` that spans the same rows (or columns) as ``span``."""
    if all(w[1:] == line[0][1:] for w in line):  # a column: clip by rows
        rows = {w[0] for w in span}
        return [w for w in line if w[0] in rows] if len(rows) > 1 else line
    cols = {w[1:] for w in span}
    return [w for w in line if w[1:] in cols] if len(cols) > 1 else line


def _in_line(a: list[str], b: list[str]) -> bool:
    """Both on one row, or both on one column."""
    return len({w[0] for w in a + b}) == 1 or len({w[1:] for w in a + b}) == 1


def _replicate_lanes(
    areas: list[WellSet], frame: Frame, rows: int, cols: int
) -> tuple[list[str], bool] | None:
    """ "A1-A8 in duplicate (rows A and B)": the line repeated in each row (or column) named.

    The wells of the line crossed with the lanes, and whether the chains run down columns."""
    n = frame.ents.replicates or 1
    if n < 2 or len(areas) > 2:
        return None
    if len(areas) == 1:  # "8 points in duplicate, columns 1-2": one chain down each column
        kinds = {part.kind for part in areas[0].parts}
        wells = areas[0].expand(rows, cols)
        if kinds == {"cols"} and len({w[1:] for w in wells}) == n:
            return wells, True
        if kinds == {"rows"} and len({w[0] for w in wells}) == n:
            return wells, False
        return None
    for line_set, lanes in (areas, areas[::-1]):
        line_wells = line_set.expand(rows, cols)
        lane_wells = lanes.expand(rows, cols)
        kinds = {part.kind for part in lanes.parts}
        if kinds == {"rows"} and len({w[0] for w in line_wells}) == 1:
            letters = sorted({w[0] for w in lane_wells})
            return [f"{r}{w[1:]}" for r in letters for w in line_wells], False
        if kinds == {"cols"} and len({w[1:] for w in line_wells}) == 1:
            numbers = sorted({int(w[1:]) for w in lane_wells})
            return [f"{w[0]}{c}" for c in numbers for w in line_wells], True
        if kinds == {"cols"} and len({w[1:] for w in lane_wells}) == n:
            # "duplicate, columns 1 and 2: ... from row A to row G": down each column named
            return [w for w in lane_wells if w in set(line_wells)], True
        if kinds == {"rows"} and len({w[0] for w in lane_wells}) == n:
            return [w for w in lane_wells if w in set(line_wells)], False
    return None


def chain_place(frame: Frame) -> Place:
    """Where a serial dilution runs: the plate its arrow chain names ("..., in water, eluates
    A6 -> B6 -> C6"), else where the clause puts things."""
    chained = [pl for _, pl in frame.places if pl.labware and pl.wells and pl.wells.chain]
    if frame.dest.labware is None and frame.head.labware is not None:
        return frame.head  # "std_block col 1 (A1 -> G1, 2-fold, ...)": the plate, not G1 alone
    if chained or not frame.dest.empty or not frame.head.empty:
        return chained[0] if chained else frame.dest if not frame.dest.empty else frame.head
    lines = [  # "... from SERA1 A1 in diluent, EIA_plate D1-D8": the named line after the stock
        pl
        for role, pl in frame.places[1:]
        if role == "source"
        and pl.labware
        and pl.wells
        and any(x.kind != "well" for x in pl.wells.parts)
    ]
    return lines[-1] if lines else frame.head


def series_place(header: Frame) -> Place | None:
    """Where a heading puts its series ("Serum B1, ten-fold series in predil row A", "dye from
    reservoir A1, 4-fold on plate_2 row C": the line, not the stock's one well), else the one
    place it names."""
    named = [(role, pl) for role, pl in header.places if pl.labware is not None]
    lines = [
        pl
        for role, pl in named
        if role != "source" and not (pl.wells and all(x.kind == "well" for x in pl.wells.parts))
    ]
    return next(iter(lines), next((pl for role, pl in named if role != "source"), None)) or (
        named[0][1] if named else None
    )


def chains_of(frame: Frame, plate: str, p: r.Planning, down: bool | None = None) -> list[list[str]]:
    """The chains a serial dilution names: rows across or columns down, first to last well."""
    view = p.world.labware(plate)
    sets = [w for w in frame.ents.wellsets if not w.chain]
    sets = without_diluent(sets, frame.ents.text, view.rows, view.cols)  # "RPMI in A2-A12"
    if chained := [w for w in frame.ents.wellsets if w.chain]:
        return [chained[0].expand(view.rows, view.cols)]
    singles = [str(part.args[0]) for w in sets for part in w.parts if part.kind == "well"]
    areas = spans([w for w in sets if any(part.kind != "well" for part in w.parts)], frame)
    areas = [a for a in areas if not a.whole_plate] or areas  # "100 uL in every well": its own
    named = [x for a in areas for x in a.expand(view.rows, view.cols)]
    columns, rows = {x[1:] for x in named}, {x[0] for x in named}
    lines = [(len({x[1:] for x in ws}), len({x[0] for x in ws}))
             for ws in (a.expand(view.rows, view.cols) for a in areas)]  # fmt: skip
    if (across := across_from(frame, p, named, view.cols)) is not None:
        return _trimmed(frame, across, singles)
    if named and len(columns) == 1 and len(rows) > 1:
        down = True  # one column: along it, whatever the words ("across column 1")
    elif named and len(rows) == 1 and len(columns) > 1:
        down = False
    elif lines and lines[0][0] == 1 and lines[0][1] > 1 and frame.ents.replicates:
        down = True  # "A1-H1 ..., in triplicate (columns 1-3)": each replicate down its column
    elif lines and lines[0][1] == 1 and lines[0][0] > 1 and frame.ents.replicates:
        down = False
    elif down is None and (arrowed := {a.parts[0].kind for a in areas if "->" in a.text}) in (
        {"cols"},
        {"rows"},
    ):
        down = arrowed == {"rows"}  # "column 1 -> 12": from column to column, whatever the words
    elif (
        down is None
        and direction(frame) is None
        and {pt.kind for a in areas for pt in a.parts} == {"cross"}
    ):
        down = len(rows) > len(columns)  # "columns 4-6, rows A-G": along the longer side
    elif down is None:
        down = bool(direction(frame))  # several rows and columns: the words say, else across
    # a rectangle inside the area named ("down column 4, A4 to E4"): that span
    rects = [
        WellSet((pt,), a.start, a.end, a.text) for a in areas for pt in a.parts if pt.kind == "rect"
    ]
    if rects and (len(areas) > 1 or len(areas[0].parts) > 1) and (frame.ents.replicates or 1) < 2:
        areas = rects  # (in duplicate, the other area is where the replicates go)
    if not areas and len(singles) >= 2:
        return [line(singles[0], singles[-1])]
    one_head = len(p.head_wells or []) == 1  # "A1 of P: 20 uL X + 180 uL Y, then 2-fold to H1"
    if not areas and one_head and (back := filled_start(frame, plate, p, singles)):
        return _trimmed(frame, [back], singles)
    if not areas and len(singles) < 2 and p.head_dest == plate and p.head_wells:
        # "dil_plate row D: 3-fold serial of compound, 10 points": the heading's wells
        heads = list(p.head_wells)
        down = len({w[1:] for w in heads}) == 1 or (
            len({w[0] for w in heads}) > 1 and bool(direction(frame))
        )
        if direction(frame) is None and len({w[0] for w in heads}) > 1 < len(
            {w[1:] for w in heads}
        ):
            down = _blank_axis(p) or down  # "cols 1-3: ..., row H = blank": down each column
        lanes: dict[object, list[str]] = {}
        for w in heads:
            lanes.setdefault(int(w[1:]) if down else w[0], []).append(w)
        return _trimmed(frame, list(lanes.values()), singles)
    if not areas:
        # "..., then 10-fold down the column", "A1: 20 uL X + 180 uL Y, then 2-fold to H1"
        if back := filled_line(frame, plate, p) or filled_start(frame, plate, p, singles):
            return _trimmed(frame, [back], singles)
        raise Ask("Which wells should the dilution run across?", ["wells"], ["row A", "column 1"])
    wells = [w for a in areas for w in a.expand(view.rows, view.cols)]
    by_rows = [a for a in areas if all(part.kind == "rows" for part in a.parts)]
    by_cols = [a for a in areas if all(part.kind == "cols" for part in a.parts)]
    if by_rows and by_cols and len(by_rows) + len(by_cols) == len(areas):
        # "rows A and B ... from column 1 to column 10": where they cross
        in_cols = {w for a in by_cols for w in a.expand(view.rows, view.cols)}
        wells = [w for a in by_rows for w in a.expand(view.rows, view.cols) if w in in_cols]
        if direction(frame) is None and not frame.ents.replicates:
            # "cols 5 and 6, rows A through G": the curve runs along the longer side (down
            # each column), never a chain of two wells across
            down = len({w[0] for w in wells}) > len({w[1:] for w in wells})
    elif (
        (by_rows or by_cols)
        and p.head_dest == plate
        and p.head_wells
        and r.heading_covers(frame, p)
    ):
        # "quant2 columns 1-2:" heading "1:2 down from row A to row G": the rows in those columns
        inside = [w for w in wells if w in set(p.head_wells)]
        wells = inside if len(by_rows) + len(by_cols) == len(areas) and inside else wells
        if inside and len({w[1:] for w in inside}) > 1 < len({w[0] for w in inside}):
            down = not by_cols  # "columns 1-3: ..., rows A to G": a span of rows runs down
    if (crossed := _replicate_lanes(areas, frame, view.rows, view.cols)) is not None:
        wells, down = crossed
    key = (lambda w: (int(w[1:]), w[0])) if down else (lambda w: (w[0], int(w[1:])))
    found: dict[object, list[str]] = {}
    for w in sorted(dict.fromkeys(wells), key=key):
        found.setdefault(int(w[1:]) if down else w[0], []).append(w)
    return _trimmed(frame, list(found.values()), singles)


def across_from(frame: Frame, p: r.Planning, wells: list[str], cols: int) -> list[list[str]] | None:
    """One column carried "across the plate" with the 8-channel head ("serially dilute column 1
    across the plate, 8-channel"): each of its rows, from that column to the plate's last."""
    if (
        len(wells) < 2
        or len({w[1:] for w in wells}) != 1
        or (frame.ents.channels or p.channels) != 8
    ):
        return None
    if not re.search(r"\bacross\s+(?:the\s+)?(?:whole\s+|entire\s+)?plate\b", frame.text, _FLAGS):
        return None
    first = int(wells[0][1:])
    return [[f"{r}{c}" for c in range(first, cols + 1)] for r in sorted({w[0] for w in wells})]


def _blank_axis(p: r.Planning) -> bool | None:
    """True when the blanks named are a whole row (the curves then run down the columns),
    False when they are a whole column, None when neither says."""
    kinds = {pt.kind for b in p.blanks for pt in b.parts}
    return True if kinds == {"rows"} else False if kinds == {"cols"} else None


# "A2 = neat stock, B2-G2 2-fold ...", "top standard in A1, B1-H1 1:2": the curve's top well
_TOP_WELL = re.compile(
    r"\b([A-Pa-p]\d{1,2})\s*(?:=|:|is|gets|holds)\s*(?:the\s+)?(?:neat|undiluted|top|highest|S1|stock)\b"
    r"|\b(?:top|highest)\s+(?:standard|std|point)\s+(?:in|at|into|=)\s+(?:well\s+)?([A-Pa-p]\d{1,2})\b",
    re.IGNORECASE,
)


def _from_top(frame: Frame, out: list[list[str]]) -> list[list[str]]:
    """One line whose steps are named without the top well said beside them, just before
    its first well ("A2 = neat stock, B2-G2 2-fold"): the line starts at that top well."""
    tops = {(m.group(1) or m.group(2)).upper() for m in _TOP_WELL.finditer(frame.text)}
    if len(out) != 1 or len(out[0]) < 2 or len(tops) != 1 or tops <= set(out[0]):
        return out
    (r0, c0), (r1, c1) = ((w[0], int(w[1:])) for w in out[0][:2])
    before = f"{chr(2 * ord(r0) - ord(r1))}{2 * c0 - c1}"
    return [[before, *out[0]]] if {before} == tops else out


def _trimmed(frame: Frame, out: list[list[str]], singles: list[str]) -> list[list[str]]:
    """The lines cut to the span, the starting well and the number of points said."""
    out = _from_top(frame, out)
    homes = [[w for w in singles if w in c[1:]] for c in out]
    if out and singles and all(len(h) == 1 for h in homes) and len(singles) == len(out):
        # "down columns 1 and 2 to G1/G2", "down column 1 to G1": one end well in each line
        out, singles = [c[: c.index(h[0]) + 1] for c, h in zip(out, homes, strict=True)], []
    if len(singles) >= 2:  # "down column 1 from A1 to G1": the span between them
        ends = [m.group(1).upper() for m in _DOWN_TO.finditer(frame.text)]
        end = ends[-1] if len(ends) == 1 and ends[-1] in singles[1:] else singles[-1]
        span = line(singles[0], end)
        if len(out) == 1 and not set(span) <= set(out[0]) and _in_line(span, out[0]):
            out = [span]  # "top std in A12, ... down to G12 with diluent in B12-H12"
        else:
            out = [clip(c, span) for c in out]
    rows = _ROW_SPAN.search(frame.text)
    if rows is not None and out and all(len({w[1:] for w in c}) == 1 for c in out):
        # "column 1: X, 1:2 in Y, A to G": rows of each column said as bare letters
        a, b = rows.group(1), rows.group(2)
        out = [[w for w in c if a <= w[0] <= b] or c for c in out]
    if (m := _STARTING.search(frame.text)) is not None:
        start = m.group(1).upper()
        out = [c[c.index(start) :] if start in c else c for c in out]
    steps = frame.ents.steps
    if steps is not None:
        # "5 steps": five transfers (six wells); "8 points": eight wells.
        said = _STEP_NOUN.search(frame.text)
        transfers = (
            said is not None and said.group(1).lower().startswith(("step", "dilution"))
        ) or (said is None and FOLD_TIMES.search(frame.text) is not None)
        wells_n = (steps if frame.ents.series is not None or not transfers else steps + 1) + (
            0 if INCL_BLANK.search(frame.text) else blanks_after(frame)
        )  # the blanks too
        most = max(len(c) for c in out)
        if transfers and wells_n == most + 1 == steps + 1:  # "5 steps, C1 to C5": 5 wells
            wells_n = steps
        if wells_n > most:
            raise Refuse(f"a {steps}-step dilution does not fit in {most} wells", "plate_size")
        out = [c[:wells_n] for c in out]
    return out


def carry(
    p: r.Planning,
    plate: str,
    chains: list[list[str]],
    step: tuple[float, int, float | None],
    channels: int,
    policy: pip.TipPolicy,
) -> None:
    """Carry ``step`` (volume, mixing cycles, mixing volume) along the chains, one transfer
    of every chain at a time; with one tip for everything, the whole chain is one tip use."""
    t, cycles, mix_volume = step
    lh = p.world.labware(plate).instrument
    moves = [
        [
            pip.Op((plate, c[i]), (plate, c[i + 1]), t, cycles, mix_volume)
            for c in chains
            if i + 1 < len(c)
        ]
        for i in range(max(len(c) for c in chains) - 1)
    ]
    if policy == "once":
        pip.emit(p.world, lh, [op for ops in moves for op in ops], channels, policy, ordered=True)
        return
    for ops in moves:
        pip.emit(p.world, lh, ops, channels, policy)


def without_held(frame: Frame, held: tuple[str, list[str], str] | None, plate: str) -> Frame:
    """The frame without the stock's own wells on the dilution's plate ("a series of
    sample_plate A1-H1 across sample_plate columns 1-6": the chains are the columns), nor the
    wells it names on another plate."""
    other = {  # "culture from ON_cultures H2, 2-fold down plate_b column 12": H2 is no chain well
        (pl.wells.start, pl.wells.end)
        for _, pl in frame.places
        if pl.labware is not None and pl.labware.name != plate and pl.wells is not None
    }
    kept = [
        w
        for w in frame.ents.wellsets
        if (w.start, w.end) not in other
        and (held is None or held[0] != plate or w.expand(16, 24) != held[1])
    ]
    if len(kept) == len(frame.ents.wellsets):
        return frame
    return replace(frame, ents=replace(frame.ents, wellsets=kept))
