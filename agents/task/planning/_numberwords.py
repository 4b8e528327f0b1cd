"""Numbers spelled out in words before a unit ("twenty-five microlitres", "one hundred and
fifty uL", "a hundred and twenty µl", "seventy five min"): written as digits so the quantity
reader sees one number. Only a spelled number right before a unit is rewritten; "two plates"
or "one tip" stay as they are (counts are read elsewhere)."""

from __future__ import annotations

import re

_UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19,
}  # fmt: skip
_TENS = {
    "twenty": 20, "thirty": 30, "forty": 40, "fourty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90,
}  # fmt: skip
_SMALL = rf"(?:(?:{'|'.join(_TENS)})(?:[\s-]+(?:{'|'.join(_UNITS)}))?|{'|'.join(_UNITS)})"
_HUNDREDS = rf"(?:(?:a|one|{'|'.join(_UNITS)})\s+hundred(?:\s+(?:and\s+)?{_SMALL})?)"
_SPELLED = re.compile(
    rf"\b(?P<n>{_HUNDREDS}|{_SMALL})(?P<unit>[\s-]+(?:u[lL]\b|m[lL]\b|micro[\s-]?lit|milli[\s-]?lit"
    r"|nano[\s-]?lit|min\b|minutes?\b|s\b|secs?\b|seconds?\b|h\b|hrs?\b|hours?\b|rpm\b"
    r"|degrees?\b|C\b|nm\b|(?-i:[pnuµ]M)\b|[pnuµm]?g\s*/\s*[uµm]?[lL]\b|ng\b|fmol\b))",
    re.IGNORECASE,
)


# "half a mL", "one and a half mL", "a quarter of a mL", "three quarters of a millilitre",
# "two and a half minutes", "half an hour": a fraction of one unit, or a whole number and a half
_UNIT_WORD = (
    r"(?:u[lL]\b|m[lL]\b|µ[lL]\b|micro[\s-]?lit\w*|milli[\s-]?lit\w*|min(?:ute)?s?\b|hours?\b"
    r"|hrs?\b|h\b|seconds?\b|secs?\b)"
)
_FRACTION = re.compile(
    rf"\b(?:(?P<whole>{_SMALL}|\d{{1,3}})[\s-]+and[\s-]+a[\s-]+half[\s-]+(?:an?\s+)?(?P<u1>{_UNIT_WORD})"
    rf"|(?P<part>half|(?:a|one)[\s-]+quarter|quarter|(?:three|3)[\s-]+quarters?)(?:[\s-]+of)?"
    rf"[\s-]+an?[\s-]+(?P<u2>{_UNIT_WORD})"
    rf"|(?P<part2>half|(?:a|one)\s+quarter|(?:three|3)[\s-]+quarters?)\s+(?:of\s+)?(?P<u3>m[lL]\b))",
    re.IGNORECASE,
)
_PARTS = {"half": 0.5, "quarter": 0.25, "quarters": 0.75}
# "1/2 mL", "1 1/2 mL", "3/4 ml": a written fraction of a volume unit (never "1/2" alone: a ratio)
_SLASHED = re.compile(
    r"(?<![\w./:])(?:(?P<whole>\d{1,3})\s+)?(?P<num>[13])\s*/\s*(?P<den>[24])\s*"
    r"(?P<unit>m[lL]\b|u[lL]\b|µ[lL]\b|milli[\s-]?lit\w*|micro[\s-]?lit\w*)",
    re.IGNORECASE,
)


def _slashed(m: re.Match[str]) -> str:
    if m.group("num") == "3" and m.group("den") == "2":
        return m.group(0)  # "3/2 mL": nobody writes a volume so
    number = int(m.group("whole") or 0) + int(m.group("num")) / int(m.group("den"))
    return f"{number:g} {m.group('unit')}"


def _fraction(m: re.Match[str]) -> str:
    """The number a fraction phrase says, in digits before its unit."""
    if m.group("whole"):
        whole = m.group("whole")
        number = (int(whole) if whole.isdigit() else _value(whole)) + 0.5
        return f"{number:g} {m.group('u1')}"
    part = re.split(r"[\s-]+", (m.group("part") or m.group("part2")).lower())[-1]
    return f"{_PARTS[part]:g} {m.group('u2') or m.group('u3')}"


def _value(words: str) -> int:
    total, current = 0, 0
    for w in re.split(r"[\s-]+", words.lower()):
        if w in ("and", ""):
            continue
        if w == "hundred":
            current = max(current, 1) * 100
        elif w == "a":
            current = 1
        else:
            current += _UNITS.get(w, 0) + _TENS.get(w, 0)
    return total + current


# "columns one to three", "rows two and four": the numbers of a plate's lines, spelled
_LINE_WORDS = re.compile(
    rf"\b(?P<line>columns?|cols?\.?|rows?)\s+(?P<n>{_SMALL}(?:\s*(?:,|and|&|to|through|thru|-)\s*{_SMALL})*)\b"
    r"(?!\s+(?:by|at\s+a|after)\b)",
    re.IGNORECASE,
)


def digits(text: str) -> str:
    """``text`` with every number spelled before a unit, or naming columns and rows
    ("columns one to three"), written in digits."""

    def one(m: re.Match[str]) -> str:
        return f"{_value(m.group('n'))}{m.group('unit')}"

    def line(m: re.Match[str]) -> str:
        spelled = re.compile(rf"\b{_SMALL}\b", re.IGNORECASE)
        return f"{m.group('line')} " + spelled.sub(lambda w: str(_value(w.group(0))), m.group("n"))

    if "/" in text:
        text = _SLASHED.sub(_slashed, text)
    if "half" in text.lower() or "quarter" in text.lower():
        text = _FRACTION.sub(_fraction, text)
    return _LINE_WORDS.sub(line, _SPELLED.sub(one, text))


def small_count(word: str) -> int | None:
    """'six' -> 6, '6' -> 6; None for any other word ("those sample wells")."""
    return int(word) if word.isdigit() else _UNITS.get(word.lower())
