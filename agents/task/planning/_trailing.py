"""A list's plates said after its items: "A1 -> B2 2 uL", "C4 -> B3 4 uL", then "(from
cmpd_src to daughter)". The last line is the list's heading, said late: it is read first, as
a heading, so the items take their source and destination plates from it."""

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
