"""A volume said after its transfer, as a clause of its own: "cmpd B3 -> assay A24, cmpd C7
-> assay B24; 1.5 uL each". The piece names no place, liquid or action, only how much; the
transfer before it names no volume. The two are read as one clause (the piece folded into it,
so the trace still shows it)."""

from __future__ import annotations

import re

from agents.task.planning._entities import without_how
from agents.task.planning._frames import Frame
from agents.task.planning._lexicon import Lexicon
from agents.task.planning._normalise import Normalised
from agents.task.planning._reading import Read, fold_into_previous

_ONLY_VOLUME = re.compile(
    r"^(?:with\s+|at\s+|using\s+)?[\d.]+\s*(?:uL|mL)\s*(?:each(?:\s+well)?|per\s+(?:well|pair|pick|transfer)"
    r"|apiece|a\s+well|/\s*well|(?:in|into|to)\s+(?:each|every)\s+well)?$",
    re.IGNORECASE,
)


# What may sit beside the volume: how to pipette it ("8-channel", "fresh tips", "same layout").
_HOW_ELSE = re.compile(
    r"\b(?:(?:with|using|use)\s+(?:the\s+|a\s+)?)?(?:same\s+(?:layout|positions?|wells?)|well[\s-]+(?:to|for)"
    r"[\s-]+well|matching\s+(?:wells?|positions?)|(?:by|per)\s+column|column[\s-]?(?:wise|by[\s-]column)|"
    r"(?:head|pipette|tips?)\b)",
    re.IGNORECASE,
)


def _volume_only(frame: Frame | None) -> bool:
    if frame is None:
        return False
    ents = frame.ents
    rest = _HOW_ELSE.sub(" ", without_how(frame.text))
    rest = re.sub(r"\s*[,;]\s*", " ", rest).strip(" ,;.")
    return bool(
        _ONLY_VOLUME.match(re.sub(r"\s+", " ", rest))
        and not ents.wellsets
        and not ents.labware
        and not ents.liquids
    )


def volume_after(read_in: Read, lex: Lexicon, norm: Normalised) -> Read:
    """``read_in`` with each volume-only piece joined to the transfer before it."""
    return fold_into_previous(
        read_in,
        lex,
        norm,
        "transfer",
        lambda f, _, head: not head.ents.volumes() and _volume_only(f),
        heading=False,  # "Copy samples onto dest_plate: 20 uL each": one clause, not a heading
    )
