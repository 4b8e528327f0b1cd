"""Several liquids in one clause, each with its volume: one transfer per pair.

"Dilute 10 uL of media with 90 uL PBS in plate_a A1", "add 5 uL dye and 45 uL buffer to A1",
"q384 A1-A4: 10 uL master mix, 2 uL primer mix, 8 uL water", and under a heading naming the
wells, "30 uL buffer, 10 uL dye": each pair is read as a clause of its own, in the order
written (a dilution puts the diluent in first and mixes the stock in).
"""

from __future__ import annotations

import re
from dataclasses import replace
from itertools import pairwise

from agents.task.planning._frames import Frame
from agents.task.planning._lexicon import Lexicon
from agents.task.planning._normalise import Normalised
from agents.task.planning._reading import _read
from agents.task.planning.families import Family
from agents.task.planning.families._pairing import start as _start
from agents.task.planning.families._ratio_parts import is_recipe

_PAIR_GAP = re.compile(r"\s*(?:of\s+)?(?:the\s+)?(?:fresh\s+)?$", re.IGNORECASE)


_SERIES = re.compile(r"\bserial|\bseries\b|\btitrat|\bstandards\b|\bstd\s+curve", re.IGNORECASE)
_DEST_PHRASE = re.compile(r"\b(?:to|into|in|onto)\s+(?=\S)", re.IGNORECASE)
_JOINED = re.compile(
    r"(?P<dest>\s+(?:to|into|in|onto)\s+[^,;]+?)?\s*,?\s*(?:and\s+(?:also\s+)?|with\s+|plus\s+|"
    r"along\s+with\s+|together\s+with\s+|as\s+well\s+as\s+|[&+]\s*)",
    re.IGNORECASE,
)


# The wells first, then what goes into them: "q384 A1-A4: ...", "A1-A4 get ...", "Into A1: ..."
_PLACE_FIRST = re.compile(
    r"\s*(?:(?:add|put|dispense|pipette)\s+)?(?:(?:in)?to\s+|for\s+(?:each\s+(?:of\s+)?)?)?"
    r"(?P<place>[\w\s,:-]*?[A-Pa-p]\d{1,2}[\w\s,:-]*?|[\w-]+)\s*"
    r"(?::|\bgets?\b|\breceives?\b|\bneeds?\b|,\s*add\b|\badd\b)\s*(?:each\s*)?(?:with\s+)?",
    re.IGNORECASE,
)
_OWN_SOURCE = re.compile(
    r"\s*(?P<src>from\s+(?:(?!\b(?:in|on)?to\b|->)[^,;])+?)\s*(?:(?:in)?to\s+(?:the\s+|each\s+of\s+the\s+)?(?:matching|same|"
    r"corresponding|respective)\s+wells?|(?:in)?to\s+each(?:\s+(?:one|of\s+them|well))?)?\s*[.]?",
    re.IGNORECASE,
)
_BARE_HEAD = re.compile(r"\s*(?:(?:add|put|dispense|pipette)\s+)?", re.IGNORECASE)
_LISTED = re.compile(r"\s*(?:,|\+|&|\band\b|\bplus\b|,\s*and\b|;)\s*", re.IGNORECASE)


