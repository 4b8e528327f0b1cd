"""Which slot of a frame each quantity of a clause fills: a volume per well, a total shared
out over the wells, a final level, a mixing volume; the first temperature, duration, speed and
the wavelengths.

A volume is a total when the words around it say so ("a total of 300 uL", "300 uL in total",
"300 uL PBS total split across A1-A3", "split 600 uL equally between ..."), a final level when
they name what the wells end at ("to 100 uL final"), and otherwise what each well receives.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agents.task.planning._frames import Frame
    from agents.task.planning._quantities import Quantity

_FLAGS = re.IGNORECASE
_FINAL = re.compile(
    r"(?:\b(?:ending|ends?|finishing|leaving)\s+(?:up\s+)?(?:with|at)\s+$|\bfinal(?:\s+vol(?:ume)?\.?)?(?:\s+(?:of|is|=|:))?\s*$|\bto\s+(?:a\s+)?(?:final|total)\s+(?:volume\s+)?(?:of\s+)?$"
    r"|\b(?:top(?:ped)?\s+(?:up|off)|bring|brought|fill(?:ed)?|make|made|up|adjust|normali[sz]e[ds]?|with)\b"
    r"[^,;]{0,40}\bto\s+$"
    r"|\bin\s+(?:a\s+)?(?:final\s+)?(?:volume\s+of\s+)?$|\btotal\s+vol(?:ume)?\.?(?:\s+of)?\s*$"
    # "so each well reaches 60 uL", "until every well holds 100 uL", "bring each to 20 uL"
    r"|\b(?:so\s+(?:that\s+)?|until\s+)(?:each|every|all|the)?\s*(?:of\s+them\s+|wells?\s+|one\s+)?"
    r"(?:reach(?:es)?|is\s+at|are\s+at|has|have|holds?|contains?|ends?\s+(?:up\s+)?(?:at|with))\s+"
    r"(?:a\s+)?(?:final\s+|total\s+)?(?:volume\s+of\s+)?$"
    r"|\bbring(?:ing)?\s+(?:each|every|all|them|it)\b[^,;]{0,30}\bto\s+$)",
    _FLAGS,
)
_STEPS_AFTER = re.compile(r"\s*(?:steps?|transfers?|increments?|portions?|aliquots?)\b", _FLAGS)
_FINAL_AFTER = re.compile(
    r"^\s*(?:(?:per|a|each|/)\s*well\s+|each\s+)?(?:final|total\s+volume|f\.?v\.?)\b", _FLAGS
)
_TOTAL = re.compile(r"(?:\ba\s+total\s+of\s*$|\btotal\s+of\s*$)", _FLAGS)
# "Divide 960 uL of PBS over column 1": one volume shared out.
_DIVIDE = re.compile(r"^(?:divide|split|share(?:\s+out)?|apportion)\b", _FLAGS)
_OVER = re.compile(r"\b(?:over|across|between|among(?:st)?)\b", _FLAGS)
# "300 uL PBS, split over C1-C3", "600 uL altogether": an amount for all the wells together
_TOTAL_AFTER = re.compile(
    r"^\s*,?\s*(?:in\s+total|total\b(?!\s+volume)|altogether|all\s+together|in\s+all\b(?!\s*\w)"
    r"|(?:split|divided|spread|shared)\b"
    r"|(?:of\s+[\w\s%-]{1,30}?\s+)?(?:evenly|equally)\b)",
    _FLAGS,
)
_TOTAL_VOLUME = re.compile(r"\btotal\s+vol(?:ume)?\.?(?:\s+of)?\s*$", _FLAGS)
_SHARED = re.compile(
    r"^[^,;]{0,40}?\b(?:split|divided|spread|shared|distributed|evenly|equally)\b", _FLAGS
)
_PER_WELL_AFTER = re.compile(r"^\s*(?:per\s+well|each|/\s*well|a\s+well|into\s+each)\b", _FLAGS)
_INTO_N = re.compile(
    r"\binto\s+(\d{1,3})\s+(?:equal\s+)?(?:aliquots?|portions?|parts?|fractions?|shares?)\b", _FLAGS
)
_COUNT_X = re.compile(r"\b(\d{1,3})\s*[x×*]\s*$")
_MIX_VOLUME = re.compile(r"\bmix(?:ing|ed)?\b[^,;.]{0,30}?(?:with|at|using|of|volume)?\s*$", _FLAGS)


_OF = re.compile(r"^\s*(?:of\s+)?$", _FLAGS)


def _past_liquid(frame: Frame, q: Quantity) -> str:
    """The text after ``q`` and the liquid named right after it ("300 uL PBS| total split
    across"), so words about the amount are read past the liquid's name; "" when no liquid
    follows the volume."""
    text = frame.ents.text
    for m in frame.ents.liquids:
        if m.start >= q.end and _OF.match(text[q.end : m.start]):
            return text[m.end :]
    return ""


def assign_quantities(frame: Frame) -> None:
    """Volumes into per-well / total / final / mixing slots; the first of each other kind."""
    text = frame.ents.text
    named = text  # "2x SYBR mix (10 uL/well)": a liquid's name says no mixing
    for m in frame.ents.liquids:
        named = named[: m.start] + "#" * (m.end - m.start) + named[m.end :]
    for q in frame.ents.quantities:
        before, after = text[: q.start], text[q.end :]
        if q.kind == "volume":
            in_steps = _STEPS_AFTER.match(after)  # "in 20 uL steps": what each step carries
            if _MIX_VOLUME.search(named[: q.start][-40:]) and not _FINAL.search(before[-60:]):
                frame.mix_volume = frame.mix_volume or q
            elif _TOTAL_VOLUME.search(before[-30:]) and _SHARED.search(after):
                frame.total = frame.total or q  # "a total volume of 400 uL X divided among"
            elif (_FINAL.search(before[-60:]) and not in_steps) or _FINAL_AFTER.match(after):
                frame.final = frame.final or q
            elif (
                _TOTAL.search(before[-20:])
                or _TOTAL_AFTER.match(after)
                or _TOTAL_AFTER.match(_past_liquid(frame, q))
                or (
                    _DIVIDE.match(text)
                    and not frame.total
                    and (_OVER.search(after) or _INTO_N.search(after))
                )
            ):
                frame.total = frame.total or q
            else:
                frame.volumes.append(q)
                if frame.volume is None or _PER_WELL_AFTER.match(after):
                    frame.volume = q
        elif q.kind == "temperature":
            frame.temperature = frame.temperature or q
        elif q.kind == "duration":
            frame.duration = frame.duration or q
        elif q.kind == "speed":
            frame.speed = frame.speed or q
        elif q.kind == "wavelength":
            frame.wavelengths.append(q)
    if (into := _INTO_N.search(text)) and frame.total is not None and frame.volume is None:
        frame.extra["aliquots"] = int(into.group(1))  # "split 1.5 mL ... into 3 aliquots"
    counted = [  # "kinase buffer 1x 25 uL": a count that ends a liquid's name counts nothing
        q
        for q in frame.volumes
        if (x := _COUNT_X.search(text[: q.start]))
        and not any(m.start <= x.start() < m.end for m in frame.ents.liquids)
    ]
    if counted:  # "split 4 mL into 8 x 500 uL aliquots": 500 uL a well, 4 mL in all
        said = _COUNT_X.search(text[: counted[0].start])
        frame.extra["aliquots"] = int(said.group(1)) if said else 0
        others = [v for v in frame.volumes if v is not counted[0]]
        frame.volume, frame.volumes = counted[0], [counted[0]]
        frame.total = frame.total or (others[0] if others else None)
