"""The blank wells of a serial dilution's chains: said after the points ("7 points plus a
blank", "6 standards and 2 blanks"), by place ("the last well is a blank", "the 8th well is the
zero"), named ("A1 to H1 with H1 as the blank") or by what they hold ("..., H12 PBS"). A blank
holds the diluent alone; it is no well of the chain the stock is carried along.
"""

from __future__ import annotations

import re

from agents.task.planning import _resolve as r
from agents.task.planning._frames import Frame

_FLAGS = re.IGNORECASE

# "7 points plus a blank", "6 standards and 2 blanks", "then two blanks": blanks after the points
_TAIL_BLANKS = re.compile(
    r"(?:\b(?:plus|and|with|then|followed\s+by)|\+|,)\s+(?:(a|an|one|two|three|four|\d)\s+)?"
    r"(?:0\s*(?:[pnuµm]?g\s*/\s*[mµu]?l\s+)?(?=blank))?"  # "..., 31.25 ug/mL and a 0 blank"
    r"(?:(?!the\b|no\b|[A-Pa-p]\d{1,2}\b|rows?\b|columns?\b|cols?\b|\d)[\w-]+[\s-]+(?:only\s+)?)?"
    r"(?:blanks?|zeros?(?:\s+(?:standards?|stds?|points?|conc\w*))?)\b"  # "7 standards and a zero"
    # (never the zero's word given back: ", zero standard in H2" names its own well)
    r"(?!(?:\s+(?:standards?|stds?|points?|conc\w*))?\s*(?:in|at|=|:|wells?\b|[A-Pa-p]\d|rows?\b"
    r"|columns?\b|cols?\b)"
    r"|\s+of\b[^,;.]*?\b[A-Pa-p]\d{1,2}\b)",  # "plus a blank of 10 uL IDTE in H6": its own well
    _FLAGS,
)
_COUNTS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4}


INCL_BLANK = re.compile(
    r"\bincl(?:uding|udes|uded|\.)?\s+(?:the\s+|a\s+|one\s+|1\s+)?(?:blank|zero)\b", _FLAGS
)


_NTH_BLANK = re.compile(
    r"\b(\d{1,2})(?:st|nd|rd|th)\s+(?:well|one|point|standard|std)\b[^,;.]*?\b(?:blank|zero)\b",
    _FLAGS,
)
_LAST_BLANK = re.compile(
    r"\b(?:the\s+)?last\s+(?:well|one|point|row|column|position)s?\b[^,;.]*?\bblanks?\b"
    r"|\bblanks?\b[^,;.]*?\b(?:in\s+|as\s+|at\s+)?the\s+last\s+(?:well|one|point|row|column|position)\b"
    # "last well buffer only", "the last one gets just diluent": diluent alone, a blank
    r"|\blast\s+(?:well|one|point|position)\s*(?:is\s+|gets\s+|has\s+|holds\s+|=\s*|:\s*)?"
    r"(?:(?:just|only)\s+[\w-]+|(?:[\w-]+\s+){1,3}(?:only|alone))\b",
    _FLAGS,
)


# "last two wells no drug", "the final 2 wells are blanks", "last 2 wells broth only"
_LAST_N_BLANK = re.compile(
    r"\b(?:the\s+)?(?:last|final)\s+(two|three|four|2|3|4)\s+(?:wells?|ones?|positions?)\b"
    r"[^,;.]*?\b(?:blanks?|no[\s-][\w-]+|[\w-]+[\s-]free|(?:[\w-]+\s+)?only|controls?|ctrls?)\b",
    _FLAGS,
)


def last_n_blank(text: str) -> int:
    """How many of a line's last wells are said to be blanks ("last two wells no drug")."""
    m = _LAST_N_BLANK.search(text)
    return 0 if m is None else _COUNTS.get(m.group(1).lower()) or int(m.group(1))


def last_is_blank(text: str) -> bool:
    """ "the last well is a blank", "last well buffer only": the line's last well is a blank."""
    return bool(_LAST_BLANK.search(text))


def blanks_after(frame: Frame) -> int:
    """The blanks after a dilution's points: said ("plus a blank") or a trailing 0 of its
    concentrations ("1000, 500, ... and 0")."""
    said = frame.ents.series.blanks if frame.ents.series else 0
    return tail_blanks(frame.text) or frame.ents.tail or said


def tail_blanks(text: str) -> int:
    """How many blanks follow the points of a dilution along its line (0: none said so)."""
    m = _TAIL_BLANKS.search(text)
    if m is None:
        return 0
    word = (m.group(1) or "a").lower()
    return _COUNTS.get(word) or int(word)


def without_blanks(
    frame: Frame, chains: list[list[str]], plate: str, p: r.Planning
) -> tuple[list[list[str]], list[str]]:
    """The chains without their blank wells, and those blanks (diluent only): the last n wells
    ("7 points plus a blank", "the last well is a blank") and the named blanks at a chain's end
    ("A1 to H1 with H1 as the blank")."""
    view = p.world.labware(plate)
    named = {w for b in p.blanks for w in b.expand(view.rows, view.cols)}
    nth = _NTH_BLANK.search(frame.text)
    last = nth is not None and all(len(c) == int(nth.group(1)) for c in chains)
    n = (
        blanks_after(frame)
        or last_n_blank(frame.text)
        or (1 if _LAST_BLANK.search(frame.text) or INCL_BLANK.search(frame.text) or last else 0)
    )
    kept, blanks = [], []
    for chain in chains:
        inside = next((i for i, w in enumerate(chain) if w in named and i >= 2), None)
        if inside is not None and not n:  # "row C from C1, ..., C8 blank": the curve ends at C8
            chain = chain[: inside + 1]
        body, tail = chain[: len(chain) - n], chain[len(chain) - n :]
        while body and body[-1] in named:
            tail.insert(0, body.pop())
        kept.append(body)
        blanks += tail
    # "A1-A7 with A8 as blank, in duplicate (rows A and B)": each replicate's own blank after it
    after = [_next(c, view.rows, view.cols) for c in kept if len(c) >= 2]
    if len(after) > 1 and any(a in named for a in after):
        blanks += [a for a in after if a is not None and a not in named and a not in blanks]
    return kept, blanks


_WELL_BEFORE = re.compile(r"(?:^|[,;]\s*)([A-Pa-p]\d{1,2})\s*(?:=|:|-|gets)?\s*$", _FLAGS)
_PIECE_END = re.compile(r"\s*(?:only\s*)?(?:[,;.]|$)", _FLAGS)


def diluent_wells(frame: Frame, diluent: str) -> list[str]:
    """Wells a piece of the sentence names with the diluent alone ("..., H12 PBS", "; H1 =
    buffer only"): blanks, though the word is not said."""
    out = []
    for m in frame.liquids:
        before = _WELL_BEFORE.search(frame.text[: m.start])
        if m.name == diluent and before is not None and _PIECE_END.match(frame.text[m.end :]):
            out.append(before.group(1).upper())
    return out


def _next(chain: list[str], rows: int, cols: int) -> str | None:
    """The well after a chain's last one, in the chain's direction (None: off the plate)."""
    (r0, c0), (r1, c1) = ((ord(w[0]) - 65, int(w[1:])) for w in chain[-2:])
    r2, c2 = r1 + (r1 - r0), c1 + (c1 - c0)
    return f"{chr(65 + r2)}{c2}" if 0 <= r2 < rows and 1 <= c2 <= cols else None
