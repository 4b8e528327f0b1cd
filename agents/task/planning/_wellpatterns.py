"""The regular expressions that find well sets in text, one per way people write them (ranges,
arrow chains, progressions, rows, columns, every other, parity, first/last n, edges, whole
plate, single wells), and the joints between sets (joins, intersections)."""

from __future__ import annotations

import re
import string
from dataclasses import dataclass

_FLAGS = re.IGNORECASE


_W = r"(?![xX]\d)[A-Za-z]\d{1,2}"  # "x3" is a count: no plate has a row X
_NOT_UNIT = (
    r"(?!\s*(?:u[lL]|ml|mL|nm|rpm|min|s\b|h\b|C\b|x\b|times|fold|%|-fold|points?\b|pts\b|steps?\b"
    r"|standards?\b|dilutions?\b|replicates?\b|wells\b|cycles?\b"
    r"|-\s*(?:points?|pts|steps?|standards?|stds?|dilutions?|wells?)\b"  # "column 2, 7-point ..."
    r"|[pnuµm]?g\s*/|[pnuµm]m\b|[pnuµ]g\b|[fp]mol\b))"  # "col 1 to 2 ng/uL", "A12 - 50 ng each"
)
_NUM = r"\d{1,2}(?![\d.])" + _NOT_UNIT
_SPAN = (
    r"(?:\s*(?:-|:|~|to|through|thru|until|till|up\s+to|onwards?\s+(?:to|till|until)"
    r"|-\s*(?:to|thru|through)\s*-|\.\.\.?|…)\s*)"
)
_LIST_ELLIPSIS = re.compile(r"\s*,?\s*(?:\.\.\.|…)\s*,?\s*(?:and\s+|to\s+)?")
_LISTJOIN = r"\s*(?:,\s*and\b|,|&|\band\b|\+)\s*"  # "1, 2, and 3": the Oxford comma too
_NUMJOIN = rf"(?:{_LISTJOIN}|\s*\bor\b\s*|\s*,?\s*(?:\.\.\.|…)\s*,?\s*(?:and\s+|to\s+)?)"
# "column 4, 1:2 in TE", "col 3, 1 in 3 down", "col 2, 1+9": a ratio after a comma, never
# column 1 (or 1-2)
_NOT_RATIO = r"(?!1\s*(?::|/|\bin\b|\+)\s*\d)"
_NUMLIST = rf"{_NUM}(?:{_SPAN}{_NUM})?(?:{_NUMJOIN}{_NOT_RATIO}{_NUM}(?:{_SPAN}{_NUM})?)*"
_LETTER = r"[A-Pa-p](?![\w])"
_LETLIST = rf"{_LETTER}(?:{_SPAN}{_LETTER})?(?:{_LISTJOIN}{_LETTER}(?:{_SPAN}{_LETTER})?)*"
_ORDINAL = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6}
_WORDNUM = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
            "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}  # fmt: skip
