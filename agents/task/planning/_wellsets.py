"""Well sets as people write them, found in text and expanded on a plate's grid.

Written forms: single wells and lists (``A1``, ``a1, b1 and c1``), rectangles (``A1:A12``,
``A1-A12``, ``A1 to A12``, ``B1 through H1``), rows (``row A``, ``rows A to D``, ``rows A, B``),
columns (``column 3``, ``columns 1-3``, ``cols 1,2,3,4``, ``columns 2-6 and 8-12``), ``every
other column``, odd / even columns, the first / last rows or columns, the whole plate, and
arrow chains (``A1 -> B1 -> C1``). Mentions joined by "and" or a comma are one set.

A set is symbolic until it is expanded on a plate (``rows`` x ``cols``): a rectangle is listed
row by row in the direction it is written (``A12:A1`` runs right to left), rows and columns in
the order named, a whole plate row by row.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agents.task.planning._alternates import alternate_in, every_other_in, every_other_well
from agents.task.planning._left_out import fate
from agents.task.planning._wellgrid import _expand, _name, _split
from agents.task.planning._welljoints import (
    _CROSS,
    _EXCEPT,
    _joined,
    _starts_a_pair,
    a_pair_not_a_range,
)
from agents.task.planning._wellpatterns import (
    _ARROW_SPAN,
    _BUT_AFTER,
    _ELLIPSIS,
    _INTO_BEFORE,
    _LETLIST,
    _LISTED_AFTER,
    _ORDINAL,
    _PATTERNS,
    _THEN_ALTERNATE,
    _WELL_COUNT,
    _WORDNUM,
    Part,
    _letters,
    _numbers,
    row_letter,
    whole_plates,
)
from agents.task.planning._wellpatterns import (
    SelectionError as SelectionError,  # the stages catch it from here
)

_FLAGS = re.IGNORECASE


@dataclass(frozen=True)
class WellSet:
    """A written well selection: parts joined in order, where it was in the text."""

    parts: tuple[Part, ...]
    start: int
    end: int
    text: str
    chain: bool = False
    axis: str | None = field(default=None)  # "row" / "col": a set written as rows or columns
    restates: WellSet | None = None  # "I1-I12 (the bottom row)": the same wells said twice

    def expand(self, rows: int, cols: int) -> list[str]:
        """Well names on a rows x cols grid; SelectionError when a part leaves it (or a part
        of its restatement: "I1-I12 (the bottom row)" names a row no 96-well plate has)."""
        names: list[str] = []
        for part in self.parts:
            names.extend(_expand(part, rows, cols))
        if self.restates is not None:
            self.restates.expand(rows, cols)
        return list(dict.fromkeys(names)) if not self.chain else names

    @property
    def whole_plate(self) -> bool:
        return any(p.kind == "all" for p in self.parts)


def _part(kind: str, m: re.Match[str]) -> tuple[Part, str | None]:
    if kind == "rect":
        return Part("rect", (m.group(1).upper(), m.group(2).upper())), None
    if kind in ("rowpart", "colpart"):  # "A1-12", "column 3, A-D": a rectangle in one line
        g = {k: v for k, v in m.groupdict().items() if v}
        if kind == "rowpart":
            row = (g.get("r") or g.get("r2") or g.get("r3") or "A").upper()
            a, b = (g.get(k) or g.get(k + "2") or g.get(k + "3") for k in ("a", "b"))
            return Part("rect", (f"{row}{a}", f"{row}{b}")), None
        col = g.get("c") or g.get("c2") or g.get("c3")
        x, y = ((g.get(k) or g.get(k + "2") or g.get(k + "3") or "A").upper() for k in "xy")
        return Part("rect", (f"{x}{col}", f"{y}{col}")), None
    if kind in ("rowspan", "colspan"):  # the first alternative that matched: its two ends
        a, b = next((x, y) for x, y in zip(m.groups()[::2], m.groups()[1::2], strict=True) if x)
        if kind == "rowspan":
            return Part("rows", tuple(_letters(f"{a}-{b}"))), "row"
        return Part("cols", tuple(_numbers(f"{a}-{b}"))), "col"
    if kind == "rows":
        return Part("rows", tuple(_letters(m.group(1)))), "row"
    if kind == "cols":
        return Part("cols", tuple(_numbers(m.group(1)))), "col"
    if kind == "other":  # "every other one": the axis of the set it follows
        said = m.group(3).lower()
        axis = "col" if said.startswith("col") else None if said.startswith("one") else "row"
        start = m.group(4)
        first = (ord(start.upper()) - 64) if start and start.isalpha() else int(start or 1)
        step = {"third": 3, "3rd": 3, "fourth": 4, "4th": 4}.get((m.group(1) or "").lower(), 2)
        return Part("other", (axis, first, step)), axis
    if kind == "parity":
        axis = "col" if m.group(2).lower().startswith("col") else "row"
        return Part("parity", (axis, m.group(1).lower())), axis
    if kind == "firstn":
        axis = "col" if m.group(3).lower().startswith("col") else "row"
        count = _WORDNUM.get(m.group(2).lower()) or int(m.group(2))
        return Part("firstn", (axis, m.group(1).lower(), count)), axis
    if kind == "nth":
        axis = "col" if m.group(2).lower().startswith("col") else "row"
        word = m.group(1).lower()
        which = -1 if word in ("last", "bottom", "final") else _ORDINAL.get(word, 0)
        return Part("nth", (axis, which or int(re.sub(r"\D", "", word) or 1))), axis
    if kind == "rownum":  # "row 9": the ninth row
        return Part("nth", ("row", int(m.group(1)))), "row"
    if kind == "all":  # "column 2, all rows": the rows cross the column (-> "cross")
        named = re.search(r"\b(rows?|col)", m.group(0), _FLAGS)
        return Part("all"), (named.group(1)[:3].lower() if named else None)
    if kind == "allbutlist":
        axis = "col" if m.group("ax").lower().startswith("col") else "row"
        gone = (
            Part("rows", tuple(_letters(m.group("list"))))
            if axis == "row"
            else Part("cols", tuple(_numbers(m.group("list"))))
        )
        return Part("minus", ((Part("all"),), (gone,))), axis
    if kind == "allbut":  # "all columns but the last": the plate minus its first/last n
        axis = "col" if (m.group("ax1") or m.group("ax2")).lower().startswith("col") else "row"
        end = {"top": "first", "bottom": "last"}.get(m.group("end").lower(), m.group("end").lower())
        n = (m.group("n") or "one").lower()
        count = {"one": 1, **_WORDNUM}.get(n) or int(n)
        return Part("minus", ((Part("all"),), (Part("firstn", (axis, end, count)),))), axis
    if kind == "corners":
        return Part("corners", tuple(w.upper() for w in m.groups() if w)), None
    if kind == "ordinal":  # "wells 1-24": counted in reading order
        return Part("ordinal", (int(m.group(1)), int(m.group(2)))), None
    if kind == "edge":
        word = next(g for g in m.groups() if g).lower()
        return Part("inner" if word in ("inner", "interior") else "outer"), None
    return Part("well", (m.group(1).upper(),)), None


def _chain_wells(text: str) -> list[str]:
    """'H1 -> H2 -> ... -> H7': the wells in order, an ellipsis filled along its row or column."""
    items = [t.strip().upper() for t in text.split("->")]
    out: list[str] = []
    for i, item in enumerate(items):
        if item in ("...", "…"):
            if not out or i + 1 >= len(items):
                continue
            (r0, c0), (r1, c1) = _split(out[-1]), _split(items[i + 1])
            if len(out) >= 2:
                (pr, pc) = _split(out[-2])
                dr, dc = r0 - pr, c0 - pc
            else:
                dr, dc = (0, 1 if c1 > c0 else -1) if r0 == r1 else (1 if r1 > r0 else -1, 0)
            r, c = r0 + dr, c0 + dc
            while (dr or dc) and (r, c) != (r1, c1) and 0 <= r < 26 and 0 < c < 50:
                out.append(_name(r, c))
                r, c = r + dr, c + dc
            continue
        out.append(item)
    return out


def find_all(text: str) -> list[WellSet]:
    """Every well set written in ``text``, in order; neighbours joined by "and" / "," merge."""
    taken = [False] * len(text)
    found: list[tuple[int, int, Part | tuple[Part, ...], str | None, bool]] = []
    for m in _ARROW_SPAN.finditer(text):  # "into wells A1 -> A6": the wells from A1 to A6
        if _INTO_BEFORE.search(text[: m.start()]):
            taken[m.start() : m.end()] = [True] * (m.end() - m.start())
            found.append((m.start(), m.end(), _part("rect", m)[0], None, False))
    for kind, rx in _PATTERNS:
        pos = 0
        while (hit := rx.search(text, pos)) is not None:
            m = hit
            pos = max(m.end(), m.start() + 1)
            if any(taken[m.start() : m.end()]):
                continue
            if kind == "allbut" and not (m.group("ax1") or m.group("ax2")):
                continue  # "all but the last": of what is left to the other patterns
            if kind == "allbutlist" and m.group("ax").lower().startswith("row") != bool(
                re.fullmatch(_LETLIST, m.group("list"), _FLAGS)
            ):
                continue  # "all columns but A": not a column
            if kind == "rect" and a_pair_not_a_range(
                text[: m.start()], m.group(0), text[m.end() :]
            ):
                pos = m.start() + 1  # "from E1 to B1-B12": the range may start at its end well
                continue  # "from A1 to B1": a source and a destination, not a range
            if kind == "rect" and _LISTED_AFTER.match(m.group(0) + text[m.end() :]):
                continue  # "starting at A1: B2, B4, D6": a well, then the list it heads
            for i in range(m.start(), m.end()):
                taken[i] = True
            if kind in ("chain", "progression"):
                said = m.group(0)
                if kind == "progression":
                    said = _ELLIPSIS.sub(r" -> \1 -> ", said.replace(",", " -> ", 1))
                wells = tuple(Part("well", (w,)) for w in _chain_wells(said))
                found.append((m.start(), m.end(), wells, None, kind == "chain"))
            else:
                one, axis = _part(kind, m)
                found.append((m.start(), m.end(), one, axis, False))
    found.sort(key=lambda f: f[0])
    found = every_other_well(text, found)
    sets: list[WellSet] = []
    for start, end, written, axis, chain in found:
        parts: tuple[Part, ...] = written if isinstance(written, tuple) else (written,)
        prev = sets[-1] if sets else None
        if prev and every_other_in(
            prev.parts, prev.axis, prev.text, parts, axis, text[prev.end : start]
        ):
            sets[-1] = WellSet(  # "every other column, columns 2-12": alternate columns of 2-12
                (alternate_in(prev.parts[0], parts[0]),),
                prev.start, end, text[prev.start : end], False, prev.axis or axis,
            )  # fmt: skip
            continue
        if (
            sets
            and len(parts) == 1
            and parts[0].kind == "other"
            and not sets[-1].chain
            and sets[-1].axis != axis  # "column 2 in every other column of X": another set
            and _THEN_ALTERNATE.match(text[sets[-1].end : start])
            and re.match(r"every|alternat", text[start:end], _FLAGS)
        ):
            prev = sets[-1]  # "A1-P1 every other row": alternate wells of that set
            sets[-1] = WellSet(
                (Part("alternate", (prev.parts, None)),), prev.start, end, text[prev.start : end]
            )
            continue
        if sets and not chain and _EXCEPT.match(text[sets[-1].end : start]):
            prev = sets[-1]  # "every well except H12": the set without those wells
            sets[-1] = WellSet(
                (Part("minus", (prev.parts, parts)),), prev.start, end, text[prev.start : end],
                False, prev.axis,
            )  # fmt: skip
            continue
        if (
            sets
            and axis
            and sets[-1].axis
            and axis != sets[-1].axis
            and _CROSS.match(text[sets[-1].end : start])
        ):
            prev = sets[-1]  # "column 24, rows A to P": the wells where they cross
            sets[-1] = WellSet(
                (Part("cross", (prev.parts, parts)),), prev.start, end, text[prev.start : end]
            )
            continue
        if (
            sets
            and not chain
            and not sets[-1].chain
            and _joined(text, sets[-1].text, sets[-1].end, start, end)
            and not _starts_a_pair(text, sets[-1].start, end)
        ):
            prev = sets[-1]
            sets[-1] = WellSet(
                prev.parts + parts, prev.start, end, text[prev.start : end], False,
                prev.axis if prev.axis == axis else None,
            )  # fmt: skip
            continue
        sets.append(WellSet(parts, start, end, text[start:end], chain, axis))
    # "all but the last of plate_1": an exception not understood leaves no set (-> a question)
    sets = left_out(sets, text)
    return [s for s in sets if not (s.whole_plate and _BUT_AFTER.match(text[s.end :]))]


def left_out(sets: list[WellSet], text: str) -> list[WellSet]:
    """``sets`` with each set said to be left out taken from the set before it or from the
    whole plate (see :func:`._left_out.fate`)."""
    out: list[WellSet] = []
    for s in sets:
        prev = out[-1] if out else None
        said = fate(text, prev.end if prev else None, s.start, s.end, s.whole_plate)
        if prev and said == "from_before":
            part = Part("minus", (prev.parts, s.parts))
            out[-1] = WellSet(
                (part,), prev.start, s.end, text[prev.start : s.end], False, prev.axis
            )
        elif said == "from_plate":
            part = Part("minus", ((Part("all"),), s.parts))
            out.append(WellSet((part,), s.start, s.end, text[s.start : s.end], False, None))
        else:
            out.append(s)
    return out


def every_plate_well(text: str, plates: list[tuple[int, int]]) -> list[WellSet]:
    """'into every seedlings24 well', 'each plate_2 well': all the wells of that plate (a
    liquid's name there - 'every dna well' - is the wells holding it, never this)."""
    return [WellSet((Part("all"),), s, e, text[a:b]) for s, e, a, b in whole_plates(text, plates)]


def well_count(text: str) -> int | None:
    """A number of wells written out ('400 wells', 'all 96 wells')."""
    m = _WELL_COUNT.search(text)
    return int(m.group(1)) if m else None


def examples(rows: int, cols: int) -> list[str]:
    """Valid selections to offer when a request names no wells."""
    last = f"{row_letter(rows - 1)}{cols}"
    return ["A1", f"A1:A{cols}", "row A", "column 1", f"A1:{last} (all wells)"]
