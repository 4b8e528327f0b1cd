"""Quantities in lab English, read with ``pint``: volumes, temperatures, times, speeds, nm.

A number with a unit (``50 uL``, ``0.1 mL``, ``fifty microliters``, ``37C``, ``5-min``,
``1,000 rpm``, ``OD600``) becomes a :class:`Quantity` in one canonical unit per kind (uL,
degrees C, seconds, rpm, nm); pint does the unit arithmetic and checks the dimension. A number
without a unit is not a quantity: the planner asks what it means rather than assume a unit.
Counts ("5 times", "3x", "twice", "in triplicate"), folds and ratios ("2-fold", "1:10",
"1 in 10") and step counts ("8-step", "6-point") are read here too, and so are the vague
words ("some", "a bit") that stand where a number should be.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Literal

import pint

from agents.task.planning._strengths import conc_fold

Kind = Literal["volume", "temperature", "duration", "speed", "wavelength"]

_FLAGS = re.IGNORECASE
_CANONICAL: dict[Kind, str] = {
    "volume": "microliter",
    "temperature": "degC",
    "duration": "second",
    "speed": "rpm",
    "wavelength": "nanometer",
}
# How people write units -> (kind, pint unit). Letters alone that pint reads otherwise
# (C is a coulomb, F a farad) are temperatures here.
_SURFACES: dict[str, tuple[Kind, str]] = {
    **dict.fromkeys(
        ("ul", "uls", "microl", "mcl", "microliter", "microliters", "microlitre", "microlitres",
         "micro liters", "micro litres", "micro-liters", "micro-litres", "ulitres", "ul's"),
        ("volume", "microliter"),
    ),
    **dict.fromkeys(
        ("ml", "mls", "milliliter", "milliliters", "millilitre", "millilitres", "milli-liters",
         "cc"),
        ("volume", "milliliter"),
    ),
    **dict.fromkeys(("nl", "nanoliter", "nanoliters", "nanolitre", "nanolitres"),
                    ("volume", "nanoliter")),
    **dict.fromkeys(("l", "liter", "liters", "litre", "litres"), ("volume", "liter")),
    **dict.fromkeys(
        ("c", "degc", "deg c", "degrees c", "degree c", "degrees celsius", "degree celsius",
         "celsius", "centigrade", "degrees", "degree", "oc", "deg", "degs"),
        ("temperature", "degC"),
    ),
    **dict.fromkeys(
        ("f", "degf", "deg f", "degrees f", "degrees fahrenheit", "fahrenheit"),
        ("temperature", "degF"),
    ),
    **dict.fromkeys(
        ("rpm", "rmp", "prm", "rev/min", "r/min", "revolutions per minute"), ("speed", "rpm")
    ),
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), ("duration", "second")),
    **dict.fromkeys(("min", "mins", "minute", "minutes", "m"), ("duration", "minute")),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), ("duration", "hour")),
    **dict.fromkeys(("day", "days"), ("duration", "day")),
    **dict.fromkeys(("week", "weeks", "wk", "wks"), ("duration", "week")),
    **dict.fromkeys(("nm", "nanometer", "nanometers", "nanometre", "nanometres"),
                    ("wavelength", "nanometer")),
}  # fmt: skip
WORD_NUMBERS = {
    "zero": 0, "one": 1, "a single": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15,
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "ninety": 90,
    "hundred": 100, "a hundred": 100, "one hundred": 100, "two hundred": 200,
    "half": 0.5, "a half": 0.5,
}  # fmt: skip
_WORDS = "|".join(sorted((re.escape(w) for w in WORD_NUMBERS), key=len, reverse=True))
_NUM = r"(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
_NUMBER = rf"(?<![\w.])(?P<neg>-)?(?P<num>{_NUM}|(?:{_WORDS})(?=[\s-]))"
_UNIT = "|".join(re.escape(u) for u in sorted(_SURFACES, key=len, reverse=True))
_QUANTITY = re.compile(
    _NUMBER + rf"\s*-?\s*(?P<unit>{_UNIT})(?![\w]|/(?!\s*(?:(?:well|point|sample|w|wl)s?\b|\d)))",
    _FLAGS,  # "50 uL/well", "50 ul/w" and "37 C/5 min" are quantities, "10 ng/uL" is not
)
# "OD600", "abs 450", "A450" (and "a450": no well has a three-digit column)
_OD = re.compile(r"\b(?:(?i:od|abs)\s?-?|[Aa])(?P<nm>[2-9]\d{2})\b")
_BARE = re.compile(
    r"(?<![\w.:/])(-?(?:\d+(?:\.\d+)?|\.\d+))"
    r"(?![\w.:/]|\s*/|\s*-?\s*(?:fold|times|x\b|steps?|points?|cycles?|reps?|wells?|columns?"
    r"|rows?|replicates?|plates?|channels?|ch\b|chan\b))",  # "the 8-channel": a head
    _FLAGS,
)
_COUNTED = re.compile(
    r"(?:column|col|row|hotel|slot|od|step|position|rack|plate|tube|cols|columns|rows|and|,|"
    r"through|to|thru|-|n\s*=)\s*$",
    _FLAGS,
)
_COUNT = rf"(\d+|{_WORDS})"
_TIMES = re.compile(
    _COUNT + r"\s*(?:times|x|cycles?|repetitions?|reps?|strokes?|passes)\b|\bx\s*(\d+)\b"
    r"|\b(once|twice|thrice)\b",
    _FLAGS,
)
_FOLD = re.compile(
    rf"(?<![\w.])(\d+(?:\.\d+)?|{_WORDS})\s*-?\s*(?:fold\b|x\s+(?=(?:serial\s+)?dilut|serial\b|series\b"
    r"|(?:down|across|along)\s+(?:the\s+)?(?:[\w-]+\s+)?(?:col|row|plate|[A-Pa-p]\d)))",
    _FLAGS,
)
_MIXED = re.compile(r"\bmix(?:ed|ing|es)?\s*(?:it|them|well|up)?\s*$", _FLAGS)
_RATIO = re.compile(
    # "column 1 to 2 ng/uL" is a target concentration, not a 1:2 ratio
    r"(?<![\w:.])(?:1\s*(?::|in|to)\s*(\d+(?:\.\d+)?)(?![\w:.]|\s*(?:[pnuµm]?g\s*/|[pnuµ]m\b|mm\b))"
    r"|one\s+(?:in|to)\s+(two|three|four|five|six|seven|eight|nine|ten|twenty|fifty|a\s+hundred)\b)",
    _FLAGS,
)
# between a count and what it counts: "5 serial 1:10 dilutions", "6 two-fold dilutions"
STEP_FOLD = r"(?:serial\s+)?(?:[\w.]+[\s-]?fold\s+|(?:1\s*[:/]\s*|1\s+in\s+)\d+\s+)?(?:serial\s+)?"
_STEPS = re.compile(
    rf"(?<![\w.:/])({_COUNT[1:-1]})(?![\d.])\s*-?\s*{STEP_FOLD}"
    r"(?:steps?|points?|pts?|dilutions?|concentrations?|conc|wells?|standards?|stds?)\b"
    r"(?!\s*(?:curves?|crvs?|plates?)\b)",
    _FLAGS,
)
# "diluted 1:2 six times", "3-fold 5 times": the number of transfers of a dilution
FOLD_TIMES = re.compile(
    rf"(?:\b1\s*[:/]\s*\d+|\b\d+(?:\.\d+)?\s*-?\s*fold|\b\d+x)\s+({_COUNT[1:-1]})\s+times\b",
    _FLAGS,
)
VAGUE = re.compile(
    r"\b(a bit|a little|some|a few|few|several|a couple(?: of)?|enough|a lot(?: of)?|lots of|"
    r"plenty(?: of)?|a splash|a drop|a while|briefly|a moment|overnight|a small amount|"
    r"a bunch|loads of|a dash|whatever(?: volume| amount)?(?: you think| is best| you like)?)\b",
    _FLAGS,
)


@dataclass(frozen=True, slots=True)
class Quantity:
    """A number with a unit, converted to the canonical unit of its kind."""

    kind: Kind
    value: float
    text: str
    start: int
    end: int


@cache
def registry() -> pint.UnitRegistry:
    """The planner's one unit registry (built once: it takes ~0.3 s)."""
    return pint.UnitRegistry(autoconvert_offset_to_baseunit=True)


