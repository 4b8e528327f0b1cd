"""How the places a transfer clause names become (source well, destination well, volume) moves.

A clause names places in roles (head, source, destination). Explicit pairs are written
``X -> Y, X2 -> Y2`` or ``A1 into dest A1-A3, A2 into dest B1-B3``; otherwise the sources
and the destinations pair by their sizes: one into many (distribute), equal sets in order
(stamp), many into one (pool), one set into a multiple of it (spot, replicates). Volumes come
one per well when a list gives them ("A1 gets 5 uL, B1 10 uL"), else one for all.
"""

from __future__ import annotations

import re

from agents.task.planning import _resolve as r
from agents.task.planning._frames import Frame, Place
from agents.task.planning._outcomes import Ask, Refuse

_FLAGS = re.IGNORECASE
_CONNECT = re.compile(
    r"^\s*(?:each\s+|apiece\s+|per\s+well\s+)?(?:->|to|into|onto|in|on)\s+(?:the\s+)?(?:wells?\s+)?$",
    _FLAGS,
)
_SEPARATE = re.compile(r"^\s*(?:[,;]|\band\b|,\s*and\b)", _FLAGS)
# "X C4 -> Y A1 and A2 as duplicates, X F10 -> ...": a few words on the pair, then the next
_REMARK_THEN = re.compile(
    r"^\s*(?:[A-Za-z][\w-]*\s+){1,3}?[A-Za-z][\w-]*\s*(?:[,;]|,\s*and\b)", _FLAGS
)


def start(place: Place) -> int:
    return min(x.start for x in (place.labware, place.wells, place.unknown) if x is not None)


def end(place: Place) -> int:
    return max(x.end for x in (place.labware, place.wells, place.unknown) if x is not None)


def explicit_pairs(frame: Frame) -> list[tuple[Place, Place, float | None]] | None:
    """Two or more written pairs ``X -> Y`` / ``X into Y``, each with the volume after it."""
    text, places = frame.text, [pl for _, pl in frame.places]
    src_lw = dst_lw = None
    if len(places) > 4 and places[-1].wells is None and places[-1].labware is not None:
        dst_lw = places.pop().labware  # "A1->B1, A2->B2, A3->B3 into quant"
    roles = [role for role, _ in frame.places]
    if len(places) > 4 and places[0].wells is None and places[0].labware is not None:
        src_lw = places.pop(0).labware  # "from libs: A1->B1, A2->B2, ..."
        if dst_lw is None and places[0].wells is None and places[0].labware is not None:
            dst_lw = places.pop(0).labware  # "from libs to quant, 3 uL each: A1->B1, ..."
            if roles[:2] == ["dest", "source"]:  # "into conf384, from mp07: A3->A1, ..."
                src_lw, dst_lw = dst_lw, src_lw
        elif dst_lw is None and roles[0] == "dest":  # "into quant: A3->A1, B7->A2"
            src_lw, dst_lw = None, src_lw
    pairs: list[tuple[Place, Place, float | None]] = []
    # "10 uL A3 -> B1 and 20 uL C6 -> B2": each volume before its pair (else after it)
    ahead = bool(places) and volume_between(frame, 0, start(places[0])) is not None
    i = 0
    while i + 1 < len(places):
        a, b = places[i], places[i + 1]
        if _CONNECT.match(_without_volumes(frame, end(a), start(b))):
            nxt = start(places[i + 2]) if i + 2 < len(places) else len(text)
            prev = end(places[i - 1]) if i else 0
            vol = volume_between(frame, prev, start(a)) if ahead else None
            inside = volume_between(frame, end(a), start(b))  # "A1-H1 (10 uL each) into B1"
            after = volume_between(frame, end(b), nxt)
            pairs.append((a, b, vol if ahead else inside if inside is not None else after))
            between = (
                _without_volumes(frame, end(b), start(places[i + 2])) if i + 2 < len(places) else ""
            )
            if i + 2 < len(places) and not (
                _SEPARATE.match(between) or _REMARK_THEN.match(between)
            ):
                return None
            i += 2
            continue
        return None
    if len(pairs) < 2 or i != len(places):
        return None
    if src_lw or dst_lw:  # the plates named once for all pairs
        pairs = [
            (Place(a.labware or src_lw, a.wells, a.unknown),
             Place(b.labware or dst_lw, b.wells, b.unknown), v)
            for a, b, v in pairs
        ]  # fmt: skip
    return pairs


