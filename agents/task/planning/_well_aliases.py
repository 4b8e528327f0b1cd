"""Wells given names of their own, as kit inserts do: "Label wells A1-G1 of elisa_p1 as S1-S7.
Pipette 150 uL diluent into S2-S7 ..." names A1..G1 S1..S7; the labelling sentence goes (it is
no work) and each name after it is written as its well, the first one with the plate the
labelling named. Only names given to a straight line of wells, one each. Pure text."""

from __future__ import annotations

import re

_FLAGS = re.IGNORECASE
_W = r"[A-Pa-p]\d{1,2}"
_SPAN = r"\s*(?:-|–|to|through|thru)\s*"
_DEF = re.compile(
    rf"(?:(?<=^)|(?<=[.;:\n]))\s*(?:please\s+)?(?:label|call|name|mark|designate)\s+(?:the\s+)?"
    rf"(?:wells?\s+)?(?P<a>{_W}){_SPAN}(?P<b>{_W})(?:\s+(?:of|on|in)\s+(?P<plate>[\w-]+))?\s+"
    rf"(?:as\s+)?(?P<p>[A-Za-z]{{1,3}})(?P<i>\d{{1,2}}){_SPAN}(?P=p)?(?P<j>\d{{1,2}})\s*[.;]?",
    _FLAGS,
)


def _line(a: str, b: str) -> list[str]:
    """The wells from ``a`` to ``b`` along their row or column ([] when neither)."""
    (ra, ca), (rb, cb) = (ord(a[0].upper()), int(a[1:])), (ord(b[0].upper()), int(b[1:]))
    if ra == rb:
        step = 1 if cb >= ca else -1
        return [f"{chr(ra)}{c}" for c in range(ca, cb + step, step)]
    if ca == cb:
        step = 1 if rb >= ra else -1
        return [f"{chr(r)}{ca}" for r in range(ra, rb + step, step)]
    return []


def named_wells(text: str) -> str:
    """``text`` with wells named in a labelling sentence written as the wells themselves."""
    if not re.search(r"\b(?:label|call|name|mark|designate)\b", text, _FLAGS):
        return text
    m = _DEF.search(text)
    if m is None:
        return text
    wells, first, last = _line(m["a"], m["b"]), int(m["i"]), int(m["j"])
    if len(wells) != last - first + 1 or first > last:
        return text
    names = {f"{m['p'].upper()}{first + k}": w.upper() for k, w in enumerate(wells)}
    plate = f"{m['plate']} " if m["plate"] else ""
    rest = text[: m.start()] + " " + text[m.end() :]
    p = re.escape(m["p"])  # a range of names is written with a dash ("S2-S7"; "S1 to S2": two)
    said = re.compile(rf"\b{p}(\d{{1,2}})\b(?:\s*[-–]\s*{p}?(\d{{1,2}})\b)?", _FLAGS)

    def well(hit: re.Match[str]) -> str:
        nonlocal plate
        a = names.get(f"{m['p'].upper()}{hit[1]}")
        b = names.get(f"{m['p'].upper()}{hit[2]}") if hit[2] else None
        if a is None or (hit[2] and b is None):
            return hit.group(0)
        out, plate = f"{plate}{a}" + (f"-{b}" if b else ""), ""
        return out

    return said.sub(well, rest).strip()
