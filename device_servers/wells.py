"""Well names and well ranges on a rows x columns grid ("A1", "A1:A12", "row A", "column 3", "all").

Order follows PyLabRobot's: down each column, then the next column (A1, B1, ... H1, A2, ...)
for whole-plate selections; a range keeps the direction it is written in.
"""

from __future__ import annotations

import re
import string

_WELL = re.compile(r"^([A-Za-z]{1,2})(\d{1,3})$")


def row_letter(index: int) -> str:
    """0 -> 'A', 25 -> 'Z', 26 -> 'AA'."""
    letters = string.ascii_uppercase
    return letters[index] if index < 26 else letters[index // 26 - 1] + letters[index % 26]


def grid_names(rows: int, cols: int) -> list[str]:
    """All well names of a grid, column-major like PyLabRobot."""
    return [f"{row_letter(r)}{c + 1}" for c in range(cols) for r in range(rows)]


def _split(name: str) -> tuple[str, int] | None:
    match = _WELL.match(name.strip())
    if not match:
        return None
    return match.group(1).upper(), int(match.group(2))


def _row_index(letters: str) -> int:
    if len(letters) == 1:
        return ord(letters) - 65
    return (ord(letters[0]) - 64) * 26 + ord(letters[1]) - 65


def normalize(name: str) -> str | None:
    """'a01' -> 'A1'; None when it is not a well name at all."""
    parts = _split(name)
    return None if parts is None else f"{parts[0]}{parts[1]}"


class WellRangeError(ValueError):
    """A selection that names no valid wells on the grid."""


def expand(selection: str, rows: int, cols: int) -> list[str]:
    """Turn a selection into well names, checking every name lies on the grid."""
    text = selection.strip()
    lowered = text.lower()
    if lowered == "all":
        return grid_names(rows, cols)
    if lowered.startswith("row "):
        letters = text[4:].strip().upper()
        if not letters.isalpha() or _row_index(letters) >= rows:
            raise WellRangeError(f"no row {letters!r} on a {rows}x{cols} grid")
        return [f"{letters}{c + 1}" for c in range(cols)]
    if lowered.startswith("column ") or lowered.startswith("col "):
        number = text.split(" ", 1)[1].strip()
        if not number.isdigit() or not 1 <= int(number) <= cols:
            raise WellRangeError(f"no column {number!r} on a {rows}x{cols} grid")
        return [f"{row_letter(r)}{number}" for r in range(rows)]
    if ":" in text:
        first, _, last = text.partition(":")
        a, b = _split(first), _split(last)
        if a is None or b is None:
            raise WellRangeError(f"{selection!r} is not a range such as 'A1:A12'")
        r0, r1 = _row_index(a[0]), _row_index(b[0])
        c0, c1 = a[1], b[1]
        for r, c in ((r0, c0), (r1, c1)):
            if r >= rows or not 1 <= c <= cols:
                raise WellRangeError(f"{selection!r} leaves the {rows}x{cols} grid")
        rstep = 1 if r1 >= r0 else -1
        cstep = 1 if c1 >= c0 else -1
        return [
            f"{row_letter(r)}{c}"
            for c in range(c0, c1 + cstep, cstep)
            for r in range(r0, r1 + rstep, rstep)
        ]
    parts = _split(text)
    if parts is None:
        raise WellRangeError(f"{selection!r} is not a well name such as 'A1'")
    if _row_index(parts[0]) >= rows or not 1 <= parts[1] <= cols:
        raise WellRangeError(f"{selection!r} is not on the {rows}x{cols} grid")
    return [f"{parts[0]}{parts[1]}"]
