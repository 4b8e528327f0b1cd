"""What the planner asks when no family reads a clause (its verb is not one the lab knows).

A clause that names where a liquid goes is still an addition whatever its verb ("block
plate_2", "handle P A1-A6 with PBS", "process P column 3 with 100 uL"): the question is about
the one thing it leaves open (the volume, the liquid, or both), never "what do you mean".
Anything else is answered with examples of requests the planner understands.
"""

from __future__ import annotations

import re

from agents.task.planning._frames import Frame
from agents.task.planning._outcomes import Ask
from agents.task.planning._resolve import Planning
from agents.task.planning._vocabulary import TREAT_VERBS
from agents.task.planning.families import Family

# Verbs that put a liquid into what they name ("block plate_2", "quench the reaction in P row A",
# "give P fresh medium", "plate the cells into P"), with no volume said.
_TREATS = re.compile(
    rf"(?:{TREAT_VERBS}|prime|quench|stop|inoculate|induce|neutrali[sz]e|give|plate|seed|charge"
    r"|set\s+up|prep(?:are)?|make\s+up|assemble|elute)\b(?![^,;]*\d\s*(?:u|m)l\b)",
    re.IGNORECASE,
)
# Verbs that say only that something is to be done to what they name ("handle", "process",
# "deal with", "take care of", "do ... with"): with a liquid or a volume and wells, an addition.
_VAGUE = re.compile(
    r"(?:(?:please|pls|plz|kindly|can\s+you|could\s+you)\s+)?(?:handle|process|deal\s+with"
    r"|take\s+care\s+of|work\s+on|sort(?:\s+out)?|do(?:\s+something|\s+stuff)?(?:\s+(?:with|to|on))?)\b",
    re.IGNORECASE,
)
# A wash said as a noun ("do the usual wash on P", "give P a quick rinse", "2 washes of P")
_A_WASH = re.compile(r"\b(?:wash|rinse)(?:es)?\b(?!\s+(?:buffer|solution|liquid))", re.IGNORECASE)
# A clause that names where wells go or come from ("src A1 -> P A1", "P A1 from src A1")
_FROM_TO = re.compile(r"->|\b(?:to|into|onto|from)\b", re.IGNORECASE)
EXAMPLES = [
    "transfer 50 uL from reservoir A1 to plate_1 A1:A12",
    "add 100 uL of buffer to row A of plate_2 with a fresh tip for each",
    "with the 8-channel, add 50 uL of buffer to columns 1-6 of plate_1",
    "make a 2-fold serial dilution of dye across row A of plate_1, 100 uL final volume",
    "mix plate_1 A1 5 times with 50 uL",
    "shake plate_1 at 37 C for 5 min at 600 rpm",
    "read absorbance of plate_1 at 600 nm",
    "move plate_1 to the reader",
    "run 35 cycles of 95 C for 15 s, 60 C for 30 s on plate_1, then hold at 4 C",
]


def _not_understood(frame: Frame, p: Planning) -> str:
    ents = frame.ents
    where = ents.labware or ents.wellsets
    what = ents.labware[-1].name if ents.labware else "those wells"
    liquid = ents.liquids[0] if ents.liquids and ents.liquids[0].sure else None
    said_volume = any(q.kind == "volume" for q in ents.quantities)
    if where and _TREATS.match(frame.text):
        if liquid is not None:  # "plate the cells into plate48": how much
            raise Ask(f"How many uL of {liquid.name} per well of {what}?", ["volume"])
        _ask_liquid(frame, p, what, volume=False)
    if where and _A_WASH.search(frame.text):  # "do the usual wash on P": what a wash needs
        _ask_wash(p, what, liquid, said_volume)
    if where and ents.wellsets and _VAGUE.match(frame.text):
        if liquid is not None and not said_volume:  # "handle P A1-A6 with PBS": how much
            raise Ask(f"How many uL of {liquid.name} per well of {what}?", ["volume"])
        if liquid is None and said_volume:  # "process P column 3, 100 uL": of which liquid
            _ask_liquid(frame, p, what, volume=True)
    if ents.wellsets and ents.labware:
        _ask_addition(frame, p, what, liquid, said_volume)
    if liquid is not None and not where and not ents.instruments:
        if frame.clause.label and not said_volume:  # "Row A: buffer" under "P setup:"
            raise Ask(f"How many uL of {liquid.name} per well?", ["volume"])
        _ask_destination(liquid.name, said_volume)
    raise Ask(
        f"I did not understand '{frame.clause.said}'. I understand requests like these, alone "
        "or one after another:",
        ["action"],
        EXAMPLES,
    )


def _ask_addition(frame: Frame, p: Planning, what: str, liquid: object, said_volume: bool) -> None:
    """Wells of a plate named with a liquid or a volume, and no verb ("need dye in P col 1",
    "P row A needs buffer", "row A of P - 50 uL"): an addition, asked what it leaves open."""
    if liquid is not None and not said_volume:
        raise Ask(
            f"How many uL of {getattr(liquid, 'name', liquid)} per well of {what}?", ["volume"]
        )
    if liquid is None and said_volume and not frame.ents.liquids:
        _ask_liquid(frame, p, what, volume=True)
    if not said_volume and len(frame.ents.wellsets) >= 2 and _FROM_TO.search(frame.text):
        raise Ask(  # "dw_src A1-H1 -> P A1-H1", "P A1 from src A1": a copy, how much is open
            f"How many uL should I move into each well of {what}?", ["volume"]
        )


def _ask_destination(liquid: str, said_volume: bool) -> None:
    """A liquid named with no place and no verb ("some dye please", "I need 12 wells of dye"):
    where it goes (and how much, unless said)."""
    if said_volume:
        raise Ask(f"Which wells of which plate should the {liquid} go into?", ["destination"])
    raise Ask(
        f"Which wells of which plate should the {liquid} go into, and how many uL per well?",
        ["destination", "volume"],
    )


def _ask_wash(p: Planning, what: str, liquid: object, said_volume: bool) -> None:
    """Ask what a wash said as a noun leaves open: its liquid, its volume per well."""
    if liquid is None:
        missing = ["liquid"] if said_volume else ["liquid", "volume"]
        also = "" if said_volume else ", and how many uL per well"
        raise Ask(
            f"Which liquid should I wash {what} with{also}?", missing, sorted(p.world.liquids)
        )
    if not said_volume:
        raise Ask(f"How many uL per well should each wash of {what} be?", ["volume"])


def _ask_liquid(frame: Frame, p: Planning, what: str, *, volume: bool) -> None:
    """Ask which liquid goes into ``what`` (and how much, unless the volume was said)."""
    if volume:
        raise Ask(
            f"Which liquid should go into {what} for '{frame.clause.said}'?",
            ["liquid"],
            sorted(p.world.liquids),
        )
    raise Ask(  # "block plate_2", "feed cells_24 row A": a liquid goes in, unsaid
        f"Which liquid should go into {what} for '{frame.clause.said}', and how many uL per well?",
        ["liquid", "volume"],
        sorted(p.world.liquids),
    )


NOT_UNDERSTOOD = Family("not understood", lambda c, e: None, _not_understood)
