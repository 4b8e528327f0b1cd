"""'Every other': alternate wells of the set that follows ('every other well of row H'), and
alternate rows or columns counted inside the span said with them ('every other column,
columns 2-12', 'columns 1 to 7 - every other one')."""

from __future__ import annotations

import itertools
import re
from typing import Any

from agents.task.planning._wellpatterns import _OTHER_WELL, _START_AT, Part

_FLAGS = re.IGNORECASE
# "every other column of #, columns 2-12", "every other row from rows B to H": the span after
_WITHIN = re.compile(
    r"^\s*(?:(?:of|on|in)\s+(?:the\s+)?#+\s*)?"
    r"(?:,|\(|:|-|of|in|within|across|among|from|between)?\s*(?:the\s+)?$",
    _FLAGS,
)
# "columns 2-12, every other one", "cols 2-12 (every other column)": the span before; never
# "column 2 in every other column of X" (a source column and its destinations)
_SPAN_THEN = re.compile(r"\s*(?:(?:of|on|in)\s+(?:the\s+)?#+)?\s*[,(:-]?\s*", _FLAGS)


# "row B of #, every other well", "column 3 - alternate wells": the set said first ("columns 1
# to 7 - every other one" thins the columns: _SPAN_THEN)
_OTHER_WELL_AFTER = re.compile(
    r"\b(?:every\s+(?:other|second|2nd)|alternat(?:e|ing)|(odd|even)(?:[-\s]?numbered)?)\s+wells?\b"
    r"(?!\s+(?:of|in|on|along|across)\b)",
    _FLAGS,
)
# "alternate wells, A1 to A8, of X", "every other well: B1-B12": the set right after a mark
_OTHER_WELL_LIST = re.compile(
    r"\b(?:every\s+(?:other|second|2nd)|alternat(?:e|ing)|(odd|even)(?:[-\s]?numbered)?)\s+wells?"
    r"(?:\s+only)?\s*(?:,|:|\(|\s[-–—])\s*(?:(?:i\.?e\.?|namely)\s*,?\s*)?(?:wells?\s+)?",
    _FLAGS,
)
_GAP_BEFORE = re.compile(
    r"\s*(?:(?:of|on|in)\s+(?:the\s+)?#+(?:\s+plate)?)?\s*[,(:-]?\s*(?:in\s+|using\s+)?", _FLAGS
)


# "row A and row B", "A1-A12, B1-B12": sets of one list, which one qualifier covers
_JOINED = re.compile(r"\s*(?:,\s*(?:and\s+)?|and\s+|&\s*|\+\s*)(?:rows?\s+|columns?\s+|cols?\s+)?")


def _listed(text: str, found: list[Any], i: int, step: int) -> list[int]:
    """``i`` and the sets listed with it, walking forward (``step`` 1) or back (-1)."""
    out = [i]
    while 0 <= out[-1] + step < len(found):
        a, b = sorted((out[-1], out[-1] + step))
        if not _JOINED.fullmatch(text[found[a][1] : found[b][0]]):
            break
        out.append(out[-1] + step)
    return out


def _parts(part: Any) -> tuple[Part, ...]:
    return part if isinstance(part, tuple) else (part,)


def _single(found: list[Any], listed: list[int]) -> bool:
    """Whether the listed sets are single wells ('A1, A2, A3, A4'): one list to thin."""
    return len(listed) > 1 and all(
        not found[k][4] and all(p.kind == "well" for p in _parts(found[k][2])) for k in listed
    )


def _spaced(found: list[Any], listed: list[int]) -> bool:
    """Whether listed single wells already skip one well each ('A1, A3, A5, A7')."""
    if not _single(found, listed):
        return False
    wells = [str(p.args[0]).upper() for k in sorted(listed) for p in _parts(found[k][2])]
    rc = [(ord(w[0]) - 65, int(w[1:])) for w in wells if w[1:].isdigit()]
    steps = {(r2 - r1, c2 - c1) for (r1, c1), (r2, c2) in itertools.pairwise(rc)}
    return len(rc) == len(wells) and steps in ({(0, 2)}, {(2, 0)})