@cache
def _factor(unit: str, kind: Kind) -> tuple[float, float]:
    """(scale, offset) from ``unit`` to the canonical unit of ``kind``, computed by pint."""
    ureg = registry()
    zero = ureg.Quantity(0.0, unit).to(_CANONICAL[kind]).magnitude
    one = ureg.Quantity(1.0, unit).to(_CANONICAL[kind]).magnitude
    return float(one - zero), float(zero)


def number(text: str) -> float:
    """'1,000' -> 1000; '.5' -> 0.5; 'fifty' -> 50."""
    low = text.lower().strip()
    if low in WORD_NUMBERS:
        return float(WORD_NUMBERS[low])
    return float(low.replace(",", ""))


_LISTED = re.compile(  # (never from a range's end: "columns 1-6 and 7-12, 50 uL" is one volume)
    r"(?<![\w.:/\-–])(\d+(?:\.\d+)?)((?:\s*(?:,|and|or|&)\s*\d+(?:\.\d+)?)+)\s*(?P<unit>u[lL]|µl|ml|mL|nm)\b"
)


# Molar concentrations as written (case matters: "nm" is a wavelength, "nM" nanomolar).
_MOLAR = re.compile(r"nM|M")


_COUNTED_LIST = re.compile(
    # "columns 8, 10 and 12, 3 uL", "column 1 -> 12, 100 uL"; not "into the same wells, 5,
    # 7.5 and 10 uL"
    r"(?:columns?|cols?|rows?|wells?|steps?|quadrants?|\bQ)\b(?!\s*,)[\s\d,&]*"
    r"(?:to|through|thru|and|-|->|→)?\s*$",
    re.IGNORECASE,
)