def _without_volumes(frame: Frame, a: int, b: int) -> str:
    piece = frame.text[a:b]
    for q in frame.ents.quantities:
        if a <= q.start < b:
            piece = piece.replace(q.text, " ")
    return re.sub(r"[()]", " ", re.sub(r"\([^()]*\)", " ", piece))  # "(duplicates)": a remark


def volume_between(frame: Frame, a: int, b: int) -> float | None:
    for q in frame.ents.volumes():
        if a <= q.start < b:
            return q.value
    return None


def per_well_volumes(frame: Frame, places: list[Place]) -> list[float] | None:
    """'A1 gets 5 uL, B1 10 uL' / '40 uL to A1, 30 uL to B1' / 'A12 (25 uL), B11 (25 uL)':
    one volume per written well, in order (None: not such a list)."""
    singles = [pl for pl in places if pl.wells is not None]
    vols = frame.volumes
    if len(singles) < 2 or len(vols) != len(singles):
        return None
    after = all(
        any(
            end(pl)
            <= q.start
            < (start(singles[k + 1]) if k + 1 < len(singles) else len(frame.text))
            for q in vols
        )
        for k, pl in enumerate(singles)
    )
    before = all(
        any((end(singles[k - 1]) if k else 0) <= q.start < start(pl) for q in vols)
        for k, pl in enumerate(singles)
    )
    return [q.value for q in vols] if after or before else None


def _rect(wells: list[str]) -> tuple[int, int, int, int] | None:
    """(first row, first column, rows, columns) when the wells fill a rectangle exactly."""
    rc = {(ord(w[0].upper()) - 65, int(w[1:])) for w in wells if w[1:].isdigit()}
    if len(rc) != len(wells):
        return None
    r0, c0 = min(r_ for r_, _ in rc), min(c for _, c in rc)
    h, w = max(r_ for r_, _ in rc) - r0 + 1, max(c for _, c in rc) - c0 + 1
    return (r0, c0, h, w) if h * w == len(rc) else None


def _tile(small: list[str], big: list[str]) -> list[tuple[str, str]] | None:
    """(small well, big well) for a rectangle ``big`` tiled by copies of the rectangle
    ``small`` (an 8x1 column over an 8x4 block: row by row, each copy at its position), in
    the order ``big`` was written; None when the shapes do not tile."""
    a, b = _rect(small), _rect(big)
    if a is None or b is None or b[2] % a[2] or b[3] % a[3] or (a[2] < b[2] and a[3] < b[3]):
        return None
    at = {(ord(w[0].upper()) - 65 - a[0], int(w[1:]) - a[1]): w for w in small}
    return [
        (at[(ord(w[0].upper()) - 65 - b[0]) % a[2], (int(w[1:]) - b[1]) % a[3]], w) for w in big
    ]


def _one_line(src: list[str], dst: list[str]) -> bool:
    """More destinations than sources, both one line along the same axis ("A1-H1 into column
    1 of a 384-well plate"): repeating the sources down the line would be a guess."""
    a, b = _rect(src), _rect(dst)
    if a is None or b is None or len(dst) <= len(src) or len(src) < 2:
        return False
    return (a[3] == b[3] == 1) or (a[2] == b[2] == 1)


