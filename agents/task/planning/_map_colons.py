"""A plate map said on one line, item after item ("plate_2 A1-A6: 50 uL buffer, B1-B6: 50 uL
dye", "dye 20 uL -> row C and buffer 25 uL -> col 9", "col 9 buffer 75 uL | row C buffer
60 uL"): the items are cut apart with semicolons, as a map written one item a line is, so no
item reads as a heading over the rest and no item's volume or liquid is lost to another's
(the first item was dropped, or both items took the first one's volume or liquid). Pure text."""

from __future__ import annotations

import re

# A well, a range of wells, a row or a column, as a plate map's item names them
WELL_SPEC = (
    r"(?:[A-Pa-p]\d{1,2}(?:\s*(?:[-–]|to|:)\s*[A-Pa-p]?\d{1,2})?"
    r"|(?:rows?|columns?|cols?)\s+[A-Pa-p\d]{1,2}(?:\s*(?:[-–]|to)\s*[A-Pa-p\d]{1,2})?)"
)
_HAS_WELLS = re.compile(rf"(?<![\w-]){WELL_SPEC}(?![\w-])", re.IGNORECASE)
_VOLUME = re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s*(?:u|µ|μ|m)[lL]\b")
# where one item may end and the next begin: a comma, a semicolon, a bar, "and", "&"
_SEPARATOR = re.compile(r"\s*(?:[,;|]\s*(?:and\s+|&\s*)?|\s(?:and|&)\s+)", re.IGNORECASE)
# work whose pieces are one piece of work, never a map's items ("200 uL in A1, 100 uL in
# A2-A12, 2-fold ...": a series; "... to 50 uL final": a level)
_ONE_WORK = re.compile(
    r"serial|dilut|-?fold\b|\b1\s*:\s*\d|curve|\bstd\b|standard|normali|\btop\b|\bpool|final"
    r"|total|\bthen\b|\bmix|replicate|triplicate|duplicate|\bx\s*\d|\d\s*x\b|\beach\b|\bfrom\b"
    r"|\bstamp|\bcopy|\bpick|\bbring|\bto\s+(?:a\s+)?\d|channel|\btips?\b|\bhead\b"
    r"|\bthere\s+(?:is|are)\b|\b(?:holds?|contains?|has|have)\b",
    re.IGNORECASE,
)


_BRACKET_LIST = re.compile(r"\([^()]*(?:[,;|&]|\band\b)[^()]*\)", re.IGNORECASE)
_STARTS_WITH_WELLS = re.compile(
    rf"\s*(?:[\w-]+\s+)?(?:wells?\s+)?{WELL_SPEC}(?![\w-])", re.IGNORECASE
)  # ("plate_2 D4: 40 uL buffer": a plate's name may come first)
# "A12 (25 uL), B11 (25 uL) and C10 (40 uL)": each well's volume, one piece of work
_WELL_VOLUME = re.compile(rf"{WELL_SPEC}\s*\(\s*\d+(?:\.\d+)?\s*(?:u|µ|μ|m)[lL]", re.IGNORECASE)


_FILLER = re.compile(
    r"\b(?:u|µ|μ|m)[lL]\b|\b(?:rows?|columns?|cols?|wells?|to|into|in|on|of|and|per|each|the)\b"
    r"|[\w-]*_[\w-]*",
    re.IGNORECASE,
)


def _is_item(piece: str) -> bool:
    """A piece with wells, a volume and what goes there ("col 9 buffer 75 uL"); "A2 20 uL" of
    "A1 10 uL, A2 20 uL, A3 30 uL dye on plate_1" is one well's volume of a shared list."""
    if not (_VOLUME.search(piece) and _HAS_WELLS.search(piece)):
        return False
    rest = _FILLER.sub(" ", _HAS_WELLS.sub(" ", _VOLUME.sub(" ", piece)))
    return bool(re.search(r"[A-Za-z]{3,}", rest))


def _wells_first(item: str) -> bool:
    wells, volume = _HAS_WELLS.search(item), _VOLUME.search(item)
    return bool(wells and volume and wells.start() < volume.start())


def map_items(line: str) -> str:
    """``line`` with its items parted by semicolons when it lists two or more, each with wells
    and a volume of its own. An item starts where its first part is said: at a volume when
    the items say the volume first ("buffer 30 uL -> E7-E12, ..."), at wells when they say
    the wells first ("F1 to F4 - 50 uL buffer and D1, D2, D3 - 25 uL dye"); the pieces
    between ("D2" of "D1, D2, D3") stay with their item."""
    if (
        len(_VOLUME.findall(line)) < 2
        or _ONE_WORK.search(line)
        or _BRACKET_LIST.search(line)
        or _WELL_VOLUME.search(line)
    ):
        return line
    pieces, seps, start = [], [], 0
    for m in _SEPARATOR.finditer(line):
        pieces.append(line[start : m.start()])
        seps.append(m.group(0))
        start = m.end()
    pieces.append(line[start:])
    items, glue = [pieces[0]], [""]
    wells_first = False
    for sep, piece in zip(seps, pieces[1:], strict=True):
        done = _is_item(items[-1])
        wells_first = wells_first or (done and _wells_first(items[-1]))
        if done and (_STARTS_WITH_WELLS.match(piece) if wells_first else _VOLUME.search(piece)):
            items.append(piece)
            glue.append(sep)
        else:
            items[-1] += sep + piece
    kept = [items[0]]  # an item left without its volume or wells belongs to the one before
    for sep, item in zip(glue[1:], items[1:], strict=True):
        if _is_item(item):
            kept.append(item)
        else:
            kept[-1] += sep + item
    return "; ".join(item.strip() for item in kept) if len(kept) > 1 else line