_RATIO_BEFORE = re.compile(r"(?<![\w.])1\s*(?:in|\+|to)\s*$", re.IGNORECASE)


def quantities(text: str) -> list[Quantity]:
    """Every quantity in ``text``, in order (OD600 and A450 are wavelengths; "2, 3 and 4.5 uL"
    are three volumes)."""
    found = []
    for m in _LISTED.finditer(text):
        before = text[max(0, m.start() - 24) : m.start()]
        if _COUNTED_LIST.search(before) or _RATIO_BEFORE.search(before):
            continue  # "columns 8, 10 and 12, 3 uL", "columns 1 to 5, 120 uL", "1 in 20, 800 uL"
        if m.group(1) in ("384", "1536") and re.search(r"\bthe\s+$", before, re.IGNORECASE):
            continue  # "quadrant 1 of the 384, 3 uL": a plate, then one volume
        if _MOLAR.fullmatch(m.group("unit")):
            continue  # "2, 4 and 8 nM": concentrations
        unit = m.group("unit").lower()
        kind, pint_unit = _SURFACES[unit]
        scale, offset = _factor(pint_unit, kind)
        for n in re.finditer(r"\d+(?:\.\d+)?", m.group(0)[: m.start("unit") - m.start()]):
            value = round(float(n.group(0)) * scale + offset, 6)
            if n.end() + m.start() < m.start("unit") - 1:  # the last number is read below
                found.append(
                    Quantity(kind, value, n.group(0), m.start() + n.start(), m.start() + n.end())
                )
    for m in _QUANTITY.finditer(text):
        if any(q.start <= m.start() < q.end for q in found):
            continue
        if _MOLAR.fullmatch(m.group("unit")):
            continue  # "4 nM", "1 M": a concentration, not a wavelength or minutes
        unit = " ".join(m.group("unit").lower().split())
        kind, pint_unit = _SURFACES[unit]
        if unit == "m" and not re.match(r"\s*\d", text[m.start("num") :]):
            continue
        scale, offset = _factor(pint_unit, kind)
        value = number(m.group("num")) * (-1 if m.group("neg") else 1)
        found.append(
            Quantity(kind, round(value * scale + offset, 6), m.group(0), m.start(), m.end())
        )
    for m in _OD.finditer(text):
        if not any(q.start <= m.start() < q.end for q in found):
            found.append(
                Quantity("wavelength", float(m.group("nm")), m.group(0), m.start(), m.end())
            )
    return sorted(found, key=lambda q: q.start)


def of_kind(found: list[Quantity], kind: Kind) -> list[Quantity]:
    return [q for q in found if q.kind == kind]


def first(found: list[Quantity], kind: Kind) -> Quantity | None:
    """The first quantity of a kind, or None."""
    return next((q for q in found if q.kind == kind), None)


def without(text: str, found: list[Quantity]) -> str:
    """``text`` with the quantities blanked out (same length, so spans stay valid)."""
    for q in found:
        text = text[: q.start] + " " * (q.end - q.start) + text[q.end :]
    return text


