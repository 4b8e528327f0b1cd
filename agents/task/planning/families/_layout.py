"""Where a transfer's destination wells lie when the request lays them out: picks into the
first wells of a larger set, in order ("hit-pick B3, C7, E2 into column 12"); a 96-well
plate onto one quadrant of a 384-well plate; a run of wells from a starting well ("into
daughter starting at A1, down the column")."""

from __future__ import annotations

import re

from agents.task.planning import _resolve as r
from agents.task.planning._frames import Frame
from agents.task.planning._outcomes import Ask, Refuse
from agents.task.planning._quadrants import quadrants
from agents.task.planning.families._places import _FOLLOWING, _PICK

_FLAGS = re.IGNORECASE


def _quadrant(
    text: str, src_lw: str, src: list[str], dst_lw: str, world: r.World
) -> list[str] | None:
    """'Stamp cmpd into quadrant 2 of assay': a 96-well plate's wells onto one quadrant of a
    384-well plate, well (r, c) to (2r + dr, 2c + dc) with quadrant 1 at A1, 2 at A2, 3 at B1
    and 4 at B2 (the interleave the 8-channel head reaches on a 384 plate); quadrant by
    quadrant when several are named ("all four quadrants"); None otherwise."""
    named = quadrants(text)
    a, b = world.labware(src_lw), world.labware(dst_lw)
    if not named or (a.rows, a.cols, b.rows, b.cols) != (8, 12, 16, 24):
        return None
    return [
        f"{chr(65 + 2 * (ord(w[0]) - 65) + (q - 1) // 2)}{2 * int(w[1:]) - 1 + (q - 1) % 2}"
        for q in named
        for w in src
    ]


# the same well names said outright ("stamp" alone says nothing about a 384's quadrant)
_SAID_SAME = re.compile(
    r"\b(?:same|matching|corresponding)\s+(?:positions?|wells?|well\s+names?|coordinates)\b"
    r"|\bwell[\s-]+(?:to|for|by)[\s-]+well\b",
    _FLAGS,
)


def _quadrant_unsaid(
    frame: Frame, src_lw: str, src: list[str], dst_lw: str, dst: list[str], world: r.World
) -> None:
    """'Stamp the 96-well plate into the 384-well plate': its wells fit a 384 four ways (one per
    quadrant), or at the same names; with no destination wells and no quadrant said, ask."""
    a, b = world.labware(src_lw), world.labware(dst_lw)
    if (a.rows, a.cols, b.rows, b.cols) != (8, 12, 16, 24) or dst != src:
        return
    if any(role == "dest" and pl.wells is not None for role, pl in frame.places):
        return
    if _SAID_SAME.search(frame.text):
        return
    raise Ask(
        f"{src_lw} is a 96-well plate and {dst_lw} a 384-well plate: which quadrant of "
        f"{dst_lw} should its wells go to?",
        ["wells"],
        [f"quadrant {q} of {dst_lw}" for q in range(1, 5)]
        + [f"{dst_lw} {src[0]}-{src[-1]} (the same well names)"],
    )


def _quadrant_of_384(text: str, src_lw: str, src: list[str], dst_lw: str, world: r.World) -> None:
    """'Copy quadrant 1 of a 384 to another 384': the quadrant is a quarter of the source's
    wells, never the whole plate copied - asked (which wells), never done in full."""
    a = world.labware(src_lw)
    if (a.rows, a.cols) != (16, 24) or len(src) < 384 or not (named := quadrants(text)):
        return
    raise Ask(
        f"Which wells of {src_lw} should I copy to {dst_lw}? Quadrant {named[0]} is a quarter of "
        "the 384 wells (every other row and column), not the whole plate.",
        ["wells"],
        [f"quadrant {q} of {src_lw} into the same wells of {dst_lw}" for q in named]
        + [f"all 384 wells of {src_lw}"],
    )


_STARTING = re.compile(
    r"\b(?:starting|beginning|start)\s+(?:at|from|with|in)\s+(?:well\s+)?([A-Pa-p]\d{1,2})\b",
    _FLAGS,
)
_BY_ROW = re.compile(
    r"\b(?:row[\s-]?(?:wise|by[\s-]row)|by\s+rows?|across\s+(?:the\s+)?rows?|along\s+(?:the\s+)?rows?"
    r"|side[\s-]by[\s-]side"
    r"|in\s+row\s+order|left\s+to\s+right)\b",
    _FLAGS,
)
# "by columns", "column-wise": an order that fills column after column (a wrap is meant)
_COLUMN_ORDER = re.compile(
    r"\b(?:column[\s-]?(?:wise|by[\s-]column)|by\s+columns|in\s+column\s+order|row[\s-]?(?:wise|by[\s-]row)|by\s+rows|in\s+row\s+order)\b",
    _FLAGS,
)
_BY_COLUMN = re.compile(
    r"\b(?:column[\s-]?(?:wise|by[\s-]column)|by\s+columns?|down\s+(?:the\s+)?columns?"
    r"|in\s+column\s+order|top\s+to\s+bottom)\b",
    _FLAGS,
)


