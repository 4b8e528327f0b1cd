"""A plate map said on one line, each item its wells, a colon and what goes there ("plate_2
A1-A6: 50 uL buffer, B1-B6: 50 uL dye"): the items are cut apart with semicolons, as a map
written one item a line is, so no item reads as a heading over the rest (the first item was
lost: "A1-A6: 50 uL buffer, B1-B6" read as one heading over "50 uL dye"). Pure text."""

from __future__ import annotations

import re

_WELLS = (
    r"(?:[A-Pa-p]\d{1,2}(?:\s*(?:[-–]|to|:)\s*[A-Pa-p]?\d{1,2})?"
    r"|(?:rows?|columns?|cols?)\s+[A-Pa-p\d]{1,2}(?:\s*(?:[-–]|to)\s*[A-Pa-p\d]{1,2})?)"
)
# a label: the wells (a plate's name may come first), a colon, then what goes there
_LABEL = re.compile(rf"(?<![\w-])(?:[\w-]+\s+)?{_WELLS}\s*:(?:\s+|(?=\d))(?=\S)")
# the separator before a second label: a comma, "and" or "&" (or both)
_BEFORE_LABEL = re.compile(
    rf"\s*(?:,\s*(?:and\s+|&\s*)?|\s(?:and|&)\s+)(?=(?:[\w-]+\s+)?{_WELLS}\s*:(?:\s+|(?=\d))\S)",
    re.IGNORECASE,
)


def map_items(line: str) -> str:
    """``line`` with its wells-and-colon items parted by semicolons when it has two or more."""
    if len(_LABEL.findall(line)) < 2:
        return line
    return _BEFORE_LABEL.sub("; ", line)