def pair(src: list[str], dst: list[str]) -> list[tuple[str, str]]:
    """Source wells to destination wells: 1 -> n, n -> n in order (two rectangles of one shape
    by position, whichever order each was written in), n -> 1, n -> k*n."""
    a, b = (_rect(src), _rect(dst)) if len(src) == len(dst) > 1 else (None, None)
    if a is not None and b is not None and a[2:] == b[2:]:
        at = {(ord(w[0].upper()) - 65 - a[0], int(w[1:]) - a[1]): w for w in src}
        return [(at[ord(d[0].upper()) - 65 - b[0], int(d[1:]) - b[1]], d) for d in dst]
    if len(src) == 1:
        return [(src[0], d) for d in dst]
    if len(dst) == 1:
        return [(s, dst[0]) for s in src]
    if _one_line(src, dst):
        raise Ask(
            f"{len(src)} source wells and {len(dst)} destination wells in one line do not pair "
            "up: which wells should each source go into?",
            ["destination"],
            [f"{len(src)} destination wells (one per source)", "name the wells for each source"],
        )
    tiled = _tile(src, dst) if len(dst) > len(src) else _tile(dst, src)
    if tiled is not None:  # a column into columns (spot), columns into a column (pool by row)
        return tiled if len(dst) > len(src) else [(s, d) for d, s in tiled]
    if len(dst) % len(src) == 0:
        return [(src[j % len(src)], d) for j, d in enumerate(dst)]
    if len(src) > len(dst) > 1 and (groups := _groups_of(src, len(dst))) is not None:
        return [(s, d) for group, d in zip(groups, dst, strict=True) for s in group]
    raise Ask(
        f"{len(src)} source wells and {len(dst)} destination wells do not pair up: "
        "which wells should receive which?",
        ["destination"],
        [f"{len(src)} destination wells (one per source)", "1 destination well (pool)"],
    )


def _groups_of(src: list[str], k: int) -> list[list[str]] | None:
    """ "Rows A and B into A1 and A2": the sources as k equal rows, or k equal columns, in the
    order written, when exactly one of the two fits (else None: which goes where is asked)."""
    fits = []
    for key in (lambda w: w[0].upper(), lambda w: w[1:]):
        groups: dict[str, list[str]] = {}
        for w in src:
            groups.setdefault(key(w), []).append(w)
        if len(groups) == k and len({len(g) for g in groups.values()}) == 1:
            fits.append(list(groups.values()))
    return fits[0] if len(fits) == 1 else None


_SIDE_BY_SIDE = re.compile(
    r"\b(?:side[\s-]+by[\s-]+side|adjacent|next\s+to\s+each\s+other|neighbou?ring\s+wells"
    r"|one\s+after\s+(?:the\s+)?other)\b",
    _FLAGS,
)


def _stacked(src: list[str], dst: list[str]) -> bool:
    """A column into neighbouring columns (a row into neighbouring rows): the copies of the
    whole set already sit side by side, well by well."""
    a, b = _rect(src), _rect(dst)
    if a is None or b is None or _tile(src, dst) is None:
        return False
    return (a[3] == 1 and a[2] == b[2]) or (a[2] == 1 and a[3] == b[3])


