"""A dilution series said by its concentrations: "1000, 500, 250, 125 ng/mL and 0", "from 1000
ng/mL down to 15.6 ng/mL in 2-fold steps". The factor is the constant ratio of one
concentration to the next, the points are the concentrations that are not zero, and a
trailing 0 is a blank (diluent only). Pure text, no lab."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from itertools import pairwise

_FLAGS = re.IGNORECASE
_UNIT = (
    r"(?:[pnuµm]?g|[pnuµm]M|U|IU|%|x|copies|cells|cfu|CFU|units)"
    r"(?:\s*/\s*(?:m[lL]|u[lL]|µ[lL]|L|well|rxn|reaction))?"
)
_NUM = r"\d+(?:\.\d+)?(?:[eE][+-]?\d+)?"
_LIST = re.compile(
    rf"(?<![\w.:/-]){_NUM}(?:\s*{_UNIT}\b)?(?:\s*(?:,|;|\band\b|&|->|>|/|,?\s*\bthen\b)\s*{_NUM}(?:\s*{_UNIT}\b)?){{2,}}",
    _FLAGS,
)
# "from 1000 ng/mL down to 15.6 ng/mL", "1e6 to 1e1 copies": the unit may be said once, last
_RANGE = re.compile(
    rf"(?:\bfrom\s+|(?<![\w.:/-]))(?P<hi>{_NUM})\s*(?P<u1>{_UNIT})?\s+"
    rf"(?:(?:down|all\s+the\s+way)\s+)?to\s+(?P<lo>{_NUM})\s*(?P<u2>{_UNIT})(?![\w/])",
    _FLAGS,
)
_PREFIX = {"p": 1e-12, "n": 1e-9, "u": 1e-6, "µ": 1e-6, "m": 1e-3}


def _scale(unit: str) -> float:
    """The SI prefix of a concentration unit ("mM" 1e-3, "ng/mL" 1e-9; none: 1)."""
    head = unit.strip()[:1]
    return _PREFIX.get(head, 1.0) if len(unit.split("/")[0].strip()) > 1 else 1.0


_CONCENTRATION = re.compile(rf"\d\s*{_UNIT}\b|\(\s*{_UNIT}\s*\)", _FLAGS)


@dataclass(frozen=True)
class Series:
    """A series read from its concentrations."""

    fold: float
    points: int
    blanks: int
    numbers: tuple[str, ...]


def _factor(ratios: list[float]) -> float | None:
    mid = sorted(ratios)[len(ratios) // 2]
    if mid < 1.2 or any(abs(r - mid) > 0.1 * mid for r in ratios):
        return None
    return float(round(mid)) if abs(mid - round(mid)) < 0.1 else round(mid, 2)


def series(text: str, fold: float | None = None) -> Series | None:
    """The series ``text`` spells out, or None. ``fold``: the factor the text states, which a
    concentration range ("from 1000 to 15.6 ng/mL in 2-fold steps") needs."""
    for m in _LIST.finditer(text):
        if re.match(r"\s*(?:u|µ|m)[lL]\b", text[m.end() :], _FLAGS):
            continue  # "40, 20, 10, 5 uL": volumes, well by well
        said = re.findall(_NUM, m.group(0))
        values = [float(v) for v in said]
        zeros = 0
        while values and values[-1] == 0:
            values.pop()
            zeros += 1
        if len(values) < 3 or not (_CONCENTRATION.search(text) or len(values) >= 4):
            continue
        if 0 in values:
            continue
        factor = _factor([a / b for a, b in pairwise(values)])
        if factor is not None:
            return Series(factor, len(values), zeros, tuple(said))
        # "column 1, 4000, 2000, ... and 0": the list read from the number before it
        factor = _factor([a / b for a, b in pairwise(values[1:])]) if len(values) >= 4 else None
        if factor is not None:
            return Series(factor, len(values) - 1, zeros, tuple(said[1:]))
    if fold and fold > 1 and (r := _RANGE.search(text)):
        hi = float(r.group("hi")) * _scale(r.group("u1") or r.group("u2"))
        lo = float(r.group("lo")) * _scale(r.group("u2"))
        if hi > lo > 0:
            points = round(math.log(hi / lo) / math.log(fold)) + 1
            return Series(fold, points, 0, (r.group("hi"), r.group("lo")))
    return None