_COUNTWORD = r"(\d{1,2}|" + "|".join(_WORDNUM) + r")"
_AXIS = r"(?:columns?|cols?|rows?)"
_BUT = r"(?:but|except(?:\s+for)?|other\s+than|apart\s+from|save\s+for|excluding)"
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("chain", re.compile(rf"\b{_W}(?:\s*->\s*(?:\.\.\.|…|{_W}\b)){{2,}}", _FLAGS)),
    # "the four corner wells", "corners", "each corner well", "the 4 corners"
    (
        "corners",
        re.compile(
            r"\b(?:(?:the|all|each|every)\s+)?(?:(?:four|4)\s+)?corner(?:\s+wells?|s)\b"
            # "the corners of the A1-D4 block": the corners of that rectangle
            rf"(?:\s+of\s+(?:the\s+)?({_W})\s*(?:-|:|to)\s*({_W})\b)?",
            _FLAGS,
        ),
    ),
    # "C2, C4 ... C12": the step between the first two wells carried on to the last
    (
        "progression",
        re.compile(
            rf"\b{_W}\s*,\s*{_W}\s*,?\s*(?:\.\.\.|…)\s*,?\s*(?:and\s+|to\s+)?{_W}\b", _FLAGS
        ),
    ),
    ("rect", re.compile(rf"\b({_W}){_SPAN}({_W})\b", _FLAGS)),
    # "A1-12", "row A, wells 1-6", "wells 1-12 of row A", "row B (1-12)": part of one row
    (
        "rowpart",
        re.compile(
            rf"\b(?P<r>[A-Pa-p])(?P<a>\d{{1,2}})\s*(?:-|to|through|thru|\.\.\.?|…)\s*(?P<b>{_NUM})(?![\w:])"
            r"(?!\s*(?:[a-zµ]{1,3}\s*/|[pnuµm]?M\b|u[lL]|µ[lL]|m[lL]|%))"  # "B1 to 20 ng/uL"
            rf"|\brow\s+(?P<r2>[A-Pa-p])\s*(?:,\s*|\(\s*|(?=(?:wells?|columns?|cols?)\s))"
            r"(?:wells?\s+|columns?\s+|cols?\s+)?"
            rf"(?P<a2>\d{{1,2}})\s*(?:-|to|through|thru)\s*(?P<b2>{_NUM})\)?"
            rf"|\bwells?\s+(?P<a3>\d{{1,2}})\s*(?:-|to|through|thru)\s*(?P<b3>{_NUM})\s+(?:of|in|on)\s+row\s+"
            r"(?P<r3>[A-Pa-p])\b",
            _FLAGS,
        ),
    ),
    # "A through D of column 3", "column 3, A-D", "column 3 (A-D)": part of one column
    (
        "colpart",
        re.compile(
            r"\b(?P<x>[A-Pa-p])\s*(?:-|to|through|thru)\s*(?P<y>[A-Pa-p])\s+(?:of|in|on)\s+col(?:umn)?\s+"
            r"(?P<c>\d{1,2})\b"
            r"|\bcol(?:umn)?\s+(?P<c2>\d{1,2})\s*(?:,\s*|\(\s*)(?P<x2>[A-Pa-p])\s*(?:-|to|through|thru)\s*"
            r"(?P<y2>[A-Pa-p])\b\)?"
            # "A-H 1", "A–H 12": rows A to H of one column
            r"|(?<![\w-])(?<!rows\s)(?<!row\s)(?-i:(?P<x3>[A-P])\s*[-–]\s*(?P<y3>[A-P]))\s+(?P<c3>\d{1,2})"
            r"(?![\d.,:]|\s*[-–]\s*\d)" + _NOT_UNIT,
            _FLAGS,
        ),
    ),
    (
        "other",
        re.compile(
            r"\b(?:every\s+(other|second|2nd|third|3rd|fourth|4th)|(alternate|alternating))\s+(columns?|cols?|rows?|ones?\b)"
            r"(?:\s+(?:of|on|in)\s+(?:the\s+)?#+)?(?:\s*,?\s*(?:starting|beginning)\s+(?:with|at|from|in)\s+(?:columns?|cols?|rows?)?"
            r"\s*(\d{1,2}|[A-Pa-p])\b)?",
            _FLAGS,
        ),
    ),
    # "all but the last column", "all columns except the first two": the rest of the plate
    (
        "allbut",
        re.compile(
            rf"\ball\s+(?:the\s+)?(?:(?P<ax1>{_AXIS})\s+)?{_BUT}\s+(?:the\s+)?"
            rf"(?P<end>first|last|top|bottom)(?:\s+(?P<n>{_COUNTWORD[1:-1]}|one))?"
            rf"(?:\s+(?P<ax2>{_AXIS})|\s+ones?)?\b",
            _FLAGS,
        ),
    ),
    # "all columns except 6 and 7", "all rows but H": the rest of the plate
    (
        "allbutlist",
        re.compile(
            rf"\ball\s+(?:the\s+)?(?P<ax>{_AXIS})\s+{_BUT}\s+(?:{_AXIS}\s+)?"
            rf"(?P<list>{_NUMLIST}|{_LETLIST})",
            _FLAGS,
        ),
    ),
    (
        "edge",
        re.compile(
            r"\b(?:the\s+)?(inner|interior|outer|edge|perimeter|border)(?:\s+\d{1,3})?\s+(?:wells|ones)\b"
            r"|\b(?<=the\s)(edges)\b"
            r"|\b(?:each|every)\s+(inner|interior|outer|edge|perimeter|border)\s+well\b"
            r"|\b(?:the\s+)?wells\s+(?:on|around|along)\s+the\s+(edges?|perimeter|outside)\b"
            # "the outer ring", "the outermost wells", "around the perimeter"
            r"|\b(?:the\s+)?(outer)(?:most)?\s+(?:ring|rim|wells)(?:\s+of\s+wells)?\b"
            r"|\b(?<=the\s)(perimeter)\b"
            # "the inner 60", "the interior of plate_2"
            r"|\b(?:the\s+)?(inner|interior|outer)\s+\d{2,3}(?=\s*(?:$|[,;.)]|only\b|(?:of|on|in)\s))"
            r"|\b(?<=the\s)(interior|edge|outside)(?=\s+of\s)",
            _FLAGS,
        ),
    ),
    # "wells 1-24", "wells 1 to 48": wells counted in reading order (A1 = 1, A2 = 2, ...)
    (
        "ordinal",
        re.compile(
            r"(?<!\brow\s[A-Pa-p]\s)(?<!\brow\s[A-Pa-p],\s)\bwells\s+(\d{1,3})\s*(?:-|–|to|through|thru)"
            r"\s*(\d{1,3})\b(?!\s*(?:of|in|on)\s+(?:row|column|col)\b)" + _NOT_UNIT,
            _FLAGS,
        ),
    ),
    ("parity", re.compile(r"\b(odd|even)(?:[-\s]?numbered)?\s+(columns?|cols?|rows?)", _FLAGS)),
    (
        "firstn",
        re.compile(rf"\b(first|last)\s+{_COUNTWORD}\s+(columns?|cols?|rows?)\b", _FLAGS),
    ),
    (
        "nth",
        re.compile(
            r"\b(?:the\s+)?(first|second|third|fourth|fifth|sixth|last|top|bottom|final|"
            r"\d{1,2}(?:st|nd|rd|th))\s+(column|col|row)\b"
            r"(?!\s*(?:\d|[A-Pa-p]\b))",  # "top column 3": the verb "top", then column 3
            _FLAGS,
        ),
    ),
    (
        "rowspan",
        re.compile(
            r"\brows?\s+([A-Pa-p])\s*(?:\s(?:to|through|thru|(?:down|all\s+the\s+way)\s+to)\s|-|->)"
            r"\s*rows?\s+([A-Pa-p])\b"
            # "row A -> H": one arrow to a bare letter is the span (a chain has more arrows)
            r"|\brows?\s+([A-Pa-p])\s*->\s*([A-Pa-p])\b(?!\s*->)"
            # "125 uL diluent in B-H" (under a heading that names the columns): rows B to H
            r"|(?<=\bin\s)([B-Pb-p])\s*[-–]\s*([B-Pb-p])\b(?![\d:])",
            _FLAGS,
        ),
    ),
    (
        "colspan",
        re.compile(
            r"\b(?:columns?|cols?)\s+(\d{1,2})\s*(?:\s(?:to|through|thru|(?:across|along|all\s+the\s+way)"
            r"\s+to)\s|-|->)\s*(?:columns?|cols?)\s+"
            r"(\d{1,2})\b"
            # "column to column from 1 to 4" (how "col 1 -> col 2 -> col 3 -> col 4" reads)
            r"|\bcolumn\s+to\s+column\s+from\s+(\d{1,2})\s+to\s+(\d{1,2})\b"
            # "column 1 -> 12": one arrow to a bare number is the span (a chain has more arrows)
            r"|\b(?:columns?|cols?)\s+(\d{1,2})\s*->\s*(\d{1,2})\b(?!\s*->)",
            _FLAGS,
        ),
    ),
    # "row Q" of a 384-well plate: a row past P is read, so that the plate's size refuses it
    # ("duplicate rows (A and B)": the letters in brackets)
    ("rows", re.compile(rf"\brows?\s+(?:\(\s*)?({_LETLIST}|[Q-WYZq-wyz](?![\w]))", _FLAGS)),
    (
        "rownum",
        re.compile(rf"\brow\s+(?:number\s+|no\.?\s*)?({_NUM})(?!\s*(?:-|to|,|and)\s*\d)", _FLAGS),
    ),
    (  # "row A, 1:2 across 1-8": the columns a row runs across, said as bare numbers
        "cols",
        re.compile(
            rf"(?:\b(?:columns?|cols?)\.?\s*|(?:(?<=\bacross\s)|(?<=\balong\s))"
            rf"(?=\d{{1,2}}\s*-\s*\d{{1,2}}(?![\d.:/])\s*(?:[,;.)]|$|\s+(?:of|on|in|with)\b)))({_NUMLIST})",
            _FLAGS,
        ),
    ),
    (
        "all",
        re.compile(
            r"\b(?:all(?:\s+the)?(?:\s+\d{1,3})?\s+wells|every\s+well|each\s+well\s+(?=(?:of|on|in)\s+(?:the\s+)?#)"
            # "each of the 96 wells of #", "every one of the wells on #"
            r"|(?:each|every\s+one)\s+of\s+the\s+(?:\d{1,3}\s+)?wells(?=\s+(?:of|on|in)\s+(?:the\s+)?#|\s*\(\s*#+\s*\))"
            r"|(?:all|every|each)\s+(?:the\s+|\d{1,2}\s+)?(?:columns?|rows?|cols?)(?=\s+(?:of|on|in)\s+(?:the\s+)?#|\s+(?:but|except)\b)"
            r"|all\s+(?:the\s+)?(?:\d{1,2}\s+)?(?:columns|rows)(?=\s*(?:[,;.)]|$|\s+(?:with|using|by|and)\b))"
            r"|all(?=\s+but\b)"
            r"|all\s+of(?=\s+(?:the\s+)?(?:#|plate\b))"
            # "full kinetics", "whole-cell": a bare adjective before a word is not a place, nor
            # "complete DMEM", "full media" (a name: "#"); "the whole plate_1" is one
            r"|(?:the\s+)?(?:whole|entire|(?:full|complete)(?!\s+#))"
            r"(?:\s+plate|(?![\s-]+(?!(?:of|on|in)\b)[A-Za-z])))\b"
            r"(?!\s+(?:volume|contents?|amount|liquid|sample|pool|reaction|mix)\b)"  # "contents"
            r"(?!\s+(?:in|of|on)\s+(?:the\s+)?(?:#+\s+)?(?:rows?|columns?|cols?|[A-Pa-p]\d))",
            _FLAGS,
        ),
    ),
    ("well", re.compile(rf"\b({_W})\b", _FLAGS)),
]
_ELLIPSIS = re.compile(r"\s*(?:,|\band\b|\bto\b)?\s*(\.\.\.|…)\s*,?\s*(?:and\s+|to\s+)?", _FLAGS)
_THEN_ALTERNATE = re.compile(  # "column 1 of #, every other row": the plate between
    r"^\s*(?:(?:of|on|in)\s+(?:the\s+)?#+(?:\s+plate)?\s*)?,?\s*(?:in\s+|at\s+|using\s+|taking\s+)?$",
    _FLAGS,
)
# Read backwards: the text before a range ends in "from" (+ a few words), and no "to" comes
# before that "from" in its part of the sentence ("add 10 uL to wells from A1 to A6" is a
# range; "... to daughter B1, and from A2 to B3" is a second source and destination).
_FROM_TO = re.compile(r"^\s*(?:[^\s]+\s+){0,3}?morf\b(?![^,;]*\bot\b)", _FLAGS)
# Two wells joined by an arrow are a pair (source -> destination), except after the words that
# say where the liquid goes: then the arrow is "through" ("add dye into wells A1 -> A6").
_ARROW_SPAN = re.compile(r"(?<!->\s)(?<!->)\b([A-Pa-p]\d{1,2})\s*->\s*([A-Pa-p]\d{1,2})\b(?!\s*->)")
_INTO_BEFORE = re.compile(
    r"\b(?:to|into|onto|across)\s+(?!.*\bfrom\b)(?:(?:the|wells?|plate|of)\s+|[\w-]*\d\w*\s+|#+\s+){0,3}$",
    _FLAGS,
)
_WELL_COUNT = re.compile(r"\b(?:all\s+)?(\d{2,4})\s+wells\b", _FLAGS)


