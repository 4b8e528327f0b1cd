"""A volume said against the one before it: "the same volume of dye", "twice that volume",
"double that of dye", "half as much buffer", "2x that volume". The clause before says the
volume; the phrase is that volume scaled. A bare "twice" or "x2" is a count, never this."""

from __future__ import annotations

import re

_FACTORS = {"same": 1.0, "twice": 2.0, "double": 2.0, "triple": 3.0, "half": 0.5}
_NUMBERS = {"two": 2.0, "three": 3.0, "four": 4.0}
_FACTOR = (
    r"(twice|double|triple|half|(?:[2-4]|two|three|four)\s*(?:x|×|times)"
    r"|(?<![\w-])(?:x|×)\s*[2-4])"
)
# Where the scaled volume is said: "twice that (volume)", "twice the volume of", "twice as
# much", "the same volume" (never "double the volume" alone: that doubles what a well holds)
SCALED = (
    r"(?:the\s+)?(same)\s+(?:volume|amount)\b"
    rf"|(?!double\s+the\b){_FACTOR}\s+(?:that(?:\s+(?:same\s+)?(?:volume|amount))?\b|as\s+much\b"
    r"|the\s+(?:same\s+)?(?:volume|amount)(?=\s+of\b))"
)
_SCALED = re.compile(SCALED, re.IGNORECASE)


def _factor(word: str) -> float:
    word = word.lower()
    if word in _FACTORS:
        return _FACTORS[word]
    number = re.search(r"[2-4]|two|three|four", word)
    assert number is not None
    return _NUMBERS.get(number.group(), 0.0) or float(number.group())


def scaled_volume(text: str, before_ul: float) -> str | None:
    """``text`` with the scaled volume written out in uL ("twice that volume of dye" after 50
    uL: "100 uL of dye"), or None when it says none."""
    m = _SCALED.search(text)
    if m is None:
        return None
    volume = before_ul * _factor(m.group(1) or m.group(2))
    return f"{text[: m.start()]}{volume:g} uL{text[m.end() :]}"