def side_by_side(src: list[str], dst: list[str], frame: Frame) -> list[str]:
    """'A1-A6 in duplicate into row A, side by side': each source's copies in neighbouring
    destination wells (A1 -> A1, A2; A2 -> A3, A4), not the whole set repeated (A1 -> A1, A7).
    The sources to pair with ``dst`` in order."""
    if (
        len(src) < 2
        or len(dst) <= len(src)
        or len(dst) % len(src)
        or not _SIDE_BY_SIDE.search(frame.text)
        or _stacked(src, dst)
    ):
        return src
    return [s for s in src for _ in range(len(dst) // len(src))]


def _layout(src: list[str], dst: list[str], count: int) -> list[str] | None:
    """'A1-A4 in triplicate (rows A, B and C)': the replicates' rows (or columns), at the
    source's columns (or rows); None when the destination is not such a layout."""
    if len({w[0] for w in dst}) == count and len({w[0] for w in src}) == 1:
        cols = {w[1:] for w in src}
        keep = [w for w in dst if w[1:] in cols]
    elif len({w[1:] for w in dst}) == count and len({w[1:] for w in src}) == 1:
        rows = {w[0] for w in src}
        keep = [w for w in dst if w[0] in rows]
    elif (rect := _rect(dst)) is not None and {rect[2], rect[3]} == {len(src), count}:
        # "A1-A4 into columns 1-3 in triplicate (rows A-D)": a line of the block per source,
        # its replicates along that line (listed replicate by replicate, to pair in order)
        letters = sorted({w[0] for w in dst})
        numbers = sorted({int(w[1:]) for w in dst})
        if rect[2] == len(src):  # a row per source: its replicates along the row
            return [f"{r_}{c}" for c in numbers for r_ in letters]
        return [f"{r_}{c}" for r_ in letters for c in numbers]
    else:
        return None
    return keep if len(keep) == len(src) * count else None


# "B1 in triplicate, side by side" / "..., going down the column": where the copies go
_RIGHTWARDS = re.compile(
    r"\b(?:side[\s-]+by[\s-]+side|adjacent|next\s+to\s+(?:it|each\s+other)|to\s+(?:the|its)\s+right"
    r"|across(?:\s+the\s+row)?|along\s+the\s+row|in\s+the\s+same\s+row)\b",
    _FLAGS,
)
_DOWNWARDS = re.compile(
    r"\b(?:below|underneath|down\s+the\s+column|in\s+the\s+same\s+column"
    r"|going\s+down|downwards?)\b",
    _FLAGS,
)


def replicate(
    dst: list[str],
    count: int,
    needed: int,
    plate: str,
    p: r.Planning,
    src: list[str],
    text: str = "",
) -> list[str]:
    """A destination set written as its first replicate, repeated to its right (or below)
    when the request says which way; asked otherwise ("add 50 uL to A1 in triplicate" does
    not say which two wells get the copies). A destination larger than the replicates need
    is their layout when it is one ("in triplicate (rows A, B and C)")."""
    if len(src) > 1 and len(dst) > needed and (laid := _layout(src, dst, count)) is not None:
        return laid
    if len(src) > 1 and len(dst) > needed and len(dst) % len(src) == 0:
        # "A1-A3 into columns 1-3 in triplicate": 9 of the 24 wells, which ones not said
        raise Ask(
            f"{len(src)} wells in {count} replicates need {needed} wells, but {len(dst)} are "
            f"named ({plate} {dst[0]}..{dst[-1]}): which wells should receive them?",
            ["wells"],
            [f"{plate} {', '.join(dst[:needed])}", f"{plate} {dst[0]}..{dst[-1]} (all {len(dst)})"],
        )
    lines = (len({w[0] for w in dst}), len({w[1:] for w in dst}))
    if len(src) == 1 and len(dst) > needed and count not in lines:
        first = f"{plate} {', '.join(dst[:count])}"
        if lines[1] == 1:  # "column 2 in duplicate": perhaps columns 2 and 3
            col = int(dst[0][1:])
            first = f"{plate} columns {col}-{col + count - 1}"
        raise Ask(  # "row C in triplicate": 3 of its wells, or every well of it?
            f"{count} replicates, but the wells named are {len(dst)} "
            f"({plate} {dst[0]}..{dst[-1]}): which wells should receive them?",
            ["wells"],
            [first, f"{plate} {dst[0]}..{dst[-1]} (all {len(dst)})"],
        )
    if len(dst) >= needed:
        return dst
    lw = p.world.labware(plate)
    rc = [(ord(w[0]) - 65, int(w[1:])) for w in dst]
    width = max(c for _, c in rc) - min(c for _, c in rc) + 1
    height = max(r_ for r_, _ in rc) - min(r_ for r_, _ in rc) + 1
    if _RIGHTWARDS.search(text):
        sideways = True
    elif _DOWNWARDS.search(text):
        sideways = False
    else:  # the copies' wells are not said: to the right, or below? never a guess
        right = [f"{chr(65 + r_)}{c + k * width}" for k in range(count) for r_, c in rc]
        down = [f"{chr(65 + r_ + k * height)}{c}" for k in range(count) for r_, c in rc]
        raise Ask(
            f"{count} replicates, but only {plate} {span(dst)} is named: which wells should "
            "receive the copies?",
            ["wells"],
            [f"{plate} {', '.join(ws)}" for ws in (right, down) if _fits(ws, lw.rows, lw.cols)],
        )
    out: list[str] = []
    for k in range(count):
        for row, col in rc:
            row2, col2 = (row, col + k * width) if sideways else (row + k * height, col)
            if row2 >= lw.rows or col2 > lw.cols:
                raise Refuse(
                    f"{count} replicates of {len(dst)} wells do not fit on {plate}", "plate_size"
                )
            out.append(f"{chr(65 + row2)}{col2}")
    return out


_SAME_LINE = re.compile(r"\bsame\s+(?:(rows?)|columns?|cols?)\b", _FLAGS)


def same_line(listed: list[str], named: list[str], text: str) -> list[str]:
    """The source wells for destination wells ``listed`` "in the same wells" as a heading's
    source wells ``named``: the same positions, or, when the heading named other wells ("column
    1 of cDNA_plate in duplicate on PCR1: columns 1 and 2, same rows"), the one named well in
    each destination's row (its column for "same columns"). Never a well the heading left out.
    """
    if not named or set(listed) <= set(named):
        return listed
    said = _SAME_LINE.search(text)
    if said is not None:
        line = (lambda w: w[0].upper()) if said.group(1) else (lambda w: w[1:])
        by_line: dict[str, list[str]] = {}
        for w in named:
            by_line.setdefault(line(w), []).append(w)
        if all(len(by_line.get(line(d), [])) == 1 for d in listed):
            return [by_line[line(d)][0] for d in listed]
    raise Ask(
        f"The source wells are {span(named)}, but the destination wells are {span(listed)}: "
        "which source well goes into which destination well?",
        ["source"],
        [],
    )


# "make replicates of A1 in row C": copies, but how many is not said
_UNCOUNTED = re.compile(
    r"\breplicates?\s+(?:of|from)\b|\b(?:some|several|a\s+few)\s+replicates\b", _FLAGS
)


def uncounted(text: str, src: list[str], dst: list[str], plate: str) -> None:
    """Ask how many copies when replicates of one well go to a line of wells, uncounted."""
    if len(src) == 1 and len(dst) > 1 and _UNCOUNTED.search(text):
        raise Ask(
            f"How many replicates of {src[0]}, and which wells of {plate} ({span(dst)} named)?",
            ["count", "wells"],
            [f"{plate} {dst[0]}..{dst[-1]} (all {len(dst)})"],
        )


def _fits(wells: list[str], rows: int, cols: int) -> bool:
    return all(ord(w[0]) - 65 < rows and int(w[1:]) <= cols for w in wells)


def span(wells: list[str]) -> str:
    return wells[0] if len(wells) == 1 else f"{wells[0]}..{wells[-1]} ({len(wells)} wells)"


def positions(src_sets: list[tuple[str, list[str] | None]]) -> list[str]:
    """The source wells, each at its position, when every source set is on one plate
    ("samples A1 10 uL, A2 20 uL into dest_plate": A1 and A2, never A1 alone)."""
    first, wells = src_sets[0]
    if all(lw == first and ws for lw, ws in src_sets):
        return list(dict.fromkeys(w for _, ws in src_sets for w in ws or []))
    return list(wells or [])