def split_pairs(
    read_in: list[tuple[Frame | None, Family | None]], lex: Lexicon, norm: Normalised
) -> list[tuple[Frame | None, Family | None]]:
    """ "Dilute 10 uL of media with 90 uL PBS in plate_a A1", "add 5 uL dye and 45 uL buffer
    to A1": one transfer per volume and liquid, read as clauses of their own (a dilution puts
    the diluent in first and mixes the stock in)."""
    out: list[tuple[Frame | None, Family | None]] = []
    for frame, family in read_in:
        if (
            frame is None
            or (family is not None and family.name not in ("transfer", "dilution"))
            or is_recipe(frame.ents)  # "1+100 (10 uL serum + 1000 uL diluent)": one dilution
        ):
            out.append((frame, family))
            continue
        text = frame.text
        pairs = []
        for m in frame.ents.liquids:
            q = next(
                (
                    q
                    for q in frame.ents.quantities
                    if q.kind == "volume"
                    and q.end <= m.start
                    and _PAIR_GAP.fullmatch(text[q.end : m.start])
                ),
                None,
            )
            if q is not None:
                pairs.append((q, m))
        dest = (
            [d for d in _DEST_PHRASE.finditer(text) if d.start() > pairs[-1][1].end]
            if pairs
            else []
        )
        # "put 30 uL buffer in A1 with 10 uL dye", "fill A1 with 50 uL buffer plus 20 uL dye"
        between = (
            _JOINED.fullmatch(text[pairs[0][1].end : pairs[1][0].start])
            if len(pairs) == 2
            else None
        )
        listed = (  # "10 uL master mix, 2 uL primer mix, 8 uL water" and nothing after
            len(pairs) > 1
            and not dest
            and not text[pairs[-1][1].end :].strip(" .")
            and all(_LISTED.fullmatch(text[a[1].end : b[0].start]) for a, b in pairwise(pairs))
        )
        # "q384 A1-A4: 10 uL master mix, ...": the wells first, then what goes into them
        first = _PLACE_FIRST.fullmatch(text[: pairs[0][0].start]) if listed else None
        # "PCR1 A1-A3: 18 uL mix, 2 uL cDNA from cDNA_plate A1-A3 into the matching wells":
        # the last liquid's own source, and every liquid into the wells said first
        own = (
            _OWN_SOURCE.fullmatch(text[pairs[-1][1].end :])
            if len(pairs) > 1
            and all(_LISTED.fullmatch(text[a[1].end : b[0].start]) for a, b in pairwise(pairs))
            else None
        )
        if own is not None and (placed := _PLACE_FIRST.fullmatch(text[: pairs[0][0].start])):
            first, dest = placed, []
        # under "Into plate_1 B1-B4:", "30 uL buffer, 10 uL dye": each to the heading's wells
        bare = listed and not frame.places and _BARE_HEAD.fullmatch(text[: pairs[0][0].start])
        if (
            len(pairs) < 2
            or len(pairs) != len(frame.ents.liquids)
            or len({m.name for _, m in pairs}) != len(pairs)
            or len(frame.ents.quantities) != len(pairs)
            or not (dest or between or first or bare)
            or (family is None and not bare)
            or (
                not between
                and any(pairs[0][1].end < _start(pl) < pairs[-1][0].start for _, pl in frame.places)
            )
            # "... to I1-I4 9) 5 uL water to J1-J4": a place between the pairs is no shared one
            or (  # "Serial dilution: 20 uL dye into 180 uL buffer, A1 to A6": a step, not two adds
                len(pairs) == 2
                and re.fullmatch(r"\s+in(?:to)?\s+", text[pairs[0][1].end : pairs[1][0].start])
                and _SERIES.search(f"{frame.clause.label or ''} {text}")
            )
        ):
            out.append((frame, family))
            continue
        head, tail = text[: pairs[0][0].start], text[pairs[-1][1].end :]
        if first is not None:
            head, tail = "add ", f" to {first.group('place').strip()}"
        elif bare:
            head, tail = "add ", ""
        if not dest and between is not None:
            tail = (
                f" {between.group('dest').strip()}{tail}".rstrip()
                if between.group("dest")
                else tail
            )
        diluting = bool(re.match(r"^dilute\b", head, re.IGNORECASE))
        if diluting:
            head = "add " + head[len("dilute") :].lstrip()
        order = list(reversed(pairs)) if diluting else pairs
        pieces = []
        for i, (q, m) in enumerate(order):
            mix = ", mix 3 times" if diluting and i == len(order) - 1 else ""
            said = f"{head}{q.text} of {m.written}{tail}{mix}"
            if own is not None and first is not None:
                src = f" {own.group('src').strip()}" if i == len(order) - 1 else ""
                said = f"add {q.text} of {m.written}{src} to {first.group('place').strip()}"
            pieces.append(_read(replace(frame.clause, text=said), lex, norm.quoted))
        if any(f is None or fam is None or fam.name != "transfer" for f, fam in pieces):
            out.append((frame, family))
            continue
        out.extend(pieces)
    return out
