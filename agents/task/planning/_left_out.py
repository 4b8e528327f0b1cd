"""Wells said to be left out: taken from the set before them, or from the whole plate.

"every well of X (wells H11 and H12 left out)", "row A, A12 left empty": the set before,
without them. With no set before ("Put 15 uL mix in qpcr_b, leaving the edge wells empty",
"fill plate_1 except row H"), the wells left out are taken from the whole plate: the named
wells are the ones NOT to fill, never the ones filled.
"""

from __future__ import annotations

import re
from typing import Literal

from agents.task.planning._welljoints import _LEFT_OUT_AFTER, _LEFT_OUT_BEFORE

_FLAGS = re.IGNORECASE
# "leaving the edge wells empty", "keep column 12 free": left alone when said empty after it
_LEAVING = re.compile(
    r"\b(?:leav(?:e|ing)|keep(?:ing)?)\s+(?:the\s+)?(?:wells?\s+(?:in\s+)?)?$", _FLAGS
)
_EMPTY_AFTER = re.compile(
    r"^\s*(?:wells?\s+)?(?:empty|blank|dry|unfilled|untouched|alone|free|clear|out)\b", _FLAGS
)
# "except row H", "skipping the outer wells", "avoiding the edges": left out whatever follows
_SAVE = re.compile(
    r"\b(?:except(?:\s+for)?|excluding|skipping|avoiding|leaving\s+out|apart\s+from|other\s+than"
    r"|but\s+not)\s+(?:the\s+)?(?:wells?\s+(?:in\s+)?)?$",
    _FLAGS,
)
Fate = Literal["own", "from_before", "from_plate"]


def _said_out(text: str, start: int, end: int) -> bool:
    before = text[:start]
    return bool(
        (_LEAVING.search(before) and _EMPTY_AFTER.match(text[end:])) or _SAVE.search(before)
    )


def fate(text: str, prev_end: int | None, start: int, end: int, whole: bool) -> Fate:
    """What the set at ``start:end`` is: its own wells, wells taken from the set before it
    (ending at ``prev_end``; after a comma: "row A, keep A12 empty") or, first, from the whole
    plate. "A1 and keep A1 empty" stays two sets: the plan would fill a well kept empty, which
    is asked (:mod:`._kept_empty`)."""
    if prev_end is not None:
        between = text[prev_end:start]
        if (_LEFT_OUT_BEFORE.match(between) and _LEFT_OUT_AFTER.match(text[end:])) or (
            _said_out(text, start, end) and re.fullmatch(r"\s*[,(][^;.]*", between)
        ):
            return "from_before"
        return "own"
    return "from_plate" if not whole and _said_out(text, start, end) else "own"
