"""Stage 5a of the rule planner, the items under a series heading: "Titrate dye along row B
of plate_1: 3-fold, B1 to B6, 120 uL final" (the fold under a heading that names none), and
"Titration on P row H:\n- stock: X\n- diluent: Y\n- 2-fold, ..." (items that only name the
stock or the diluent, part of the heading the fold then completes).
"""

from __future__ import annotations

import re

from agents.task.planning._clauses import ACTION_VERBS
from agents.task.planning._frames import Frame
from agents.task.planning.families import Family
from agents.task.planning.families._serial_volumes import says_step

_VERB_START = re.compile(rf"^(?:{ACTION_VERBS})\b", re.IGNORECASE)

_ROLE_PIECE = re.compile(
    r"^(?:(?:the\s+|with\s+)?diluents?\s*(?:is|=|:|-)?\s*(?:the\s+)?#+"
    r"|(?:in\s+|with\s+|(?:please\s+)?use\s+(?:the\s+)?)?#+\s+(?:is\s+|as\s+)?(?:the\s+)?diluents?"
    r"|(?:please\s+)?dilute\s+(?:with|in|using)\s+(?:the\s+)?#+"  # "Dilute with PBS."
    r"|(?:the\s+)?(?:top(?:\s+(?:standard|std))?|stock|S1)\s*(?:is|=|:|-)?\s*(?:the\s+|neat\s+)*#+"
    r"|#+\s+(?:is\s+|as\s+)?(?:the\s+)?(?:top\s+(?:standard|std)|stock))$",
    re.IGNORECASE,
)


# "150 uL per well", "100 uL final in every well", "final volume 200 uL", "# each"


_SERIES_HEAD = re.compile(
    r"\b(?:titrat\w*|serial(?:ly)?|(?:dilution\s+)?series|(?:standard|std)\s+curves?)\b",
    re.IGNORECASE,
)


def _fold_under(frame: Frame | None, family: Family | None, header: Frame) -> bool:
    """ "Titrate dye along row B of plate_1: 3-fold, B1 to B6, 120 uL final": a heading that
    names a series (and where) but no fold, and the verbless piece under it that gives one."""
    return (
        frame is not None
        and header.clause.heading
        and header.ents.fold is None
        and not header.ents.volumes()
        and bool(_SERIES_HEAD.search(header.text))
        and (frame.ents.fold is not None or says_step(frame.text))  # "20 uL into 200 uL final"
        and not _VERB_START.match(frame.text)
        and (family is None or family.name in ("transfer", "context", "dilution"))
    )


def _stock_under(frame: Frame | None, family: Family | None, header: Frame) -> bool:
    """ "Titration on P row H:\n- stock: X\n- diluent: Y\n- 2-fold, ...": items that only name
    a liquid (or its role), under a series heading with no fold yet, are part of the heading
    (the fold under it then completes the dilution)."""
    if frame is None or not header.clause.heading:
        return False
    ents = frame.ents
    label = frame.clause.label or ""
    return (
        frame.clause.joined == "item"
        and (family is None or family.name == "context")
        and header.ents.fold is None
        and not header.ents.volumes()
        and bool(_SERIES_HEAD.search(header.text))
        and len(ents.liquids) == 1
        and not (ents.volumes() or ents.wellsets or ents.labware or ents.fold)
        and (
            (
                bool(_LIQUID_ITEM.match(ents.marked.strip()))
                and (label == header.text or bool(_LIQUID_ITEM.match(f"{label}: #")))
            )
            or bool(_ROLE_PIECE.match(ents.marked.strip()))  # "- diluent HBSS", "- X as diluent"
            or (label.lower().startswith("diluent") and ents.marked.strip().startswith("#"))
        )
    )


_LIQUID_ITEM = re.compile(
    r"^(?:(?:stock|compound|cmpd|drug|sample|analyte|top(?:\s+(?:standard|std))?)\s*[:=-]?\s*)?#+$",
    re.IGNORECASE,
)
