"""Quantities with units in controlled lab English: volumes, temperatures, speeds, times, nm.

Every quantity is converted to one canonical unit (uL, degrees C, rpm, seconds, nm). A number
without a unit is not a quantity: the planner asks what it means rather than assume a unit.
Counts ("5 times", "3x", "twice"), folds ("2-fold", "1:3") and step counts ("8-step") are read
here too, and so are the vague words ("some", "a bit") that stand where a number should be.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Kind = Literal["volume", "temperature", "speed", "duration", "wavelength"]

# unit spelling -> (kind, factor to the canonical unit); Fahrenheit is converted separately.
_UNITS: dict[str, tuple[Kind, float]] = {
    **dict.fromkeys(
        ("ul", "uls", "microliter", "microliters", "microlitre", "microlitres"), ("volume", 1.0)
    ),
    **dict.fromkeys(("nl", "nanoliter", "nanoliters", "nanolitre", "nanolitres"), ("volume", 1e-3)),
    **dict.fromkeys(
        ("ml", "mls", "milliliter", "milliliters", "millilitre", "millilitres"), ("volume", 1e3)
    ),
    **dict.fromkeys(("l", "liter", "liters", "litre", "litres"), ("volume", 1e6)),
    **dict.fromkeys(
        ("c", "degc", "deg c", "celsius", "degrees c", "degrees celsius", "degree", "degrees"),
        ("temperature", 1.0),
    ),
    **dict.fromkeys(
        ("f", "degf", "fahrenheit", "degrees f", "degrees fahrenheit"), ("temperature", 0.0)
    ),
    **dict.fromkeys(("rpm", "rev/min", "revolutions per minute"), ("speed", 1.0)),
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), ("duration", 1.0)),
    **dict.fromkeys(("min", "mins", "minute", "minutes"), ("duration", 60.0)),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), ("duration", 3600.0)),
    **dict.fromkeys(
        ("nm", "nanometer", "nanometers", "nanometre", "nanometres"), ("wavelength", 1.0)
    ),
}
_FAHRENHEIT = frozenset(("f", "degf", "fahrenheit", "degrees f", "degrees fahrenheit"))

_NUMBER = r"(?<![\w.])(-?(?:\d+(?:\.\d+)?|\.\d+))"
_UNIT_ALT = "|".join(re.escape(u) for u in sorted(_UNITS, key=len, reverse=True))
_QUANTITY = re.compile(_NUMBER + r"\s*(" + _UNIT_ALT + r")(?![\w/])", re.IGNORECASE)
_BARE = re.compile(
    r"(?<![\w.:/])(-?(?:\d+(?:\.\d+)?|\.\d+))"
    r"(?![\w.:/]|\s*/|\s*-?\s*(?:fold|times|x\b|steps?|points?|cycles?|reps?))",
    re.IGNORECASE,
)

_COUNTED = re.compile(r"(?:column|col|row|hotel|slot|od|step)\s*$", re.IGNORECASE)

WORD_NUMBERS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}  # fmt: skip
_COUNT = r"(\d+|" + "|".join(WORD_NUMBERS) + r")"
_TIMES = re.compile(
    _COUNT + r"\s*(?:times|x|cycles?|repetitions?|reps?)\b|\bx\s*(\d+)\b|\b(once|twice|thrice)\b",
    re.IGNORECASE,
)
_FOLD = re.compile(
    r"(?<![\w.])(-?\d+(?:\.\d+)?|" + "|".join(WORD_NUMBERS) + r")\s*-?\s*fold\b"
    r"|(?<![\w:])1\s*:\s*(\d+(?:\.\d+)?)(?![\w:])",
    re.IGNORECASE,
)
_STEPS = re.compile(r"(?<![\w.])" + _COUNT + r"\s*-?\s*(?:steps?|points?)\b", re.IGNORECASE)
VAGUE = re.compile(
    r"\b(a bit|a little|some|a few|few|several|a couple(?: of)?|enough|a lot(?: of)?|lots of|"
    r"plenty(?: of)?|a splash|a drop|a while|briefly|a moment|overnight|a small amount)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Quantity:
    """A number with a unit, converted to the canonical unit of its kind."""

    kind: Kind
    value: float
    text: str
    start: int
    end: int


def quantities(text: str) -> list[Quantity]:
    """Every quantity in ``text``, in order."""
    found = []
    for m in _QUANTITY.finditer(text):
        number, unit = float(m.group(1)), " ".join(m.group(2).lower().split())
        kind, factor = _UNITS[unit]
        value = (number - 32.0) * 5.0 / 9.0 if unit in _FAHRENHEIT else number * factor
        found.append(Quantity(kind, round(value, 6), m.group(0), m.start(), m.end()))
    return found


def first(found: list[Quantity], kind: Kind) -> Quantity | None:
    """The first quantity of a kind, or None."""
    return next((q for q in found if q.kind == kind), None)


def bare_numbers(text: str) -> list[str]:
    """Numbers written without a unit (and not a count, a fold, a well or an id)."""
    spans = [(q.start, q.end) for q in quantities(text)]
    return [
        m.group(1)
        for m in _BARE.finditer(text)
        if not any(a <= m.start() < b for a, b in spans) and not _COUNTED.search(text[: m.start()])
    ]


def _count(word: str) -> int:
    return WORD_NUMBERS.get(word.lower()) or int(word)


def times(text: str) -> int | None:
    """A repetition count: '5 times', '3x', 'x3', 'twice'."""
    m = _TIMES.search(text)
    if m is None:
        return None
    if m.group(3):
        return {"once": 1, "twice": 2, "thrice": 3}[m.group(3).lower()]
    return _count(m.group(1) or m.group(2))


def fold(text: str) -> float | None:
    """A dilution factor: '2-fold', 'twofold', 'three-fold', '1:3'."""
    m = _FOLD.search(text)
    if m is None:
        return None
    word = m.group(1) or m.group(2)
    return float(WORD_NUMBERS.get(word.lower(), 0) or float(word))


def steps(text: str) -> int | None:
    """A step count: '8-step', '6 steps', 'eight-point'."""
    m = _STEPS.search(text)
    return None if m is None else _count(m.group(1))


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
