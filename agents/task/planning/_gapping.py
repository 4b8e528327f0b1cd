"""Verb gapping: one verb said once for two (place, liquid) pairs joined by "and" ("fill the
odd columns with dye and the even ones with buffer", "add dye to plate_1 and buffer to
plate_2"). The second pair is a clause of its own that borrows the first one's verb, and its
"ones" the first one's noun; read as one clause, the second pair was silently dropped."""

from __future__ import annotations

import re

from agents.task.planning._map_colons import WELL_SPEC

_FLAGS = re.IGNORECASE
_FILL = re.compile(r"^(fill|pre-?fill|load)\b", _FLAGS)
_ADD = re.compile(
    r"^(add|dispense|put|pipette|pipet|transfer|place|distribute|aliquot|deliver)\b", _FLAGS
)
_NOUN = r"(?:columns?|cols?|rows?|ones|wells?|half|[A-Pa-p]\d{1,2})"
_VOLUME = r"\d+(?:\.\d+)?\s*(?:u[lL]|m[lL])"
# "... and the even ones with 100 uL buffer", "... and columns 7-12 with buffer"
_FILL_GAP = re.compile(
    rf"\s+and\s+(?=(?:the\s+)?(?:[\w-]+\s+){{0,3}}?{_NOUN}\b[^,;]{{0,40}}?\bwith\s+"
    rf"(?:{_VOLUME}|[A-Za-z«]))",
    _FLAGS,
)
_WORD = r"(?![A-Pa-p]\d{1,2}\b)(?!the\b|it\b|them\b|then\b)[A-Za-z«][\w%»/.-]*"
# "... and buffer to the even ones", "... and 50 uL of water into column 2"
_ADD_GAP = re.compile(
    rf"\s+and\s+(?=(?:{_VOLUME}\s+(?:of\s+)?)?(?:{_WORD}\s+){{1,3}}?(?:to|into)\s+\S)", _FLAGS
)
# "add 100 uL dye to column 1, buffer to column 2", "dye into column 1, buffer into the rest":
# after a comma, a liquid going to a place (the place said as wells, lines or a plate's id)
_PLACE = (
    r"(?:[A-Pa-p]\d{1,2}\b|(?:columns?|cols?|rows?|wells?|every|each|all|both|rest|remaining|"
    r"other|remainder)\b|[A-Za-z][\w-]*(?:_|\d)[\w-]*)"
)
_COMMA_GAP = re.compile(  # (never ", well to well": how the wells pair up)
    r"\s*,\s*(?:and\s+)?(?!(?:wells?|columns?|cols?|rows?|plates?|quadrants?|lines?)\s+(?:to|into)\b)"
    rf"(?=(?:{_VOLUME}\s+(?:of\s+)?)?(?:{_WORD}\s+){{1,3}}?(?:to|into)\s+"
    rf"(?:the\s+)?{_PLACE})",
    _FLAGS,
)
# "dye into column 1, ...": a list of (liquid, place) pairs with no verb at all (never
# "Normalise to 4 nM, ...": a level, not a place)
_VERBLESS = re.compile(
    rf"^(?:{_VOLUME}\s+(?:of\s+)?)?(?:{_WORD}\s+){{1,3}}?(?:to|into)\s+(?![\d.~])\S", _FLAGS
)
# "bring column 1 to 50 uL with water and column 2 to 70 uL": a second (wells, level) pair
_TOPS = re.compile(r"^(?:top[\s-]*(?:up|off)|bring|make\s+up|q\.?s\.?|fill\s+up)\b", _FLAGS)
_LEVEL_GAP = re.compile(
    r"(?:\s*,\s*(?:and\s+)?|\s+and\s+)(?=(?:the\s+)?(?:[\w-]+\s+)?(?:[A-Pa-p]\d{1,2}|columns?|cols?|"
    rf"rows?|wells?)\b[^,;]{{0,30}}?\bto\s+(?:a\s+)?(?:final\s+|total\s+)?{_VOLUME}\b)",
    _FLAGS,
)
_HAS_PLACE = re.compile(r"\b(?:to|into|in|onto)\s+\S", _FLAGS)
_MOVE = re.compile(r"^(pool|combine|consolidate|merge|transfer|move|pipette|pipet)\b", _FLAGS)
# "pool P A1-A4 into Q A1 (10 uL each) and P B1-B4 into Q B1": a second source -> destination
_PAIR_GAP = re.compile(
    rf"(?:\s*,\s*(?:and\s+)?|\s+and\s+)(?=(?:{_VOLUME}\s+(?:of\s+|from\s+)?)?(?:from\s+)?"
    r"(?!the\b|then\b)[A-Za-z][\w-]*\s+[A-Pa-p]\d{1,2}\b[^,;]{0,40}?(?:\binto\b|\bto\b|->)\s*\S)",
    _FLAGS,
)
_MOVED = re.compile(r"(?:\binto\b|\bto\b|->)\s*[\w-]+\s+[A-Pa-p]\d{1,2}\b", _FLAGS)