def _numbers(text: str) -> list[int]:
    """'1-3, 5 and 7' / '1, 3, 5, ..., 11' (the step of the last two carried on)."""
    out: list[int] = []
    text = _LIST_ELLIPSIS.sub(" ~ ", text)
    for piece in re.split(r"\s*(?:,|&|\band\b|\+|\bor\b)\s*", text, flags=_FLAGS):
        if "~" in piece:
            left, right = (x.strip() for x in piece.split("~", 1))
            if left:
                out.append(int(left))
            step = out[-1] - out[-2] if len(out) >= 2 and out[-1] > out[-2] else 1
            out.extend(range(out[-1] + step, int(right) + 1, step) if out else [int(right)])
            continue
        ends = re.split(_SPAN, piece.strip(), flags=_FLAGS)
        ends = [e for e in ends if e.strip()]
        if len(ends) == 2:
            a, b = int(ends[0]), int(ends[1])
            out.extend(range(a, b + (1 if b >= a else -1), 1 if b >= a else -1))
        elif ends:
            out.append(int(ends[0]))
    return out


def _letters(text: str) -> list[str]:
    out: list[str] = []
    for piece in re.split(r"\s*(?:,|&|\band\b|\+)\s*", text, flags=_FLAGS):
        ends = [
            e.strip().upper() for e in re.split(_SPAN, piece.strip(), flags=_FLAGS) if e.strip()
        ]
        if len(ends) == 2:
            a, b = ord(ends[0]), ord(ends[1])
            out.extend(chr(x) for x in range(a, b + (1 if b >= a else -1), 1 if b >= a else -1))
        elif ends:
            out.append(ends[0])
    return out


