"""Concentrations as people write them in a normalisation: the target ("to 10 ng/uL", "at
2 nM"), each well's ("A1 25.3 ng/uL, B1 40", "A1-A3 (20, 40, 60 ng/µL)", a line per well) and
a mass per well ("50 ng of each"). Units are converted by ``pint``; a mass concentration and a
molar one cannot be compared without more than the request says.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import pint

from agents.task.planning._frames import Frame
from agents.task.planning._quantities import registry

_NUM = r"(\d+(?:\.\d+)?|\.\d+)"
# ng/uL, ng/µl, ug/mL, pg/uL, nM, pM, uM (molar: case matters, "nm" is a wavelength)
_UNIT = r"(?:(?i:[pnuµm]g|g)\s*/\s*(?i:[uµnm]l|l)|(?-i:[pnuµm]M)\b)"
CONC = re.compile(rf"(?<![\w.]){_NUM}\s*(?P<unit>{_UNIT})")
_TARGET = re.compile(
    rf"(?:(?:\b(?:to|at|of)|->|@)\s*(?<=\s|>|@)(?:a\s+)?(?:final\s+|target\s+|uniform\s+|common\s+)?(?:concentration\s+"
    rf"(?:of\s+)?)?"
    # "target 5 ng/uL", "target conc: 2 nM", "final concentration = 4 nM" (a label-like slot)
    rf"|\b(?:target|final)(?:\s+conc(?:entration)?\.?)?\s*(?:[:=]\s*|of\s+|is\s+|\s)\s*)"
    rf"(?:~|about\s+)?{_NUM}\s*(?P<unit>{_UNIT})",
    re.IGNORECASE,
)
_MASS = re.compile(
    rf"(?<![\w.]){_NUM}\s*(?P<unit>(?i:[pnuµ]g|fmol|pmol))\s+(?:(?:of\s+|from\s+)?(?:each|every)\b"
    # "to 10 ng in 5 uL", "50 ng (each) in a final 20 uL": a mass in each final volume
    r"|(?:\(?each\)?\s+)?(?=in\s+(?:a\s+)?(?:final\s+|total\s+)?(?:volume\s+of\s+)?\d))"
)
# (never a count: "mixing 5 times", "3 cycles", "2 fold", "30 s", "5 min")
BARE = re.compile(
    rf"(?<![\w.:/]){_NUM}(?![\w.]|\s*(?:u[lL]|µ[lL]|m[lL]|x\b"
    r"|(?i:times|cycles?|fold|rpm|min\w*|sec\w*|s\b|h\b|hours?)))"
)


@dataclass(frozen=True)
class Level:
    """A concentration (or a mass per well) in one canonical unit of its dimension."""

    value: float
    dimension: str  # "mass" (ng/uL), "molar" (nM) or "amount" (ng of each)
    start: int = 0
    end: int = 0


def _ureg() -> pint.UnitRegistry:
    """The quantities' registry: building a second one costs a request ~0.3 s the first time
    (its offset setting only concerns temperatures, never these units)."""
    return registry()


@cache
def _scale(unit: str) -> tuple[float, str]:
    """(factor to ng/uL or nM, dimension) of a unit as written, by pint, once per unit."""
    unit = unit.replace("µ", "u").replace(" ", "")
    if "/" in unit:
        top, bottom = unit.split("/")
        q = _ureg().Quantity(1.0, f"{top.lower()}/{bottom.lower().replace('l', 'L')}")
        return float(q.to("ng/uL").magnitude), "mass"
    q = _ureg().Quantity(1.0, unit[:-1].lower() + "molar" if len(unit) > 1 else "molar")
    return float(q.to("nanomolar").magnitude), "molar"


def _level(number: str, unit: str, start: int, end: int) -> Level:
    factor, dimension = _scale(unit)
    return Level(round(float(number) * factor, 9), dimension, start, end)


_SAID_UNIT = re.compile(rf"(?:\d\s*|\(\s*)(?P<unit>{_UNIT})")


def top_and_stock(marked: str, top: str, stock: str) -> tuple[Level, Level] | None:
    """The top of a series said by its concentrations (its unit found in ``marked``, the text
    with the liquids' names blanked) and the strength the stock's name says, when both are
    said in the same dimension ("1000 ... ug/mL" and "BSA 2 mg/mL")."""
    unit, own = _SAID_UNIT.search(marked), CONC.search(stock)
    if unit is None or own is None:
        return None
    a = _level(top, unit.group("unit"), 0, 0)
    b = _level(own.group(1), own.group("unit"), 0, 0)
    return (a, b) if a.dimension == b.dimension else None


# "..., 2 nM in 20 uL RSB": a concentration in a final volume, not after a well's bracket
_IN_FINAL = re.compile(
    rf"(?<![\w.(])(?<!\(\s){_NUM}\s*(?P<unit>{_UNIT})(?=\s+in\s+(?:a\s+)?(?:final\s+|total\s+)?"
    r"(?:volume\s+of\s+)?\d+(?:\.\d+)?\s*(?:u|µ)[lL]\b"
    # "10 ng/uL x 50 uL", "2 nM × 20 µL", "5 ng/uL @ 25 uL": the level times the final volume
    r"|\s*(?:[x×*@]|at)\s*\d+(?:\.\d+)?\s*(?:u|µ)[lL]\b)"
)


# "0.8 mg/mL final", "2 nM target": the level said before the word that makes it the target
_SAID_FINAL = re.compile(rf"(?<![\w.]){_NUM}\s*(?P<unit>{_UNIT})\s+(?:final|target)\b", re.I)


def target(text: str) -> Level | None:
    """The concentration every well is brought to ("normalise to 10 ng/uL")."""
    found = list(_TARGET.finditer(text))  # "A3 (45 uL at 30 ng/uL) to 15 ng/uL": "to" wins
    m = next((f for f in found if f.group(0).lower().startswith("to")), found[0] if found else None)
    if m is None and (m := _IN_FINAL.search(text) or _SAID_FINAL.search(text)) is not None:
        return _level(m.group(1), m.group("unit"), m.start(1), m.end())
    return _level(m.group(1), m.group("unit"), m.start(1), m.end()) if m else None


def mass(text: str) -> Level | None:
    """ "50 ng of each library": the mass each well gives (ng, dimension "amount"), or the
    moles ("5 fmol of each": fmol, dimension "moles"; over nM it gives uL)."""
    m = _MASS.search(text)
    if m is None:
        return None
    unit = m.group("unit").lower().replace("µ", "u")
    factor, dimension = _amount_scale(unit)
    return Level(round(float(m.group(1)) * factor, 9), dimension, m.start(), m.end())


@cache
def _amount_scale(unit: str) -> tuple[float, str]:
    if unit.endswith("mol"):
        return float(_ureg().Quantity(1.0, unit).to("fmol").magnitude), "moles"
    return float(_ureg().Quantity(1.0, unit).to("ng").magnitude), "amount"


def matches(amount: Level, c: Level) -> bool:
    """Whether a per-well amount can be taken from a concentration: ng from ng/uL, fmol from
    nM (1 nM is 1 fmol/uL)."""
    return (amount.dimension, c.dimension) in (("amount", "mass"), ("moles", "molar"))


def said(text: str) -> bool:
    """Whether the text gives a concentration at all."""
    return bool(CONC.search(text))


# "Qubit (ng/uL): 12.4, 8.0", "conc [nM]": the unit of the bare numbers, said once in brackets
_BRACKETED = re.compile(rf"[(\[]\s*(?:conc\w*\.?\s*,?\s*)?(?P<unit>{_UNIT})\s*[)\]]")


# "concentrations in ng/uL: 20, 10, 40", "Qubit values in nM:": the unit said in the label
_LABEL_UNIT = re.compile(
    rf"^(?:conc\w*|qubit|nanodrop|quant\w*|values?|readings?|yields?)\b[^:;]*?\bin\s+"
    rf"(?P<unit>{_UNIT})\s*:?\s*$",
    re.IGNORECASE,
)


def bracketed_unit(text: str) -> str | None:
    """The unit a label or a table's header gives its numbers in brackets ("Qubit (ng/uL)"),
    or says of them ("concentrations in ng/uL")."""
    m = _BRACKETED.search(text) or _LABEL_UNIT.match(text.strip())
    return m.group("unit") if m else None


def per_well(
    frame: Frame,
    rows: int,
    cols: int,
    skip: list[Level],
    default: str | None = None,
    elsewhere: frozenset[int] = frozenset(),
) -> list[tuple[str, Level]]:
    """(well, concentration) for each well the text gives one, in the order written: a
    number after each well, or a list of numbers after a run of wells ("A1, B1 at 20, 40");
    a number without a unit takes the unit the others are written in, else ``default``.
    ``elsewhere``: where the well sets of other plates start ("A1 (25 ng/uL) -> norm_out A1")."""
    text = frame.text
    taken = [(s.start, s.end) for s in skip]
    taken += [(m.start, m.end) for m in frame.ents.liquids]  # "10 mM Tris-HCl" is a name
    numbers: list[tuple[int, int, str, str | None]] = []
    for m in CONC.finditer(text):
        if not any(a <= m.start(1) < b for a, b in taken):
            numbers.append((m.start(), m.end(), m.group(1), m.group("unit")))
    for m in BARE.finditer(text):
        inside = any(a <= m.start() < b for a, b, _, _ in numbers)
        if not inside and not any(a <= m.start() < b for a, b in taken):
            numbers.append((m.start(), m.end(), m.group(1), None))
    sets = sorted(frame.ents.wellsets, key=lambda w: w.start)
    numbers = [n for n in numbers if not any(w.start <= n[0] < w.end for w in sets)]
    sets = [w for w in sets if w.start not in elsewhere]
    numbers.sort()
    units = {u for *_, u in numbers if u}
    default = bracketed_unit(text) or default
    unit = units.pop() if len(units) == 1 else default if not units else None
    out: list[tuple[str, Level]] = []
    pending: list[str] = []
    for i, ws in enumerate(sets):
        wells = ws.expand(rows, cols)
        until = sets[i + 1].start if i + 1 < len(sets) else len(text)
        mine = [n for n in numbers if ws.end <= n[0] < until]
        pending.extend(wells)
        if not mine:
            continue
        if any(not (u or unit) for *_, u in mine):
            return []  # a number whose unit is unsure: its well's concentration is asked for
        for well, (a, b, num, u) in zip(pending, mine, strict=False):
            out.append((well, _level(num, u or unit or "", a, b)))
        pending = []
    return out
