"""Stage 5b of the rule planner: a removal and its refill, read together.

"Aspirate the media to waste and replace with 150 uL fresh medium in cell_plate column 1": the
wells are named once, after both actions, and "replace with" adds (the removal is the clause
before it), so the removal takes the refill's wells and the refill is an addition.
"""

from __future__ import annotations

import re
from dataclasses import replace

from agents.task.planning._frames import Frame
from agents.task.planning._lexicon import Lexicon
from agents.task.planning._normalise import Normalised
from agents.task.planning._reading import _read, _reread
from agents.task.planning.families import Family

_REFILL = re.compile(
    r"^(?:and\s+)?(?:replace|refill|replenish|top\s+(?:up|off))\s+(?:it\s+|them\s+|the\s+wells?\s+)?with\b",
    re.IGNORECASE,
)

Read = list[tuple[Frame | None, Family | None]]


def _place_text(frame: Frame) -> str | None:
    """The text of the first place the clause names ("cell_plate column 1")."""
    for _, place in frame.places:
        spans = [(m.start, m.end) for m in (place.labware, place.wells) if m is not None]
        if spans:
            return frame.text[min(a for a, _ in spans) : max(b for _, b in spans)]
    return None


def refills(read_in: Read, lex: Lexicon, norm: Normalised) -> Read:
    """A placeless removal followed by "replace with ..." that names the wells: both there."""
    out: Read = list(read_in)
    for i in range(len(out) - 1):
        (first, fam), (second, _) = out[i], out[i + 1]
        if (
            first is None
            or second is None
            or fam is None
            or fam.name != "volumes"
            or first.places
            or first.clause.sentence != second.clause.sentence
            or not (m := _REFILL.match(second.text))
            or (where := _place_text(second)) is None
        ):
            continue
        taken = _read(replace(first.clause, text=f"{first.clause.text} from {where}"), lex,
                      norm.quoted)  # fmt: skip
        added = _read(replace(second.clause, text="add" + second.clause.text[m.end() :]), lex,
                      norm.quoted)  # fmt: skip
        if taken[1] is not None and added[1] is not None:
            out[i], out[i + 1] = taken, added
    return out


_FRESH_IN = re.compile(
    r"^(?:and\s+)?(?:(?:add|put(?:\s+back)?|dispense|refill\s+with|replace\s+with|top\s+up\s+with)\s+)?"
    r"(?P<v>(?:\d+(?:\.\d+)?|\.\d+)\s*(?:u[lL]|ml|mL))\s+(?:of\s+)?(?:the\s+)?(?:(?:fresh|new)"
    r"(?:\s+(?P<what>media|medium|[\w-]+(?=\s+(?:in|back)\b)))?\s*(?:in|back(?:\s+in)?|added)?"
    r"|in|back(?:\s+in)?|added)\W*$",
    re.IGNORECASE,
)


_FRESH_ONLY = re.compile(
    r"^(?:and\s+)?(?:replace|refill|replenish|top\s+(?:up|off)|put\s+back|add\s+back)\s+"
    r"(?:it\s+|them\s+|the\s+wells?\s+)?(?:with\s+)?(?:the\s+|some\s+)?(?:fresh|new)"
    r"(?:\s+(?:media|medium))?\W*$",
    re.IGNORECASE,
)
_MEDIUM = re.compile(r"\b(?:media|medium|dmem|rpmi|e?mem|opti-?mem|f-?12|growth)\b", re.I)


def _fresh_in(frame: Frame, prev: Frame) -> tuple[Frame, Family] | None:
    """'120 uL fresh in' after '120 uL out': the lab's one medium into the same wells."""
    if _FRESH_ONLY.match(frame.text) and hasattr(lex := prev.extra.get("lex"), "liquids"):
        media = [n for n in lex.liquids.values() if _MEDIUM.search(n)]  # type: ignore[union-attr]
        if len(media) == 1:  # "... and replace with fresh": the lab's one medium, as much
            return _reread(replace(frame.clause, text=f"replace with {media[0]}"), prev)
    tail = _HOW_TAIL.search(frame.text)  # "(90 uL out, 90 uL fresh in) with the 8-channel"
    said = frame.text[: tail.start()] if tail else frame.text
    m = _FRESH_IN.match(said.rstrip(" )"))
    lex = prev.extra.get("lex")
    if m is None or not hasattr(lex, "liquids"):
        return None
    media = [n for n in lex.liquids.values() if _MEDIUM.search(n)]
    if len(media) != 1:
        return None
    how = tail.group(0) if tail else ""
    if how.lstrip().startswith(")") and prev.ents.channels is None:
        prev.ents.channels = 8  # "(90 uL out, 90 uL fresh in) with the 8-channel": both halves
    return _reread(
        replace(frame.clause, text=f"add {m['v']} {media[0]} to the same wells{how}"), prev
    )


# How the head works, said after the work: "..., using the multichannel", "with 8 channels".
_HOW_TAIL = re.compile(
    r"\)?\s*,?\s*(?:using|with|on|via)\s+(?:the\s+|an?\s+)?(?:8|eight|multi)[\s-]?channel"
    r"(?:\s+(?:head|pipette))?\W*$",
    re.IGNORECASE,
)