_LISTED_AFTER = re.compile(r"^[A-Za-z]\d{1,2}\s*:\s+[A-Za-z]\d{1,2}\s*,\s*[A-Za-z]\d{1,2}\b")
_BUT_AFTER = re.compile(
    r"^\s*,?\s*(?:but|except|excluding|other\s+than|apart\s+from|save\s+for)\b", _FLAGS
)


# "every other well, starting at A2, of row A": the first well may be said before the set
_OTHER_WELL = re.compile(
    r"\b(?:every\s+(?:other|second|2nd|third|3rd|fourth|4th)|alternat(?:e|ing)"
    r"|(odd|even)(?:[-\s]?numbered)?)\s+wells?\s*"
    r"(?:[,(]?\s*(?:starting|beginning)\s+(?:at|with|from|in)\s+(?P<at>[A-Pa-p]\d{1,2})\s*[,)]?\s*)?"
    r"\s(?:of|in|on|along|across|from|within|among)\s+(?:the\s+)?(?:#+\s+)?",
    _FLAGS,
)
_START_AT = re.compile(
    r"^[^.;]*?\b(?:starting|beginning)\s+(?:at|with|from|in)\s+([A-Za-z]\d{1,2})\b", _FLAGS
)


class SelectionError(ValueError):
    """A selection that leaves the plate's grid."""

    def __init__(self, message: str, outside: list[str]) -> None:
        super().__init__(message)
        self.outside = outside


