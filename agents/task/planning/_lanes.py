"""A trough plate's lanes by number: "trough 2", "well 2", "the 2nd trough" on a one-row
(or one-column) trough plate name its well A2 (B1)."""

from __future__ import annotations

import re

_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6,
             "seventh": 7, "eighth": 8, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4, "5th": 5,
             "6th": 6, "7th": 7, "8th": 8, "9th": 9, "10th": 10, "11th": 11,
             "12th": 12}  # fmt: skip
_LANE = re.compile(
    r"\b(?:trough|channel|lane|well|position|slot|compartment|column|col)\s*(?:#|no\.?|number)?\s*"
    r"(\d{1,2})\b(?!\s*(?:u[lL]|ml|mL))"
    r"|\b(?:the\s+)?("
    + "|".join(_ORDINALS)
    + r")\s+(?:trough|channel|lane|well|position|compartment)\b",
    re.IGNORECASE,
)


def lane_well(text: str, rows: int, cols: int) -> list[str] | None:
    """A trough plate's lane by its number ('trough 2', 'well 2', 'the 2nd trough'): its well."""
    if rows != 1 and cols != 1:
        return None
    lanes = list(_LANE.finditer(text))
    named = [
        m
        for m in lanes
        if re.match(r"(?:the\s+)?\w*\s*(?:trough|channel|lane|compartment)", m.group(0), re.I)
    ]
    found = [int(m.group(1) or _ORDINALS[m.group(2).lower()]) for m in (named or lanes)]
    if len(found) != 1 or not 1 <= found[0] <= rows * cols:
        return None
    return [f"A{found[0]}"] if rows == 1 else [f"{chr(64 + found[0])}1"]