# "Copy columns 1-6 of X to Y and columns 7-12 to Z": a second (wells, plate) pair of the copy
_COPY = re.compile(r"^(copy|stamp|replicate|duplicate|transfer|move)\b", _FLAGS)
_LINES = r"(?:columns?|cols?|rows?)\s+[^,;]{1,24}?"
_COPY_GAP = re.compile(rf"\s+and\s+(?={_LINES}\s+(?:to|into|onto)\s+\S)", _FLAGS)
_COPY_OF = re.compile(rf"^\S+\s+{_LINES}\s+of\s+(?P<src>\S+)\s+(?:to|into|onto)\s+\S", _FLAGS)


# "A1-A3 DMSO 10 uL, B1-B3 DPBS 10 uL": a plate map's items, each wells with a liquid and
# its volume (either order); read as one clause, the first liquid went into every item's wells
_LIQ = rf"(?:(?!{_VOLUME}\b)[^\s,;]+\s+){{0,3}}?(?!{_VOLUME}\b)[A-Za-z][^\s,;]*"
_ITEM = re.compile(
    rf"{WELL_SPEC}\s*[:=]?\s+(?:{_LIQ}\s*[:=,]?\s+{_VOLUME}|{_VOLUME}\s+(?:of\s+)?{_LIQ})"
    r"(?:\s+(?:each|per\s+well|/\s*well))?",
    _FLAGS,
)
_ITEM_CUT = re.compile(r"\s*,\s*(?:and\s+)?")


def _map_items(text: str) -> list[str] | None:
    """A plate map's items said after one another with commas, or None."""
    pieces = _ITEM_CUT.split(text.strip(" .;"))
    if len(pieces) < 2 or not all(_ITEM.fullmatch(pc) for pc in pieces[1:]):
        return None
    end = re.search(rf"(?:^|\s){_ITEM.pattern}$", pieces[0], _FLAGS)
    return pieces if end else None


# "Stamp X -> Y (2 uL) and X -> Z (2 uL)": a second plate -> plate pair of the copy
_ARROW_GAP = re.compile(r"(?:\s*,\s*(?:and\s+)?|\s+and\s+)(?=[A-Za-z][\w-]*\s*(?:->|→|=>)\s*\S)")


