"""Dilution factors said by strengths rather than by a ratio: two concentrations ("from 10x
to 1x", "2 mg/mL down to 0.5 mg/mL") or a stock whose name says its strength ("make 1x SYBR
from the 2x SYBR mix")."""

from __future__ import annotations

import re

# A concentration: "10x", "1X", "2 mg/mL", "500 ng/ml", "10 uM", "5%".
_CONC = r"(\d+(?:\.\d+)?)\s*(x|[pnuµm]?g\s*/\s*[munµ]?[lL]|[pnuµm]?M|%)(?![\w/])"
_CONC_PAIR = re.compile(
    rf"\bfrom\s+(?:(?:a|the|an)\s+)?{_CONC}(?:\s+[\w-]+){{0,2}}?\s+(?:down\s+)?to\s+(?:a\s+)?{_CONC}"
    rf"|\b{_CONC}(?:\s+[\w-]+){{0,4}}?\s+(?:down\s+)?to\s+(?:a\s+)?{_CONC}"
    rf"|\b(?:to\s+(?:a\s+)?)?{_CONC}(?:\s+[\w-]+){{0,3}}?\s+from\s+(?:(?:a|the|an)\s+)?{_CONC}",
    re.IGNORECASE,
)
_PREFIXES = {"p": 1e-12, "n": 1e-9, "u": 1e-6, "µ": 1e-6, "m": 1e-3}


def _conc_value(number: str, unit: str) -> tuple[float, str]:
    """A concentration in its unit's base ("2 mg/mL" -> (2e-3, "g/l")), for comparing two."""
    unit = unit.replace(" ", "").lower()
    if unit in ("x", "%"):
        return float(number), unit
    head, _, per = unit.partition("/")
    scale = _PREFIXES.get(head[0], 1.0) if len(head) > 1 else 1.0
    per_scale = _PREFIXES.get(per[0], 1.0) if len(per) > 1 else 1.0
    return float(number) * scale / per_scale, f"{head[-1]}/{per[-1:] or '-'}"


_TARGET = re.compile(
    rf"(?:\b(?:to|make|makes|prepare|at|final|working|of)\s+(?:a\s+)?(?:final\s+)?(?:conc\w*\s+(?:of\s+)?)?"
    rf"{_CONC}|(?<![\w.])(1)\s*(x)\b)",
    re.IGNORECASE,
)


_DILUENT_BEFORE = re.compile(r"\b(?:with|using|in|diluent:?)\s+(?:the\s+|some\s+)?$", re.IGNORECASE)


def diluent_said(before: str) -> bool:
    """Whether a liquid named after ``before`` is what something is diluted with ("to 1 nM with
    10 mM Tris-HCl"): its name's strength is not the stock's."""
    return bool(_DILUENT_BEFORE.search(before))


def name_fold(text: str, names: list[str]) -> float | None:
    """The fold from a stock whose lab name says its strength ("2x SYBR mix", "BSA 2 mg/mL")
    to the strength ``text`` asks for ("make 1x SYBR from the 2x SYBR mix", "dilute the BSA
    to 0.5 mg/mL"); None unless exactly one named stock gives one."""
    target = _TARGET.search(text)
    if target is None:
        return None
    g = [x for x in target.groups() if x is not None]
    want, unit = _conc_value(g[0], g[1])
    found = set()
    for name in names:
        for m in re.finditer(_CONC, name, re.IGNORECASE):
            have, unit_have = _conc_value(m.group(1), m.group(2))
            if unit_have == unit and want > 0 and have > want:
                found.add(round(have / want, 4))
    return found.pop() if len(found) == 1 else None


def conc_fold(text: str) -> float | None:
    """The fold between two concentrations a dilution is said by ("from 10x to 1x", "5X to
    1X", "1X buffer from the 10X stock", "2 mg/mL to 0.5 mg/mL"), None when none is said."""
    m = _CONC_PAIR.search(text)
    if m is None:
        return None
    g = [x for x in m.groups() if x is not None]
    (a, ua), (b, ub) = _conc_value(g[0], g[1]), _conc_value(g[2], g[3])
    a, b = max(a, b), min(a, b)  # a dilution goes from the higher to the lower
    if ua != ub or b <= 0 or a <= b:
        return None
    return round(a / b, 4)


# "dilute 10 uL of lysate A1 with 90 uL PBS", "dilute X (5 uL) in 45 uL buffer": the two parts
# of one dilution, said by their volumes (never "in 100 uL final": that is the whole)
_PARTS = re.compile(
    r"^(?:please\s+)?dilute\b[^;]*?(?<![\w.])(\d+(?:\.\d+)?)\s*u[lL]\b\)?[^;]*?"
    r"(?:\bwith|\busing|\bin|\binto|\+)\s+(\d+(?:\.\d+)?)\s*u[lL]\b"
    r"(?!\s*(?:final|total|volume|each|per|/|of\s+(?:final|total)))",
    re.IGNORECASE,
)


# "dilute 10 uL of lysate A1 in 100 uL final", "dilute 10 uL X to a final volume of 100 uL"
_WHOLE = re.compile(
    r"^(?:please\s+)?dilute\b[^;]*?(?<![\w.])(\d+(?:\.\d+)?)\s*u[lL]\b[^;]*?\b(?:in|to|into)\s+"
    r"(?:(?:a|the)\s+)?(?:(?P<said>final|total)\s+(?:volume\s+)?(?:of\s+)?)?"
    r"(\d+(?:\.\d+)?)\s*u[lL]\b(?(said)|\s*(?:final|total)\b)",
    re.IGNORECASE,
)


# "equal parts dye and buffer", "half-strength", "dilute the dye by half": one part in two
# (never "0.6 mL across B1-B6 (equal volumes)": a share)
_HALF = re.compile(
    r"\bequal\s+(?:parts|volumes)\s+(?:of\s+)?\S[^,;()]*?\s(?:and|with|\+)\s|\bhalf[\s-]strength\b"
    r"|\bdilut\w*\s+(?:[^\s,;]+\s+){0,4}?(?:by|in)\s+half\b",
    re.IGNORECASE,
)


def parts_fold(text: str) -> float | None:
    """The fold a dilution said by its two parts makes ("dilute 10 uL X with 90 uL Y": 10), by
    its stock's part and the whole ("dilute 10 uL X in 100 uL final": 10), or in halves."""
    if _HALF.search(text):
        return 2.0
    if m := _PARTS.search(text):
        stock, diluent = float(m.group(1)), float(m.group(2))
        return round((stock + diluent) / stock, 6) if 0 < stock < diluent else None
    if m := _WHOLE.search(text):
        stock, whole = float(m.group(1)), float(m.group(3))
        return round(whole / stock, 6) if 0 < stock < whole else None
    return None