def bare_numbers(text: str) -> list[str]:
    """Numbers written without a unit (and not a count, a fold, a well or an id)."""
    spans = [(q.start, q.end) for q in quantities(text)]
    return [
        m.group(1)
        for m in _BARE.finditer(text)
        if not any(a <= m.start() < b for a, b in spans) and not _COUNTED.search(text[: m.start()])
    ]


def times(text: str) -> int | None:
    """A repetition count: '5 times', '3x', 'x3', 'twice'."""
    m = _TIMES.search(text)
    if m is None:
        return None
    if m.group(3):
        return {"once": 1, "twice": 2, "thrice": 3}[m.group(3).lower()]
    return int(number(m.group(1) or m.group(2)))


_REPLICATES = re.compile(
    r"\bin\s+(duplicate|triplicate|quadruplicate)s?\b|\b(duplicate|triplicate|quadruplicate)s\b"
    r"|\b(triplicate|quadruplicate)\b|(?<=\()\s*(duplicate)\b|\b(duplicate)(?=\s*[),;])"
    r"|\b(\d|two|three|four|five|six)\s+(?:replicates?|repeats|copies)\b|\bn\s*=\s*(\d)\b"
    r"|\b(?:curves?|crvs?|standards?|stds?)\s*[x×]\s?([2-4])\b",  # "Std curve x3"
    re.IGNORECASE,
)
_REPLICATE_WORDS = {"duplicate": 2, "triplicate": 3, "quadruplicate": 4}


def replicates(text: str) -> int | None:
    """The replicate count said ("in triplicate", "(duplicate)", "3 replicates", "n=4")."""
    if (rep := _REPLICATES.search(text)) is None:
        return None
    word = next((g for g in rep.groups()[:5] if g), "").lower()
    return _REPLICATE_WORDS.get(word) or int(
        number(rep.group(6) or rep.group(7) or rep.group(8) or "1")
    )


def fold(text: str) -> tuple[float, str] | None:
    """A dilution factor and how it was written: '2-fold' -> (2, 'fold'), '1:10' -> (10, 'ratio')"""
    for said in _FOLD.finditer(text):
        if said.group(0).lower().endswith("fold") or not _MIXED.search(text[: said.start()]):
            return number(said.group(1)), "fold"  # ("mix 3x down the column": mixes)
    # ("std_curve column 1: 1000, 500, ... pg/mL" is a column and a list, never 1:1000;
    # "columns 1 to 3", "rows one to three": a range of lines, no ratio)
    if m := next(
        (m for m in _RATIO.finditer(text) if not _AXIS_BEFORE.search(text[: m.start()])), None
    ):
        return number(m.group(1) or m.group(2)), "ratio"  # "1:10", "one in five"
    if m := _SLASH.search(text):  # "dilute the stock 1/100", "make a 1/50 of the serum"
        return float(m.group(1) or m.group(2) or m.group(3)), "ratio"
    # "1+9", "a 1 + 100 pre-dilution": one part in 10, in 101 ("cols 1+2" is two columns)
    if m := next(
        (m for m in _PLUS.finditer(text) if not _AXIS_BEFORE.search(text[: m.start()])), None
    ):
        return round(1.0 + float(m.group(1)), 4), "ratio"
    if m := _PARTS.search(text):  # "1 part stock with 9 parts diluent": 1 in 10
        first = 1.0 if m.group("p1").lower() == "one" else float(m.group("p1"))
        return round((first + float(m.group("p2"))) / first, 4), "ratio"
    if (k := conc_fold(text)) is not None:
        return k, "ratio"  # "from 10x to 1x", "the 2 mg/mL stock down to 0.5 mg/mL"
    if m := _DILUTE_X.search(text) or _SERIES_X.search(text):
        return float(m.group(1)), "fold"  # "dilute the lysate 5x in water", "series (2x)"
    if m := _FOLD_MORE.search(text):
        if m.group("frac"):
            return float(m.group("frac")), "ratio"  # "1/2 dilutions"
        if m.group("factor"):
            return float(m.group("factor")), "fold"  # "a dilution factor of 3"
        if m.group("halflog"):
            return round(10**0.5, 4), "fold"  # "half-log dilutions"
        return 2.0, "fold"  # "halving / doubling dilutions"
    return None