def gaps(text: str, cleaned: str) -> list[str]:
    """``text`` cut where a second (place, liquid) pair of its verb starts; ``cleaned`` is
    the same text without its lead-ins ("please"), which says the verb."""
    if "," in text and (items := _map_items(text)):
        return items
    arrow = _ARROW_GAP.search(text) if _COPY.match(cleaned) else None
    if arrow is not None and re.search(r"->|→|=>", text[: arrow.start()]):
        return [text[: arrow.start()], text[arrow.end() :]]
    pair = _PAIR_GAP.search(text) if _MOVE.match(cleaned) else None
    first, second = (text[: pair.start()], text[pair.end() :]) if pair else ("", "")
    if pair and _MOVED.search(first) and all(re.search(_VOLUME, t) for t in (first, second)):
        return [text[: pair.start()], text[pair.end() :]]  # (each with its own volume)
    if (
        _COPY.match(cleaned)
        and (cut := _COPY_GAP.search(text))
        and _COPY_OF.search(text[: cut.start()])
    ):
        return [text[: cut.start()], text[cut.end() :]]  # "... and columns 7-12 to Z"
    level = _LEVEL_GAP.search(text) if _TOPS.match(cleaned) else None
    if level is not None and re.search(
        rf"\bto\s+(?:\S+\s+){{0,3}}?{_VOLUME}", text[: level.start()]
    ):
        return [text[: level.start()], text[level.end() :]]  # "... and column 2 to 70 uL"
    if _FILL.match(cleaned):
        rx = _FILL_GAP
    elif _ADD.match(cleaned) or _VERBLESS.match(cleaned):
        rx = _ADD_GAP
        comma = _COMMA_GAP.search(text)
        if comma is not None and _HAS_PLACE.search(text[: comma.start()]):
            rest = text[comma.end() :]  # each pair after it may be followed by another
            return [text[: comma.start()], *gaps(rest, rest)]
    else:
        return [text]
    cut = rx.search(text)
    if cut is None or (rx is _ADD_GAP and not _HAS_PLACE.search(text[: cut.start()])):
        return [text]
    if rx is _FILL_GAP and not re.search(r"\bwith\b", text[: cut.start()], _FLAGS):
        return [text]
    return [text[: cut.start()], text[cut.end() :]]


def borrow(first: str, second: str) -> str:
    """The second pair as a clause of its own: the first's verb, and "ones" said as the
    first's noun ("the even ones" after "the odd columns")."""
    if (tops := _TOPS.match(first)) is not None:  # "... and column 2 to 70 uL": its liquid too
        liquid = re.search(r"\s(?:with|using)\s+[^,;]+?(?=\s+(?:to|and)\b|[,;]|$)", first, _FLAGS)
        with_ = liquid.group(0) if liquid and not re.search(r"\b(?:with|using)\b", second) else ""
        return f"{tops.group(0)} {second}{with_}"
    said = _FILL.match(first) or _ADD.match(first) or _MOVE.match(first) or _COPY.match(first)
    if said is None:
        return second  # a list of pairs with no verb: each is read as the first was
    verb = said.group(1)
    if (of := _COPY_OF.search(first)) and not re.search(r"\bof\b", second, _FLAGS):
        # "... and columns 7-12 to Z": the lines of the plate the first pair copies from
        second = re.sub(
            rf"^({_LINES})\s+(to|into|onto)\b",
            rf"\1 of {of['src']} \2",
            second,
            count=1,
            flags=_FLAGS,
        )
    noun = re.search(r"\b(columns|cols|rows|wells)\b", first, _FLAGS)
    if noun:
        second = re.sub(r"\bones\b", noun.group(1), second, flags=_FLAGS)
    return f"{verb} {second}"


# "top up samples A1 to 150 uL, then dna_plate A1 to 60 uL": wells and a level, no verb
_LEVEL_ONLY = re.compile(
    r"^(?!(?:top|bring|make|fill|add|q\.?s)\b)[^;]*?\bto\s+(?:a\s+)?(?:final\s+|total\s+)?"
    rf"(?:volume\s+of\s+)?{_VOLUME}\b(?![^;]*\d\s*(?:u[lL]|m[lL])\b)",
    _FLAGS,
)


def carried(first: str, second: str) -> str:
    """The second piece with the first's top-up verb when it says only wells and a level (the
    verb said once for both); else as it is."""
    return f"top up {second}" if _TOPS.match(first) and _LEVEL_ONLY.match(second) else second