def _thin(found: list[Any], listed: list[int], first: str | None, step: int = 2) -> None:
    """Make each listed set its alternate wells (starting at ``first``: a well, odd, even);
    a list of single wells is one list, so its alternate items ('A1, A2, A3, A4': A1, A3)."""
    if _single(found, listed):
        ks = sorted(listed)
        wells = tuple(p for k in ks for p in _parts(found[k][2]))
        found[ks[0]] = (found[ks[0]][0], found[ks[-1]][1], Part("alternate", (wells, first, step)),
                        None, False)  # fmt: skip
        del found[ks[1] : ks[-1] + 1]
        return
    for k in listed:
        start, end, part, _axis, chain = found[k]
        found[k] = (start, end, Part("alternate", (_parts(part), first, step)), None, chain)


def every_other_well(text: str, found: list[Any]) -> list[Any]:
    """'every other well of row H, starting at H1': alternate wells of the set that follows
    (of each set listed there: 'every other well of row A and row B' thins both)."""
    said = [(m, 12) for m in _OTHER_WELL.finditer(text)]
    said += [(m, 7) for m in _OTHER_WELL_LIST.finditer(text)]  # "alternate wells, A1 to A8"
    for m, near in said:
        nxt = next(
            (i for i, f in enumerate(found) if f[0] >= m.end() - 1 and f[0] - m.end() < near),
            None,
        )
        if nxt is None:
            continue
        listed = _listed(text, found, nxt, 1)
        end = found[listed[-1]][1]
        begin = _START_AT.match(text[end:])
        first = begin.group(1).upper() if begin else (m.group(1) or "").lower() or None
        step = 2
        if m.re is _OTHER_WELL and m.group("at"):  # "every other well, starting at A2, of"
            first = m.group("at").upper()
        if nth := re.match(r"every\s+(third|3rd|fourth|4th)", m.group(0), _FLAGS):
            step = 3 if nth.group(1)[0] in "t3" else 4  # "every third well of row A": A1, A4

        _thin(found, listed, first, step)
        if begin:  # the starting well is not a well set of its own
            found = [f for f in found if not (end <= f[0] < end + begin.end())]
        found = [f for f in found if not m.start() <= f[0] < m.end()]
    for m in _OTHER_WELL_AFTER.finditer(text):  # "row B of #, every other well"
        before = [i for i, f in enumerate(found) if f[1] <= m.start()]
        if not before or not _GAP_BEFORE.fullmatch(text[found[before[-1]][1] : m.start()]):
            continue
        listed = _listed(text, found, before[-1], -1)  # "row A and row B, every other well"
        if not (len(listed) > 2 and _single(found, listed)) and any(
            found[k][4] or any(p.kind in ("well", "alternate") for p in _parts(found[k][2]))
            for k in listed
        ):
            continue
        first = (m.group(1) or "").lower() or None
        if _spaced(found, listed):  # "A1, A3, A5, A7 (every other well)": the list is what
            _thin(found, listed, None, 1)  # the remark says: every well of it, none skipped
            continue
        if begin := _START_AT.match(text[m.end() :]):
            first = begin.group(1).upper()
            found = [f for f in found if not (m.end() <= f[0] < m.end() + begin.end())]
        _thin(found, listed, first)
    return found


def every_other_in(
    before: tuple[Part, ...],
    before_axis: str | None,
    before_text: str,
    parts: tuple[Part, ...],
    axis: str | None,
    gap: str,
) -> bool:
    """Whether an 'every other' set and a span of rows or columns next to it are one set."""
    if len(parts) != 1 or len(before) != 1 or not _WITHIN.match(gap):
        return False
    pair = {before[0].kind, parts[0].kind}
    if pair not in ({"other", "cols"}, {"other", "rows"}) or (
        None not in (before_axis, axis) and before_axis != axis
    ):
        return False
    if before[0].kind != "other":
        return bool(_SPAN_THEN.fullmatch(gap))
    return not re.search(r"\b(?:start|begin)", before_text, _FLAGS)  # its own first line


def alternate_in(one: Part, two: Part) -> Part:
    """The 'every other' lines of a span, counted from its first line."""
    other, span = (one, two) if one.kind == "other" else (two, one)
    first = str(span.args[0])
    index = ord(first.upper()) - 64 if first.isalpha() else int(first)
    axis = "col" if span.kind == "cols" else "row"
    return Part("cross", ((Part("other", (axis, index, other.args[2])),), (span,)))
