"""Everything a clause leaves open, so that one question names all of it.

A builder stops at the first thing it cannot fill ("Which plate should I pipette into?"). When
the clause also leaves out other things ("Add buffer to the plate": the volume too; "Shake
it": the plate, the time and the speed), asking one at a time costs the person a round for
each and hides what else is needed. Here the clause's frame is read for the other gaps of its
family, and the question gains them, in the order a person would settle them. Only what the
clause plainly leaves out is added: a volume the plan derives (a final volume, a fold, "all
of it"), a liquid a well gives, a plate the clause before named are not gaps.
"""

from __future__ import annotations

import re

from agents.task.planning import _resolve as r
from agents.task.planning._frames import Frame
from agents.task.planning._outcomes import Ask
from agents.task.planning.families._written import written_liquid

_FLAGS = re.IGNORECASE
# Words that let a plan derive the volume: "pool all of A1:A6", "the rest", "top up".
_DERIVED = re.compile(
    r"\b(?:all|everything|entire|whole|rest|remaining|remainder|equal|top|fill(?:ed)?\s+up|"
    r"normali[sz]e|dilut\w*|fold|ratio|1:\d|same\s+volume|half)\b",
    _FLAGS,
)
_PLATE_WORDS = re.compile(r"\b(?:the|a|an|plates?|wells?|block|trough|reservoir)\b", _FLAGS)
_SHAKING = re.compile(  # a heater-shaker named is no shaking asked for; "800rpm" is
    r"\b(?<!heater[\s-])(?<!heater)(?:shak\w*|agitat\w*|orbital|mix\w*\s+on)\b|(?<![a-z])rpm\b",
    _FLAGS,
)
_STILL = re.compile(r"\b(?:without|no|don'?t|do\s+not)\s+shak\w*|\bstatic\b", _FLAGS)
_WARM = re.compile(
    r"\b(?:room\s+temp\w*|rt|ambient|let|leave|rest|sit|wait|shak\w*|agitat\w*|rpm)\b", _FLAGS
)
_PHRASE = {
    "volume": "how many uL per well",
    "liquid": "which liquid",
    "source": "where should I take it from",
    "plate": "which plate",
    "temperature": "at what temperature",
    "duration": "for how long",
    "speed": "at what speed (rpm)",
    "mode": "absorbance, fluorescence or luminescence",
}


def widen(ask: Ask, frame: Frame | None, p: r.Planning) -> Ask:
    """``ask`` naming, after what it asks, the other gaps of ``frame`` (its clause)."""
    if frame is None:
        return ask
    more = [g for g in _gaps(frame, p) if g not in ask.missing]
    if "destination" in ask.missing:
        more = [g for g in more if g != "plate"]  # asking where covers which plate
    if "liquid" in ask.missing:
        more = [g for g in more if g != "source"]  # which liquid, among the lab's, says where
    if not more:
        return ask
    also = "; ".join(_PHRASE[g] for g in more)
    return Ask(f"{ask.question} Also: {also}?", [*ask.missing, *more], ask.options)


def _gaps(frame: Frame, p: r.Planning) -> list[str]:
    if frame.family == "transfer":
        return _liquid_gaps(frame, p)
    if frame.family == "incubate":
        return _incubate_gaps(frame, p)
    if frame.family == "read":
        return _read_gaps(frame, p)
    return []


def _no_plate(frame: Frame, p: r.Planning) -> bool:
    """No plate named, none carried from a clause before, and several it could be."""
    named = frame.ents.labware or frame.ents.unknown_labware
    return not named and p.plate is None and not p.named and len(r.work_plates(p.world)) > 1


def _liquid_gaps(frame: Frame, p: r.Planning) -> list[str]:
    out = []
    volumes = [q for q in frame.ents.quantities if q.kind == "volume"]
    if (frame.ents.vague and not volumes) or (  # "50 uL to a few wells": the wells are vague
        not volumes
        and not frame.ents.fold
        and not _DERIVED.search(frame.text)
        and not p.fill
        and p.head_volume is None  # "Transfer 5 uL: A1 to H12; B2 to G12": the heading's
    ):
        out.append("volume")
    if (
        frame.liquid is None
        and all(role == "dest" for role, _ in frame.places)  # "pool B1-B3 into ...": a source
        and not frame.ents.liquids
        and p.liquid is None
        and not re.search(r"\bfrom\b", frame.text, _FLAGS)
    ):
        # "of water" in a lab without water: which liquid, or where it is, is as open as how
        # much; a clause that writes no liquid at all leaves just which liquid
        unknown = _PLATE_WORDS.sub("", written_liquid(frame) or "").strip()
        out.extend(["liquid", "source"] if unknown else ["liquid"])
    if frame.dest.wells is not None and _no_plate(frame, p):
        out.append("plate")
    return out


def _incubate_gaps(frame: Frame, p: r.Planning) -> list[str]:
    out = []
    if _no_plate(frame, p) and not frame.ents.liquids:
        out.append("plate")
    shaking = bool(_SHAKING.search(frame.text)) and not _STILL.search(frame.text)
    if frame.temperature is None and not _WARM.search(frame.text):
        out.append("temperature")
    if frame.duration is None:
        out.append("duration")
    if shaking and frame.speed is None:
        out.append("speed")
    return out


def _read_gaps(frame: Frame, p: r.Planning) -> list[str]:
    return ["plate"] if _no_plate(frame, p) else []
