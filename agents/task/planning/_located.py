"""Where a liquid a clause names already is, said right after its name: "serial dilution of
the cDNA in cDNA_plate H1, 6 points A1-F1" (the cDNA's well, then the points the dilution
runs on), "then extract (same well of EXTRACTS)" (the plate the extract comes from), "(buffer
is in trough_8 A1)" (which of the liquid's places is meant)."""

from __future__ import annotations

import re

from agents.task.planning._lexicon import Mention

_FLAGS = re.IGNORECASE
_SAME_OF = re.compile(r"\(\s*(?:the\s+)?(?:same|matching)\s+wells?\s+(?:of|in|on|from)\s+", _FLAGS)
_SERIES_OF = re.compile(r"\b(?:dilutions?|series)\s+of\s+(?:the\s+)?$", _FLAGS)
_FROM_OF = re.compile(r"\bfrom\s+(?:the\s+)?$", _FLAGS)
_IN = re.compile(r"\s+in\s+", _FLAGS)
# "Back-dilute 1:100 into 1 mL of broth: cultures A1-H1 into cultures A5-H5": after the colon
# a place then "into" starts over; that place is what is moved, not the first "into"'s target
_RESTART = re.compile(r":\s+(?=[^:;,]*?(?:\s(?:into|to|onto)\s|\s?->\s?))", _FLAGS)
# "from each of the 8 samples in column 5 of SERA1": the words after "from" describe the wells
# the place after "in" names (what is taken), not where it goes; after wells ("from each of
# lysate_dw A1-A4 in pool_dw B1") the place after "in" is where they go
_FROM_THE_IN = re.compile(
    r"\bfrom\s+(?:each\s+of\s+|all\s+(?:of\s+)?|both\s+(?:of\s+)?)?(?:the\s+|these\s+|those\s+)?"
    r"(?:(?!(?:to|into|onto|and|then)\b|[A-Pa-p]\d{1,2}\b)[\w-]+\s+){1,3}?(?:in|on)\s+",
    _FLAGS,
)
# "in wells H2-H8 on plate_1", "in every other well of row A on X", "in the odd wells of
# column 2 on X": only wells between "in" and "on", so "on" says whose they are
_ONLY_WELLS = re.compile(
    r"(?:\s|\bthe\b|\bwells?\b|\brows?\b|\bcol(?:umn)?s?\b|\band\b|\bto\b|\bthrough\b"
    r"|\b(?:every|other|second|2nd|alternat(?:e|ing)|odd|even|numbered|of|all|each)\b"
    r"|\b[A-Pa-p]\d{0,2}\b|\b\d{1,2}\b|[-–,:])*",
    _FLAGS,
)


def places_after(dests: list[re.Match[str]], at: re.Match[str], text: str) -> list[re.Match[str]]:
    """The place words after ``at`` that start a place of their own: not the "on" of "in
    wells H2-H8 on plate_1" (the plate of the wells "in" starts)."""
    return [
        d
        for d in dests
        if d.group(0).lower() != "on" or not _ONLY_WELLS.fullmatch(text, at.end(), d.start())
    ]


def located_cuts(text: str, liquids: list[Mention]) -> list[tuple[int, str]]:
    """(position, role) cuts that make such a place a source: after the same position's
    "dest", "source" sorts last and wins; the place after the next comma is a destination."""
    cuts: list[tuple[int, str]] = []
    for q in liquids:
        m = _IN.match(text, q.end)
        if m is not None and _FROM_OF.search(text[: q.start]):
            cuts.append((m.end(), "source"))  # "from compound stocks in cmpd_src A1"
        if m is None or not _SERIES_OF.search(text[: q.start]):
            continue
        cuts.append((m.end(), "source"))
        if "," in text[m.end() :]:
            cuts.append((text.index(",", m.end()), "dest"))
    cuts += [(m.end(), "head") for m in _RESTART.finditer(text)]
    cuts += [(m.end(), "source") for m in _FROM_THE_IN.finditer(text)]
    for m in _SAME_OF.finditer(text):
        if any(q.end <= m.start() and not text[q.end : m.start()].strip() for q in liquids):
            cuts.append((m.end(), "source"))
    return cuts


# "buffer is in", "the dye (which is) kept in": the liquid's place said, never where it goes
_IS_IN = re.compile(
    r"\s+(?:is|are|sits?|lives?)\s+(?:still\s+|already\s+|kept\s+|stored\s+)?", _FLAGS
)
_ONE_IN = re.compile(r"\b(?:the|that)\s+one\s+(?:that\s+is\s+|which\s+is\s+|kept\s+)?$", _FLAGS)


def kept_in(text: str, at: int, liquids: list[Mention], after: list[Mention]) -> bool:
    """The "in" at ``at`` says where a liquid is kept, which of its places is meant: "(buffer
    is in trough_8 A1)", "the one in the reservoir", "... to P (the buffer in trough_8)"."""
    if any(_IS_IN.fullmatch(text[q.end : at]) for q in liquids):
        return True
    named_before = [q for q in after if q.end <= at]
    if any(any(o.name == q.name and o.end <= q.start for o in liquids) for q in named_before):
        return True  # the liquid named again, with its place
    return bool(_ONE_IN.search(text[:at])) and any(q.end <= at for q in liquids)
