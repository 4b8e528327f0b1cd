"""A list's plates said once for all its items.

After the items: "A1 -> B2 2 uL", "C4 -> B3 4 uL", then "(from cmpd_src to daughter)". The last
line is the list's heading, said late: it is read first, as a heading, so the items take their
source and destination plates from it.

On the first item: "gDNA_P07 A1 4 uL -> A12; B1 2.5 uL -> B12; C1 10 uL -> C12". The plate
written before the first pair's well is the source plate of the pairs after it that name none
(and a plate written before its destination well, their destination plate).
"""

from __future__ import annotations

import re
from dataclasses import replace

from agents.task.planning._frames import Frame
from agents.task.planning._lexicon import Lexicon
from agents.task.planning._normalise import Normalised
from agents.task.planning._reading import Read, _read

_FROM_TO = re.compile(
    r"^\(?\s*(?:(?:all|everything|each|these|picks?)\s+)?(?:(?:are|is|go(?:es)?)\s+)?"
    r"(?:from|source\s*[:=]?)\s+\S+\s*,?\s*(?:to|into|onto|->|dest(?:ination)?\s*[:=]?)\s+\S+\s*\)?$",
    re.IGNORECASE,
)


# "source: X, destination: Y" said as the roles' own words: "from X to Y"
_SAID_AS = re.compile(r"\bsource\s*[:=]?\s*|\s*,?\s*\b(dest(?:ination)?)\s*[:=]?\s*", re.IGNORECASE)


def _plateless_item(frame: Frame | None) -> bool:
    return frame is not None and bool(frame.ents.wellsets) and not frame.ents.labware


def trailing_plates(read_in: Read, lex: Lexicon, norm: Normalised) -> Read:
    """``read_in`` with a closing "(from X to Y)" read first, as the heading of its items."""
    if len(read_in) < 2:
        return read_in
    last = read_in[-1][0]
    if (
        last is None
        or not _FROM_TO.match(last.text)
        or len({m.name for m in last.ents.labware if m.sure}) != 2
        or last.ents.wellsets
        or last.ents.volumes()
        or not all(_plateless_item(f) for f, _ in read_in[:-1])
    ):
        return read_in
    text = _SAID_AS.sub(lambda m: " to " if m.group(1) else "from ", last.clause.text)
    heading = _read(replace(last.clause, text=text, heading=True), lex, norm.quoted)
    return [heading, *read_in[:-1]] if heading[1] is not None else read_in


# "gDNA_P07 A1 4 uL -> A12", "B1 2.5 uL -> B12", "8 uL from C3 into B2": one written pair
_PAIR_ITEM = re.compile(
    r"^(?:(?:then|and|also|take|move|transfer|pipette|add|put|pick|dispense)\s+)*"
    r"(?:[\d.]+\s*[um]L\s+(?:(?:of|from)\s+)?)?(?:(?!(?:of|from)\b)(?P<src>[\w-]+)\s+)?"
    r"(?:well\s+)?(?P<a>[A-Pa-p]\d{1,2})\s*,?\s*(?:[\d.]+\s*[um]L\s*)?"
    r"(?:->|\binto\b|\bto\b)\s*(?:(?P<dst>[\w-]+)\s+)?(?:well\s+)?(?P<b>[A-Pa-p]\d{1,2})"
    r"\s*,?\s*(?:(?:[\d.]+\s*[um]L)(?:\s+(?:each|apiece))?)?\s*$",
    re.IGNORECASE,
)


def first_item_plates(read_in: Read, lex: Lexicon, norm: Normalised) -> Read:
    """``read_in`` with the plates named on a list's first pair given to the pairs right after
    it (under the same label, if any) that name none."""
    out: Read = []
    src = dst = None
    label: str | None = None
    for frame, family in read_in:
        m = _PAIR_ITEM.match(frame.clause.text) if frame is not None and family else None
        if frame is None or m is None:
            src = dst = None
        elif m["src"] or m["dst"]:
            src, dst = _plate(m["src"], lex), _plate(m["dst"], lex)
            label = frame.clause.label
        elif (src or dst) and frame.clause.label == label:
            text = frame.clause.text
            if dst:
                text = f"{text[: m.start('b')]}{dst} {text[m.start('b') :]}"
            if src:
                text = f"{src} {text}"
            carried = _read(replace(frame.clause, text=text), lex, norm.quoted)
            if carried[0] is not None and carried[1] is not None:
                frame, family = carried
        out.append((frame, family))
    return out


def _plate(word: str | None, lex: Lexicon) -> str | None:
    return lex.labware.get(word.lower()) if word else None
