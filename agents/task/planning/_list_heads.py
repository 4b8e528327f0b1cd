"""List items, and the lines without a colon that head them.

People put the plates of a pick list once, on the line above its items, and often leave the
colon off: "Cherry-pick list, samples to dest_plate" over "- A1 to B2, 5 uL", or
"strain picks ON_cultures -> gc_plate_2" over "A1 -> D5  15ul". Such a line is the heading of
the items under it (their source and destination plates), not a clause of its own.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from agents.task.planning import _social
from agents.task.planning._vocabulary import ACTION_VERBS

if TYPE_CHECKING:  # the clauses are split with this module's help
    from agents.task.planning._clauses import Clause

_FLAGS = re.IGNORECASE
ITEM = re.compile(
    # "E. coli inoculum into ...": a genus initial before its species is no lettered item
    rf"^(?!(?-i:[A-Z])\.\s+(?!(?:{ACTION_VERBS}|then|and)\b)(?-i:[a-z]{{3,}})\b)"
    r"(?:[-*+>]|\(?\d{1,2}(?:\.\)|[.):/])(?!\d)|#\d{1,2}\b|\(?(?:i{1,3}|iv|vi{0,3}|ix|x|[a-z])[.)]\s|\d{1,2}\s+-(?!\s*\d)|(?:step|item)\s*\d{1,2}\s*[:.)-]?)\s*",
    _FLAGS,
)
# "Transfer 5 uL: A1 to H12; B2 to G12": a verb and a volume heading the items after it
VOLUME_HEAD = re.compile(
    # "Cherry-pick (20 uL each): ...": the volume may sit in brackets
    rf"^(?P<head>(?:{ACTION_VERBS})\s+\(?\s*(?:\d+(?:\.\d+)?|\.\d+)\s*(?:u[lL]|m[lL])"
    # "transfer 5 uL crude lysate: A1 -> A1; B1 -> B1": the liquid may come with the volume
    r"(?:\s+(?:of\s+)?(?:(?![A-Pa-p]\d{1,2}\b|(?:to|into|from|in|on|each)\b)[^\s:;,]+\s*?){1,4}?)?"
    # "Transfer 5 uL on plate_1:", "transfer 5 uL within samples, each:": the plate of the items
    r"(?:\s+(?:on|in|within|across|from|to|into)\s+(?:the\s+)?(?![A-Pa-p]\d{1,2}\b)[\w-]+"
    r"(?:\s+(?:to|into)\s+(?:the\s+)?(?![A-Pa-p]\d{1,2}\b)[\w-]+)?)?"
    r"(?:\s*,?\s*(?:each|apiece|per\s+(?:well|pair|pick|transfer)))?\s*\)?)\s*:\s+(?P<body>\S.*)$",
    _FLAGS,
)
HEAD_VERB = re.compile(
    r"^(?:please\s+)?(?:cherry[\s-]?pick|hit[\s-]?pick|pick|re-?array|transfer|move|pool|"
    r"consolidate|spot|plate|copy|stamp|replicate)(?:ing|s)?\b(?=.*(?:\b(?:from|into|to)\b|->))",
    _FLAGS,
)
_WELLISH = re.compile(r"\b[A-Pa-p]\d{1,2}\b")
_VOLUME = re.compile(r"\d\s*(?:u[lL]|ml|mL|microlit|millilit)", _FLAGS)
_EACH_VOLUME = re.compile(r"\d\s*(?:u[lL]|ml|mL)\s+(?:each|per\s+(?:well|pick))\b", _FLAGS)
# "A1 -> D5  15ul", "- SERA1 B2 to A9, 100 uL": a written pair, a well to a well
_PAIR_ENTRY = re.compile(
    r"^(?:[\w-]+\s+)?[A-Pa-p]\d{1,2}\s*(?:[\d.]+\s*[um]l\s*)?(?:->|=>|>|\bto\b|\binto\b)\s*"
    r"(?:[\w-]+\s+)?[A-Pa-p]\d{1,2}\b",
    _FLAGS,
)
_DIRECTION = re.compile(r"->|=>|\b(?:to|into|onto|from)\b", _FLAGS)


def opens_a_list(line: str, after: list[str], names: frozenset[str]) -> bool:
    """A line without its colon that names the plates of the items under it: numbered or
    bulleted items under a pick verb ("Cherry-pick list, samples to dest_plate"), or written
    pairs under a line that names a lab plate and a direction ("strain picks X -> Y")."""
    if not after or not line.strip() or line.rstrip().endswith(":") or ITEM.match(line):
        return False
    if _WELLISH.search(line):
        return False
    nxt = after[0].strip()
    if (
        ITEM.match(nxt)
        and HEAD_VERB.match(_social.LEAD_IN.sub("", line.strip()))
        and not _VOLUME.search(line)
    ):
        return True
    item = ITEM.match(nxt)
    return bool(
        _PAIR_ENTRY.match(nxt[item.end() :] if item else nxt)
        and _DIRECTION.search(line)
        and (not _VOLUME.search(line) or _EACH_VOLUME.search(line))
        and any(w.lower() in names for w in re.findall(r"[\w-]+", line))
    )


# "- SERA1 B2 to A9, 100 uL": an item that is one well "to" another and at most a volume
_ITEM_TO = re.compile(
    r"^(?:(?P<plate>[\w-]+)\s+)?(?:well\s+)?(?P<a>[A-Pa-p]\d{1,2})\s+to\s+(?:well\s+)?"
    r"(?P<b>[A-Pa-p]\d{1,2})(?P<rest>\s*,?\s*(?:(?:\d+(?:\.\d+)?|\.\d+)\s*(?:u[lL]|m[lL])"
    r"(?:\s+(?:each|apiece))?)?\s*)$",
    _FLAGS,
)
_INTO_PLATE = re.compile(r"(?:->|=>|\b(?:to|into|onto)\b)\s+(?:the\s+)?([\w-]+)", _FLAGS)


_PICKS = re.compile(
    r"\b(?:cherry|hit|pick|picks|picking|re-?array|retests?|repicks?|repeats?|re-?runs?)", _FLAGS
)
_HEAD_LINE = re.compile(r"\b(?:col(?:umn)?s?\s*(\d{1,2})|rows?\s+([A-Pa-p])\b)", _FLAGS)


def _run(a: str, b: str) -> bool:
    """Whether "a to b" is a range along one row or one column, written forwards."""
    (r1, c1), (r2, c2) = (a[0].upper(), int(a[1:])), (b[0].upper(), int(b[1:]))
    return (r1 == r2 and c2 > c1) or (c1 == c2 and r2 > r1)


def pairs_under_heading(clauses: list[Clause], names: frozenset[str]) -> list[Clause]:
    """Under a heading that names the destination plate ("Retests -> EIA_plate column 9",
    "from samples into dest_plate"), an item "SERA1 B2 to A9, 100 uL" is a pick, a well to a
    well, not the range B2 to A9: its source plate is named (the item's own, or the heading's
    other plate) and "to" has nowhere else to go. A forward run along a row or a column
    ("samples A1 to A6") stays a range unless the heading says the items are picks."""
    out = []
    for c in clauses:
        m = _ITEM_TO.match(c.text) if c.label and not c.heading else None
        into = _INTO_PLATE.search(c.label or "")
        if m and into and into[1].lower() in names:
            dest = into[1].lower()
            others = {w.lower() for w in re.findall(r"[\w-]+", c.label or "")} & names - {dest}
            plate = (m["plate"] or "").lower()
            line = _HEAD_LINE.search(c.label or "")  # "-> dil_96 column 12" over "A4 to A12"
            within = (line is not None and m["b"].upper()[1:] == line[1]) or (
                line is not None and m["b"].upper()[0] == (line[2] or "").upper()
            )
            run = _run(m["a"], m["b"]) and not within and not _PICKS.search(c.label or "")
            if not run and ((plate in names and plate != dest) or (not plate and others)):
                text = c.text[: m.end("a")] + " ->" + c.text[m.start("b") - 1 :]
                c = replace(c, text=text)
        out.append(c)
    return out


_VOL = r"(?:\s*,?\s*(?:\d+(?:\.\d+)?|\.\d+)\s*(?:u[lL]|m[lL])(?:\s+each)?)?"
_TO_PAIR = rf"[A-Pa-p]\d{{1,2}}\s+to\s+[A-Pa-p]\d{{1,2}}\b{_VOL}"
# "A3 to A1, B7 to A2, H12 to A3": a list of "well to well"
_TO_LIST = re.compile(rf"\b{_TO_PAIR}(?:\s*[,;]\s*(?:and\s+)?{_TO_PAIR})+")
_CELL = re.compile(r"([A-Pa-p])(\d{1,2})\s+to\s+([A-Pa-p])(\d{1,2})")


def to_pairs(text: str) -> str:
    """A list of "well to well" written as picks: a "range" that runs backwards ("B7 to A2")
    or two that overlap ("A1 to B3, A2 to B4") is no range, so every item is a pair, written
    "B7 -> A2" (a list of forward ranges that do not overlap stays ranges)."""

    def pairs(m: re.Match[str]) -> str:
        boxes = []
        for c in _CELL.finditer(m.group(0)):
            r1, c1, r2, c2 = c[1].upper(), int(c[2]), c[3].upper(), int(c[4])
            if r2 < r1 or c2 < c1:
                return _CELL.sub(r"\1\2 -> \3\4", m.group(0))
            boxes.append((r1, c1, r2, c2))
        for i, a in enumerate(boxes):
            for b in boxes[i + 1 :]:
                if a[0] <= b[2] and b[0] <= a[2] and a[1] <= b[3] and b[1] <= a[3]:
                    return _CELL.sub(r"\1\2 -> \3\4", m.group(0))
        return m.group(0)

    return _TO_LIST.sub(pairs, text)
