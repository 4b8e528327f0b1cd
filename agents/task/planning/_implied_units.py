"""Numbers whose unit the verb says: "heat plate_1 to 37 for 10 min" is 37 C (a plate is heated
to degrees), "shake plate_1 at 800 for 1 min" is 800 rpm (no block reaches 800 C). Only a
number the unit list leaves bare, in the verb's own clause, in the range the verb allows.
Pure text."""

from __future__ import annotations

import re

_FLAGS = re.IGNORECASE
_START = r"(?:^|(?<=[.;\n])\s*|\b(?:then|and)\s+)"
_BARE = (
    r"(?P<n>\d{1,4}(?:\.\d)?)"
    r"(?!\.?\d|\s*(?:°|º|℃|deg|c\b|k\b|f\b|u|µ|m|n|s\b|h\b|rpm|x\b|%|/|:|-\s*\d))"
)
# "heat X to 37", "warm X up to 37", "incubate X at 37 for 1 h", "incubate X 37 for 1 h"
_HEATED = re.compile(
    _START + r"(?P<head>(?:pre-?)?(?:heat|warm|cool|chill|incubate)\b[^,.;\n]*?"
    r"(?:\b(?:up\s+)?to|\bat)\s+)" + _BARE,
    _FLAGS,
)
# "shake X at 800 for 1 min"
_SHAKEN = re.compile(_START + r"(?P<head>shake\b[^,.;\n]*?\bat\s+)" + _BARE, _FLAGS)


def implied_units(text: str) -> str:
    """``text`` with a heating verb's bare 4-100 written in C, a shake's bare 200-3000 in rpm."""
    if re.search(r"\b(?:heat|warm|cool|chill|incubate)", text, _FLAGS):
        text = _HEATED.sub(lambda m: _unit(m, "C", 4, 100), text)
    if re.search(r"\bshake\b", text, _FLAGS):
        text = _SHAKEN.sub(lambda m: _unit(m, "rpm", 200, 3000), text)
    return text


def _unit(m: re.Match[str], unit: str, low: float, high: float) -> str:
    if not low <= float(m["n"]) <= high:
        return m.group(0)
    return f"{m.group(0)} {unit}"