def _run_from(text: str, start: str, n: int, lw: str, world: r.World) -> list[str] | None:
    """'... into daughter starting at A1': ``n`` wells in a run from the starting well, along
    its row or down its column as the request says (asked when it does not say)."""
    m = _STARTING.search(text)
    if m is None or m.group(1).upper() != start or n < 2:
        return None
    view = world.labware(lw)
    every = range(view.rows * view.cols)
    by_row = [f"{chr(65 + i // view.cols)}{i % view.cols + 1}" for i in every]
    by_col = [f"{chr(65 + i % view.rows)}{i // view.rows + 1}" for i in every]
    runs = [w[w.index(start) : w.index(start) + n] for w in (by_row, by_col)]
    ways = ["along the row", "down the column"]
    if _BY_ROW.search(text) or _BY_COLUMN.search(text):
        keep = 0 if _BY_ROW.search(text) else 1
        runs, ways = [runs[keep]], [ways[keep]]
    fits = [(run, way) for run, way in zip(runs, ways, strict=True) if len(run) == n]
    if not fits:
        raise Refuse(f"{n} wells in a run from {start} do not fit on {lw}", "plate_size")
    # a run that stays in its row or column; one that wraps into the next is asked, never planned
    straight = [
        (run, way)
        for run, way in fits
        if len({w[0] if way == "along the row" else w[1:] for w in run}) == 1
    ]
    if _COLUMN_ORDER.search(text) and len(fits) == 1:
        return fits[0][0]  # "column-wise": filling column after column is what was asked
    if len(straight) == 1:
        return straight[0][0]
    if not straight and len(ways) == 1:
        raise Refuse(f"{n} wells {ways[0]} from {start} do not fit on {lw}", "plate_size")
    offered = straight or fits
    names = [f"{lw} {run[0]}-{run[-1]}" for run, _ in offered]
    said = " or ".join(f"{way} ({name})" for (_, way), name in zip(offered, names, strict=True))
    raise Ask(
        f"Which wells of {lw} should receive the {n} wells from {start}: {said}?",
        ["wells"],
        names,
    )


_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}  # fmt: skip
_N_WELLS = re.compile(
    rf"\b(?<!per\s)(?<!every\s)(\d{{1,3}}|{'|'.join(_NUMBERS)})\s+(?:(?:more|other|empty|separate|"
    r"different|adjacent|neighbou?ring|consecutive|fresh|new)\s+)?wells\b",
    _FLAGS,
)


_FROM_EACH = re.compile(r"\bfrom\s+(?:each\s+of\s+|all\s+(?:of\s+)?)?(?:the\s+)?$", _FLAGS)


def _as_counted(text: str, dst: list[str], lw: str, taken: int = 0) -> list[str]:
    """'into 3 wells of row C': a count of wells the set named does not have is asked about,
    never filled all the same (12 wells) or cut short."""
    m = _N_WELLS.search(text)
    if m is None or _FROM_EACH.search(text[: m.start()]):
        return dst  # "from each of the four wells in SERA1 A6-D6": the wells taken from
    n = _NUMBERS.get(m.group(1).lower()) or int(m.group(1))
    if n == len(dst) or n == 0 or (len(dst) == 1 and n == taken):
        return dst  # "pool 4 wells (P A1-D1) into Q A1": the wells pooled
    some = f"{lw} {dst[0]}-{dst[n - 1]}" if n < len(dst) else f"{len(dst)} wells of {lw}"
    raise Ask(
        f"You say {n} wells, but the wells named are {len(dst)} ({lw} {dst[0]}..{dst[-1]}): "
        "which wells should receive it?",
        ["wells"],
        [some, f"{lw} {dst[0]}..{dst[-1]} (all {len(dst)})"],
    )


# "in replicates", "BSA stock replicates", "replicate wells": copies said, but not how many
UNCOUNTED_REPLICATES = re.compile(
    r"\b(?:in\s+)?(?:replicates?|repeats|copies)\b(?!\s*/|\s+per\b)|\breplicated\b"
    r"|\bin\s+replicate\b",  # (never a unit: "gBlock 1e7 copies/uL")
    _FLAGS,
)


def _replicate_count(frame: Frame, src: str, dst: list[str], dst_lw: str) -> None:
    """One source said to go in replicates into one (starting) well, with no count: how many
    copies is asked, never one copy planned."""
    if frame.ents.replicates is None and len(dst) == 1 and UNCOUNTED_REPLICATES.search(frame.text):
        raise Ask(
            f"How many replicates of {src} should go into {dst_lw}, starting at {dst[0]}?",
            ["count"],
            ["2 (duplicate)", "3 (triplicate)", "4 (quadruplicate)"],
        )


def _arranged(
    frame: Frame, src_lw: str, src: list[str], dst_lw: str, dst: list[str], world: r.World
) -> list[str]:
    """The destination wells as the request lays them out: picks into the first wells of a
    larger set in order ("hit-pick B3, C7, E2 into column 12"), a 96-well plate onto a quadrant
    of a 384-well plate, or a run of wells from a starting well (for every replicate)."""
    text, count = frame.text, frame.ents.replicates or 1
    if len(src) == 1:
        _replicate_count(frame, f"{src_lw} {src[0]}", dst, dst_lw)
    if 1 < len(src) < len(dst) and (_PICK.match(text) or _FOLLOWING.search(text)):
        return dst[: len(src)]
    if quad := _quadrant(text, src_lw, src, dst_lw, world):
        return quad
    _quadrant_of_384(text, src_lw, src, dst_lw, world)
    _quadrant_unsaid(frame, src_lw, src, dst_lw, dst, world)
    if len(dst) == 1 and (run := _run_from(text, dst[0], len(src) * count, dst_lw, world)):
        return run
    return _as_counted(text, dst, dst_lw, len(src))