def row_letter(index: int) -> str:
    """0 -> 'A'."""
    return string.ascii_uppercase[index]


@dataclass(frozen=True, slots=True)
class Part:
    """One written piece of a set: kind and its arguments."""

    kind: str
    args: tuple[object, ...] = ()


_EVERY_BEFORE = re.compile(r"\b(?:every|each|all)\s+(?:the\s+)?$", _FLAGS)
_WELLS_AFTER = re.compile(r"\s+wells?\b", _FLAGS)
# "100 uL per well across plate_2", "throughout plate_1.": a plate nothing after it narrows
_ACROSS_BEFORE = re.compile(r"\b(?:across|throughout)\s+(?:the\s+)?$", _FLAGS)
_CLAUSE_END = re.compile(r"\s*(?:[,;.!]|$)")
# ... but a series "across plate_1" says the direction it runs, never which wells it takes
_SERIES = re.compile(r"\b(?:serial\w*|dilut\w*|titrat\w*|\d+\s*-?\s*fold|1\s*:\s*\d+)", _FLAGS)


def whole_plates(text: str, plates: list[tuple[int, int]]) -> list[tuple[int, int, int, int]]:
    """(start, end, plate start, plate end) of each plate named as all its wells: "into every
    seedlings24 well", "each plate_2 well", "50 uL/well across plate_2"."""
    found = []
    for a, b in plates:
        before, after = _EVERY_BEFORE.search(text[:a]), _WELLS_AFTER.match(text[b:])
        if before and after:
            found.append((before.start(), b + after.end(), a, b))
        elif (
            _ACROSS_BEFORE.search(text[:a])
            and _CLAUSE_END.match(text[b:])
            and not _SERIES.search(text)
        ):
            found.append((a, b, a, b))
    return found
