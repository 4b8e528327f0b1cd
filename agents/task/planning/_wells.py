"""Well selections on a plate grid, found in text and expanded to well names.

The agents may not import ``device_servers.wells``; this is the planner's own small reader of
the same notation: 'A1', 'A1:A12' (or 'A1-A12'), 'A1, B1 and C1', 'row A', 'column 3',
'all wells'. Rows and columns keep the order they are written in; whole plates go column by
column (A1, B1, ... H1, A2, ...), like PyLabRobot.
"""

from __future__ import annotations

import re
import string

_ROW = r"([A-Pa-p])"
_WELL = r"[A-Pa-p]\d{1,2}"
_ALL = re.compile(
    r"\b(?:all(?:\s+the)?\s+wells|every\s+well|all\s+of|(?:the\s+)?(?:whole|entire|full)"
    r"(?:\s+plate)?)\b",
    re.IGNORECASE,
)
_ROW_SEL = re.compile(r"\brow\s+" + _ROW + r"\b", re.IGNORECASE)
_COL_SEL = re.compile(r"\b(?:column|col)\s+(\d{1,2})\b", re.IGNORECASE)
_RANGE = re.compile(r"\b(" + _WELL + r")\s*[:\-]\s*(" + _WELL + r")\b")
_SINGLE = re.compile(r"\b(" + _WELL + r")\b")


class SelectionError(ValueError):
    """A selection that leaves the plate's grid."""


def row_letter(index: int) -> str:
    """0 -> 'A'."""
    return string.ascii_uppercase[index]


def find(text: str) -> str | None:
    """The well selection written in ``text`` in canonical form ('row A', 'A1:A12', 'A1,B1',
    'column 3', 'all'), or None when it names no wells."""
    if m := _RANGE.search(text):
        return f"{m.group(1).upper()}:{m.group(2).upper()}"
    if m := _ROW_SEL.search(text):
        return f"row {m.group(1).upper()}"
    if m := _COL_SEL.search(text):
        return f"column {int(m.group(1))}"
    if _ALL.search(text):
        return "all"
    singles = [w.upper() for w in _SINGLE.findall(text)]
    return ",".join(dict.fromkeys(singles)) if singles else None


def _split(name: str) -> tuple[int, int]:
    return ord(name[0]) - 65, int(name[1:])


def _check(name: str, rows: int, cols: int) -> str:
    r, c = _split(name)
    if not (0 <= r < rows and 1 <= c <= cols):
        raise SelectionError(f"{name} is not on a {rows}x{cols} plate")
    return f"{row_letter(r)}{c}"


def expand(selection: str, rows: int, cols: int) -> list[str]:
    """Well names of a canonical selection on a rows x cols grid."""
    if selection == "all":
        return [f"{row_letter(r)}{c + 1}" for c in range(cols) for r in range(rows)]
    if selection.startswith("row "):
        letter = selection[4:]
        if ord(letter) - 65 >= rows:
            raise SelectionError(f"there is no row {letter} on a {rows}x{cols} plate")
        return [f"{letter}{c + 1}" for c in range(cols)]
    if selection.startswith("column "):
        col = int(selection[7:])
        if not 1 <= col <= cols:
            raise SelectionError(f"there is no column {col} on a {rows}x{cols} plate")
        return [f"{row_letter(r)}{col}" for r in range(rows)]
    if ":" in selection:
        first, last = (_check(n, rows, cols) for n in selection.split(":"))
        (r0, c0), (r1, c1) = _split(first), _split(last)
        rstep, cstep = (1 if r1 >= r0 else -1), (1 if c1 >= c0 else -1)
        return [
            f"{row_letter(r)}{c}"
            for c in range(c0, c1 + cstep, cstep)
            for r in range(r0, r1 + rstep, rstep)
        ]
    return [_check(n, rows, cols) for n in selection.split(",")]


def examples(rows: int, cols: int) -> list[str]:
    """Valid selections to offer when a request names no wells."""
    last = f"{row_letter(rows - 1)}{cols}"
    return ["A1", f"A1:A{cols}", "row A", "column 1", f"A1:{last} (all wells)"]
