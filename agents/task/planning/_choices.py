"""What a request leaves open by offering two values: "10-20 uL", "5-10 min", "10 or 20 uL",
"dye or buffer", one incubation "at 25 and 37 C". The planner never picks one: it asks,
offering the values the person gave.
("between 20 and 25 C" is often a tolerance, so it is not asked.)"""

from __future__ import annotations

import re
from itertools import pairwise

from agents.task.planning._frames import Frame
from agents.task.planning._outcomes import Ask

_FLAGS = re.IGNORECASE
_N = r"\d+(?:\.\d+)?"
_UNIT = r"(?:u[lL]|m[lL]|microlit\w*|millilit\w*|s|sec\w*|min\w*|h|hrs?|hours?|C|degrees?|rpm|nm)\b"
_SPAN = re.compile(
    rf"(?<![\w/.:])(?P<a>{_N})\s*(?P<au>{_UNIT})?\s*"
    rf"(?P<sep>-|or|and)\s*(?P<b>{_N})\s*(?P<u>{_UNIT})",
    _FLAGS,
)
# "column 2 to 50 uL", "rows 1-3 10 uL": the first number counts wells, not the setting.
_COUNTED = re.compile(
    r"\b(?:columns?|cols?|rows?|wells?|lanes?|troughs?|slots?|steps?|x)\s*$", _FLAGS
)
_WHAT = {"volume": "volume", "duration": "duration", "temperature": "temperature",
         "speed": "speed", "wavelength": "wavelength"}  # fmt: skip


def check(frame: Frame) -> None:
    """Ask when ``frame`` gives two values for one setting, or two liquids joined by "or"."""
    text = frame.text
    for m in _SPAN.finditer(text):
        a, b = m.group("a"), m.group("b")
        if _COUNTED.search(text[: m.start()]):
            continue  # "column 2 - 50 uL": the first number counts wells
        if m.group("au") and m.group("au").lower() != m.group("u").lower():
            continue  # "2 min - 500 rpm": two settings, not two values of one
        q = next((q for q in frame.ents.quantities if q.start <= m.end("u") <= q.end), None)
        if q is None or q.kind not in _WHAT or a == b:
            continue
        if m.group("sep").lower() == "and" and (
            frame.family != "incubate" or q.kind not in ("temperature", "speed")
        ):
            continue  # "at 405 and 450 nm" is two reads; "incubate at 25 and 37 C" is asked
        if re.search(r"\bbetween\s*$", text[: m.start()], _FLAGS):
            continue  # "between 20 and 25 C": a tolerance
        unit = m.group("u")
        raise Ask(
            f"'{m.group(0).strip()}' gives two values. Which {_WHAT[q.kind]}: {a} {unit} or "
            f"{b} {unit}?",
            [_WHAT[q.kind]],
            [f"{a} {unit}", f"{b} {unit}"],
        )
    liquids = frame.ents.liquids
    for x, y in pairwise(liquids):
        if x.name != y.name and re.fullmatch(
            r"\s*(?:,\s*)?or\s+(?:the\s+)?|\s*/\s*", text[x.end : y.start]
        ):  # "dye or buffer", "dye/buffer": one of them, never both
            raise Ask(f"Which liquid: {x.name} or {y.name}?", ["liquid"], [x.name, y.name])
    for x, y in pairwise(frame.ents.labware):
        if x.name != y.name and _OR_BETWEEN.fullmatch(text[x.end : y.start]):
            raise Ask(f"Which plate: {x.name} or {y.name}?", ["plate"], [x.name, y.name])
    _either_wells(frame)


def _either_wells(frame: Frame) -> None:
    """Ask when wells are offered as alternatives ("from res A1 or A2", "into A1 (or A2)",
    "columns 1 or 2"): the planner never uses both."""
    text, sets = frame.text, frame.ents.wellsets
    for i, w in enumerate(sets):
        nxt = sets[i + 1] if i + 1 < len(sets) else None
        if not (
            re.search(r"\bor\b", w.text, _FLAGS)
            or (nxt is not None and _OR_BETWEEN.fullmatch(text[w.end : nxt.start]))
        ):
            continue
        said = w.text if nxt is None or w.end > nxt.start else f"{w.text} or {nxt.text}"
        source = re.search(r"\b(?:from|out\s+of)\b(?![^,;]*\b(?:to|into|onto)\b)", text[: w.start])
        missing = "source" if source else "wells"
        raise Ask(f"'{said}' offers a choice: which wells do you mean?", [missing])


_OR_BETWEEN = re.compile(r"\s*,?\s*\(?\s*or\s+(?:(?:well|column|col|row)s?\s+)?", _FLAGS)
