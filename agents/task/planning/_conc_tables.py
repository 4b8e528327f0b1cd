"""Concentration tables pasted under a normalisation or a pool: a header that names a well
column and a concentration column ("Well | Conc (ng/uL)", "Well<TAB>Sample<TAB>nM", a Qubit or
plate-reader export) and the rows under it. Each row becomes ``A2 10 ng/uL`` on a line of
its own, which the normalisation reads like any per-well list; the header line is dropped.

A line is a header only when one cell is the well and one names a concentration; a row only
when it has as many cells as the header, a well where the header says well and a number where
it says concentration. Anything else is left as it was written.
"""

from __future__ import annotations

import re

_FLAGS = re.IGNORECASE
_SEP = re.compile(r"\s*(?:\t|\||,|;)\s*|\s{2,}")
_WELL_CELL = re.compile(r"^(?:wells?|pos(?:ition)?|location)$", _FLAGS)
_UNIT = r"(?:(?i:[pnu]g|g)\s*/\s*(?i:[unm]l|l)|(?-i:[pnu]M)\b)"
_CONC_CELL = re.compile(
    rf"\b(?:conc\w*|qubit|quant\w*|yield|result|dna|library|molarity)\b|{_UNIT}", _FLAGS
)
_UNITS_CELL = re.compile(r"^units?$", _FLAGS)
_CELL_UNIT = re.compile(rf"(?<![\w/]){_UNIT}")
_WELL = re.compile(r"^[A-Pa-p]\d{1,2}$")
_NUMBER = re.compile(r"^(\d+(?:\.\d+)?|\.\d+)$")
_SAYS = re.compile(r"conc|qubit|quant|ng\s*/|nM|yield|molarity", _FLAGS)
_RULE = re.compile(r"^[\s|:+-]+$")  # a Markdown table's |---|---| line


def _cells(line: str) -> list[str]:
    return [c.strip() for c in _SEP.split(line.strip().strip("|").strip())]


def _header(cells: list[str]) -> tuple[int, int, str, int | None] | None:
    """(well column, concentration column, its unit or "", the units column if any) of a
    header line, or None."""
    if len(cells) < 2 or any(re.search(r"\d", c) and not _CELL_UNIT.search(c) for c in cells):
        return None
    wells = [i for i, c in enumerate(cells) if _WELL_CELL.match(c)]
    units = [i for i, c in enumerate(cells) if _UNITS_CELL.match(c)]
    concs = [i for i, c in enumerate(cells) if i not in wells + units and _CONC_CELL.search(c)]
    if len(wells) != 1 or len(concs) != 1 or len(units) > 1:
        return None
    unit = _CELL_UNIT.search(cells[concs[0]])
    said = unit.group(0).replace(" ", "") if unit else ""
    return wells[0], concs[0], said, units[0] if units and not said else None


def _row(cells: list[str], head: tuple[int, int, str, int | None]) -> str | None:
    """ "A2 10 ng/uL" from a row's cells, or None when the row is not one of the table's."""
    well, col, unit, units = head
    if len(cells) <= max(well, col, units or 0):
        return None
    num = _NUMBER.match(cells[col])
    if not _WELL.match(cells[well]) or num is None:
        return None
    if units is not None:  # "A1, S1, 10, nM": the unit in a column of its own
        own = _CELL_UNIT.fullmatch(cells[units].replace(" ", ""))
        if own is None:
            return None
        unit = own.group(0)
    return f"{cells[well]} {num.group(1)} {unit}".rstrip()


def rewrite(text: str) -> str:
    """``text`` with each concentration table's rows as ``well number unit`` lines."""
    if "\n" not in text or not _SAYS.search(text):
        return text  # cheap: most requests hold no such table
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        head = _header(_cells(lines[i]))
        rows: list[str] = []
        j = i + 1
        while head is not None and j < len(lines):
            if _RULE.match(lines[j]):
                j += 1
                continue
            if (row := _row(_cells(lines[j]), head)) is None:
                break
            rows.append(row)
            j += 1
        if not rows:
            out.append(lines[i])
            i += 1
            continue
        out.extend(rows)
        i = j
    return "\n".join(out)
