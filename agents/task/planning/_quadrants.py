"""The quadrants of a 384-well plate a request names: "quadrant 2", "Q2 of", "quadrants 1 and 3",
"Q1-Q4", "all four quadrants", "the first quadrant", "the top-left quadrant"."""

from __future__ import annotations

import re

from agents.task.planning._wellpatterns import _numbers

_FLAGS = re.IGNORECASE

# a later number of a list is no volume ("Q3, 1.5 uL/well", "Q2, 1 uL")
_QNUM = r"[1-4](?![.\d])(?!\s*(?:[uµμm]l|micro)\b)"
_QLIST = rf"[1-4](?:\s*(?:-|to|,|and|&)\s*(?:Q\s*)?{_QNUM})+"
_ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4}
_ORDINALS |= {"4th": 4, "one": 1, "two": 2, "three": 3, "four": 4}
# Corners name the interleaved quadrants the way the 8-channel head reaches them: top-left
# starts at A1, top-right at A2, bottom-left at B1, bottom-right at B2.
_STARTS = {"A1": 1, "A2": 2, "B1": 3, "B2": 4}
_CORNERS = {("top", "left"): 1, ("top", "right"): 2, ("bottom", "left"): 3, ("bottom", "right"): 4}
QUADRANTS = re.compile(
    rf"\b(?P<all>(?:all|every|each)\s+(?:(?:the\s+)?(?:four|4)\s+)?quadrants?|(?:four|4)\s+quadrants)\b"
    rf"|\bquadrants?\s*#?\s*(?P<list>{_QLIST}|[1-4])\b|\bQ(?P<q>{_QLIST}|[1-4](?=\s+(?:of|on)\b))\b"
    r"|\b(?P<ord>first|1st|second|2nd|third|3rd|fourth|4th)\s+quadrant\b"
    r"|\bquadrant\s+(?P<word>one|two|three|four)\b"
    r"|\bquadrant\s+(?:starting\s+(?:at|with|from)\s+|at\s+)?(?P<start>[AB][12])\b(?!\s*[-:–])"
    r"|\b(?P<v>top|upper|bottom|lower)[\s-]*(?P<h>left|right)(?:[\s-]+hand)?\s+quadrant\b",
    _FLAGS,
)
_BARE_Q = re.compile(r"(?<!well\s)(?<!wells\s)\bQ(?P<q>[1-4])\b(?!\s*(?:u[lL]|m[lL]))", _FLAGS)
# A bare "Q1" is a quadrant only where wells are copied from somewhere ("from cmpd A1-H12 into
# assay Q2", "src -> assay Q3"); "add water to assay Q1" names a well (row Q: on no 384 plate).
_COPIED = re.compile(
    r"\bfrom\b|->|→|=>|^(?:copy|replicate|duplicate)\b|\b(?:stamp\w*|reformat\w*)\b", _FLAGS
)


# "well Q1 of tox_384", "wells A1 and Q1 of tox_384": "Q1" written as a well (row Q, on no
# plate: refused for the plate's size), never a quadrant
_AS_WELL = re.compile(r"(?:\bwells?\s+|\b[A-Za-z]\d{1,2}\s*(?:,|&|\band\b|\bor\b)\s*)$", _FLAGS)


def _matches(text: str) -> list[re.Match[str]]:
    found = [m for m in QUADRANTS.finditer(text) if not _AS_WELL.search(text[: m.start()])]
    if not found and _COPIED.search(text):
        found = list(_BARE_Q.finditer(text))
    return found


def quadrant_spans(text: str) -> list[tuple[int, int]]:
    """Where ``text`` names quadrants (not wells)."""
    return [m.span() for m in _matches(text)]


def quadrants(text: str) -> list[int]:
    """The quadrants a text names, in order (none: [])."""
    found_all = _matches(text)
    m = found_all[0] if found_all else None
    if m is None:
        return []
    found = m.groupdict()
    if found.get("all"):
        return [1, 2, 3, 4]
    if found.get("ord") or found.get("word"):
        return [_ORDINALS[(found.get("ord") or found["word"]).lower()]]
    if found.get("start"):  # "quadrant A2": the one whose first well is A2
        return [_STARTS[found["start"].upper()]]
    if found.get("v"):
        v = "top" if found["v"].lower() in ("top", "upper") else "bottom"
        return [_CORNERS[v, found["h"].lower()]]
    said = found.get("list") or found["q"]
    return list(dict.fromkeys(_numbers(re.sub(r"Q\s*", "", said, flags=_FLAGS))))