# "dilute the lysate 5x in water", "diluted 3x down column 2": a count of x after "dilute"
_DILUTE_X = re.compile(
    r"\bdilut\w*\s+(?:[^\s,;]+\s+){0,3}?(?<!to\s)(?<!at\s)(?!1\s*x)(\d+(?:\.\d+)?)\s*x"
    r"(?=\s*(?:$|[,;.()]|across\b|down\b|along\b|in\b|into\b|with\b|serial|each\b|per\b|from\b))",
    re.IGNORECASE,
)

# "serial dilution (2x) of ...", "serial dilution, 3x, ...": the factor just after the series
_SERIES_X = re.compile(
    r"\b(?:serial(?:ly)?\s+dilut\w*|dilution\s+series|titrat\w*)\s*[(,:]?\s*(\d+(?:\.\d+)?)\s*x"
    r"(?=\s*(?:$|[,;.)]))",
    re.IGNORECASE,
)


_PARTS = re.compile(
    r"\b(?P<p1>\d+(?:\.\d+)?|one)\s+parts?\b[^,;]{1,40}?\b(?:with|to|and|in|into|plus|\+)\s+"
    r"(?P<p2>\d+(?:\.\d+)?)\s+parts?\b",
    re.IGNORECASE,
)
_AXIS_BEFORE = re.compile(r"\b(?:columns?|cols?|rows?|wells?)\s*$", re.IGNORECASE)
_PLUS = re.compile(
    r"(?<![\w.+:/])1\s?\+\s?(\d+(?:\.\d+)?)(?![\w.+:/])(?!\s*(?:[uµnm]?[lL]|%|x|parts?)\b)",
    re.IGNORECASE,
)
# "1/100" is a ratio only beside a dilution ("dilute stock 1/100", "a 1/50 of X"), never a
# date or a share of a volume
_SLASH = re.compile(
    r"\bdil(?:ut\w*|\.)?\s+(?:[^\s,;:]+\s+){0,4}?1\s*/\s*(\d+(?:\.\d+)?)(?![\d/.])"
    r"|\ban?\s+1\s*/\s*(\d+(?:\.\d+)?)\s+(?:of|dil\w*)\b"
    r"|^\s*1\s*/\s*(\d+(?:\.\d+)?)\s+(?:in|with)\b",  # "Serum: 1/20 in diluent, ..."
    re.IGNORECASE,
)
_FOLD_MORE = re.compile(
    r"\b1\s*/\s*(?P<frac>\d+(?:\.\d+)?)\s+(?:serial\s+)?(?:dilutions?|steps?|serial(?:ly)?|series)\b"
    r"|\b(?:dilution\s+)?factor\s+(?:of\s+)?(?P<factor>\d+(?:\.\d+)?)\b"
    r"|\b(?P<halflog>half[\s-]?log)\b"
    r"|\b(?:halving|doubling|two-?fold\s+serial)\s+(?:serial\s+)?dilutions?\b"
    # "halving each time", "halved at each step": 2-fold steps
    r"|\b(?:halving|halved?)\s+(?:it\s+)?(?:each|every|at\s+each)\s+(?:time|step|well)\b",
    re.IGNORECASE,
)


def steps(text: str) -> int | None:
    """A step count: '8-step', '6 steps', 'eight-point', '7 dilutions'."""
    # "row H zero standard", "0 standards": the blank, never a count of no points
    # "a 1 to 3 dilution series": the n of a ratio, never a count of steps either
    said = (
        m
        for m in _STEPS.finditer(text)
        if number(m.group(1)) != 0 and not _NO_COUNT_HEAD.search(text[: m.start()])
    )
    m = next(said, None) or FOLD_TIMES.search(text)
    return None if m is None else int(number(m.group(1)))


# ("the last two wells no drug": which wells are left out, never a count of points)
_NO_COUNT_HEAD = re.compile(r"\b(?:(?:1|one)\s+(?:to|in)|last|final)\s+$", re.IGNORECASE)


def fmt(value: float, unit: str) -> str:
    """'50 uL', '2.5 uL', '37 C' — short, without trailing zeros."""
    return f"{value:g} {unit}" if abs(value) < 1e6 else f"{value:,.0f} {unit}"


def fmt_duration(seconds: float) -> str:
    """'5 min', '30 s', '1.5 h'."""
    if seconds >= 3600 and seconds % 360 == 0:
        return f"{seconds / 3600:g} h"
    if seconds >= 60 and seconds % 6 == 0:
        return f"{seconds / 60:g} min"
    return f"{seconds:g} s"
