"""A liquid the clause names that its source well does not hold: "20 uL of water from reservoir
A1" when A1 holds dye is asked about (which liquid is meant), never planned under the well's
liquid.

Only names that are plainly a liquid fire: a common reagent ("water", "EtOH", "PBS", "DMSO",
"Triton"), never a class word that may stand for the well's own liquid ("buffer", "media",
"reagent", "stain", "sample"), never a verb or a noun of lab English. The name agrees with the
well when a word of one is a word of the other (short forms counted: "H2O" is "water"), or when
rapidfuzz finds one inside the other ("DPBS" and "1x PBS", "DMEM" and "MEM + 10% FBS").
"""

from __future__ import annotations

import re

from rapidfuzz import fuzz

from agents.task.planning._frames import Frame
from agents.task.planning._liquid_names import _BY_WORD
from agents.task.planning._outcomes import Ask
from agents.task.planning._world import World
from agents.task.planning.families._written import written_liquid

# Substances by name: what a well either holds or does not. Class words ("buffer", "medium",
# "solution", "dye", "stain", "mix", "reagent", "sample") are left out on purpose: "media from
# res A5" may well be the lab's "MEM + 10% FBS".
_REAGENT = re.compile(
    r"\b(?:water|h2o|dh2o|ddh2o|milli-?q|mq|nuclease-free|ethanol|etoh|methanol|meoh|"
    r"isopropanol|isopropyl|ipa|acetone|acetonitrile|chloroform|phenol|dmso|d?pbs|pbs-?t|hbss|"
    r"t?bs-?t|tbs|te|tris|edta|glycerol|bleach|formamide|formaldehyde|formalin|pfa|"
    r"paraformaldehyde|mineral\s+oil|tween(?:-?20)?|triton|trypsin|trizol|fbs|serum|bsa|dmem|"
    r"rpmi|opti-?mem|lb|saline|hcl|naoh|nacl|sds)\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z0-9]+")


def _words(name: str) -> set[str]:
    """The words of a name, each short form as its long form ("h2o" -> "water")."""
    return {(_BY_WORD.get(w) or (w,))[0] for w in _WORD.findall(name.lower())}


def _agrees(written: str, held: str) -> bool:
    a, b = written.lower(), held.lower()
    if _words(a) & _words(b):
        return True
    return fuzz.partial_ratio(a, b) >= 85 and min(len(a), len(b)) >= 3


def check(frame: Frame, src_sets: list[tuple[str, list[str] | None]], world: World) -> None:
    """Ask which liquid is meant when the clause names a reagent the lab does not know and
    its source wells hold another liquid."""
    if frame.liquid is not None or not _REAGENT.search(frame.text):
        return  # a lab liquid is compared by the entity coverage; no reagent named: nothing
    written = re.sub(r"\s+(?:out|off|away|up|over)$", "", written_liquid(frame) or "", flags=re.I)
    if not written or not _REAGENT.search(written):
        return
    held: dict[str, list[str]] = {}
    for lw, wells in src_sets:
        for well in wells or []:
            for name, vol in world.contents.get((lw, well), {}).items():
                if vol > 0:
                    held.setdefault(name, []).append(f"{lw} {well}")
    if not held or any(_agrees(written, name) for name in held):
        return
    where = ", ".join(f"{places[0]} holds {name}" for name, places in held.items())
    raise Ask(
        f"{where}, not {written}: which liquid do you mean, the {' or '.join(held)} there, or "
        f"{written} from another place?",
        ["liquid", "source"],  # the question is about either
        sorted({*held, *world.liquids}),
    )
