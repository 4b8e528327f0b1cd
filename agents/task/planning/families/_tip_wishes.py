"""A clause that only says how to pipette: how to use tips ("new tip each time", "one tip
per pick", "same tip is fine, they're replicates") or which head ("8-channel"), maybe for the
liquids it names ("tips can be reused for the buffer")."""

from __future__ import annotations

import re

from agents.task.planning._entities import TIP_POLICIES, Entities, without_how
from agents.task.planning._vocabulary import VOCABULARY

_FLAGS = re.IGNORECASE
_TIP_FILLER = re.compile(
    r"\b(?:and|between|for|each|every|all|the|of|them|it|please|always|per|after|one|new|a|an|"
    r"samples?|wells?|transfers?|picks?|compounds?|sources?|destinations?|steps?|times?|"
    r"dispenses?|columns?|rows?|plates?|libraries|library|standards?|everything|throughout|"
    r"use|using|just|whole|entire|thing|lot|run|job|process|protocol|fine|ok|okay|is|that|this|"
    r"you|can|may|we|i|hits?|lists?|worklist|cherry-?picks?|hit-?picks?|picking)\b",
    _FLAGS,
)


def tips_only(ents: Entities) -> bool:
    """A clause that only says how to use tips ('new tip each time', 'one tip per pick',
    'change tips between samples')."""
    if not ents.tips or ents.volumes() or ents.wellsets or ents.quantities:
        return False
    rx = next(rx for name, rx in TIP_POLICIES if name == ents.tips)
    rest = rx.sub(" ", without_how(_TIP_WHY.sub("", ents.text)))  # "8-channel, fresh tips..."
    return not re.sub(r"[\s,.;:!()\[\]-]+", "", _TIP_FILLER.sub(" ", rest))


# why the tips may be shared or not, after the wish: "same tip is fine since it's all one
# compound", "..., they're replicates": a remark, no part of what to do
_TIP_WHY = re.compile(
    r"(?:\s*[,;(-]\s*|\s+)(?:since|because|as|cos|coz|cuz|given\s+that)\s+\w.*$"
    r"|\s*[,;(-]\s*(?:they|it|these|those|all|both|everything)(?:'re|'s|\s+are|\s+is)\s+\w.*$"
    # ", the cells are sensitive", "(to avoid carry-over)": why not to share a tip
    r"|\s*[,;(-]\s*(?:the\s+|my\s+|our\s+)?[a-z][\w-]*\s+(?:are|is)\s+(?:(?:very|really|quite|"
    r"super|so|a\s+bit)\s+)?(?:sensitive|fragile|delicate|precious|valuable|expensive|sticky|"
    r"viscous|toxic|limited|scarce|different|infectious)\b.*$"
    r"|(?:\s*[,;(-]\s*|\s+)(?:to\s+(?:avoid|prevent)|no|avoiding|preventing)\s+"
    r"(?:any\s+)?(?:cross[\s-]?contamination|contamination|carry[\s-]?over)\b.*$",
    _FLAGS,
)


def scoped_tips(ents: Entities) -> list[str]:
    """The liquids a tip wish is said for ("tips can be reused for the buffer", "fresh tip
    for each dye well"): their clauses take it, the others keep theirs ([]: not such a wish)."""
    if not ents.tips or not ents.liquids or ents.volumes() or ents.wellsets or ents.quantities:
        return []
    rx = next(rx for name, rx in TIP_POLICIES if name == ents.tips)
    rest = ents.text
    for m in sorted(ents.liquids, key=lambda m: -m.start):
        rest = rest[: m.start] + " " * (m.end - m.start) + rest[m.end :]
    rest = re.sub(
        r"\b(?:can|may|be|re-?used|fine|ok|okay|additions?|ones?|but|only)\b",
        " ",
        rx.sub(" ", rest),
    )
    if re.sub(r"[\s,.;:!()\[\]-]+", "", _TIP_FILLER.sub(" ", rest)):
        return []
    return list(dict.fromkeys(m.name for m in ents.liquids))


def tip_words(ents: Entities) -> list[str]:
    """The words a tip wish names besides how to use tips ("a new tip for each inoculum
    well": ["inoculum"]); [] when it names nothing else or is no tip wish."""
    if not ents.tips or ents.wellsets or ents.quantities or ents.liquids or ents.labware:
        return []
    if ents.instruments or ents.unknown_labware:
        return []
    rx = next(rx for name, rx in TIP_POLICIES if name == ents.tips)
    rest = _TIP_FILLER.sub(" ", rx.sub(" ", without_how(ents.text)))
    words = re.findall(r"[a-z][\w.-]*", re.sub(r"\b(?:use|please|pls|but)\b", " ", rest.lower()))
    return [] if any(w in VOCABULARY for w in words) else words  # "for the mixing": no liquid


def channels_only(ents: Entities) -> bool:
    """A clause that is only the head, maybe with tips ("...; 8-channel; ...", "8-ch, fresh
    tips."): how to pipette the work said with it."""
    if not ents.channels or ents.volumes() or ents.wellsets or ents.quantities or ents.liquids:
        return False
    return not re.sub(r"[\s,.;:!()\[\]-]+", "", _TIP_FILLER.sub(" ", without_how(ents.text)))
