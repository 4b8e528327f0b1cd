"""The words that say thermocycling: a profile's ("35 cycles of", "x40", "PCR"), a run
without a usable profile ("run the PCR program", "standard cycling", "run program «SYBR-40»")
and the names of its parts ("denature", "anneal")."""

from __future__ import annotations

import re

from agents.task.planning.families import _profile as prof

_FLAGS = re.IGNORECASE

THERMO = re.compile(
    r"\b(?:thermo[\s-]?cycl\w*|thermal[\s-]?cycl\w*|pcr|cycles?\s+of|cycling|cycler|tc|profile"
    r"|x\s*\d+|\d+\s*x(?=\s*[(\[])|cycle\s+(?:\w+\s+){0,2}"
    + prof.COUNT_N
    + r"\s*(?:x|times))\b|\d+\s*x\s*[(\[]",
    _FLAGS,
)

# Words for thermocycling without a usable profile (refused when the lab has no thermocycler).
CYCLING = re.compile(
    r"\bthermo[\s-]?cycl\w*|\bpcr\s+(?:program|profile|run|cycling)\b|\b\d+\s*(?:x|cycles?)\b\s*(?:of|\()"
    r"|\bcycle\s+\d+\s+times\b|\brun\s+\d+\s+cycles\b|\b(?:denatur|anneal)\w*\b"
    r"|\b(?:run|do|start|perform)\s+(?:an?\s+|the\s+)?(?:[\w-]+\s+)?pcr\b|\b\d+\s+cycles\b"
    r"|\bcycle\s+(?:it|them|the)\b"
    r"|\b(?:run|start|use)\s+(?:the\s+|a\s+|my\s+|our\s+)?(?:[\w-]+\s+)?[\w«»-]*pcr[\w«»-]*\s+"
    r"(?:program(?:me)?|profile|protocol|method)\b"
    r"|\bamplif(?!\w*\s+(?:plate|block)s?\b)\w*|\bthermal[\s-]?cycl\w*|\bcycl\w*\b[^.;]{0,40}?\b\d+\s*(?:x|times)\b"
    r"|\b(?:denaturation|annealing|extension|elongation)\b"
    r"|\b(?:run|start|do|perform)\b[^.;]{0,30}\bcycling\b"  # "run standard cycling on X"
    r"|\b(?:standard|usual|default|normal|regular|same|our|my)\s+(?:[\w-]+\s+)?cycling\b"
    # "run program «SYBR-40» on X", "start method PCR35": a programme by a name the lab lacks
    r"|\b(?:run|start|use|load|select)\s+(?:the\s+|a\s+|my\s+|our\s+)?(?:program(?:me)?|method)"
    r"\s+(?:«q\d+»|[\w-]*\d[\w-]*)",
    _FLAGS,
)
NAMED = re.compile(
    r"\bthermo[\s-]?cycl\w*|\bthermal[\s-]?cycl\w*|\b(?:rt-?)?q?pcr\b|\bdenatur\w*|\banneal\w*|\bamplif(?!\w*\s+(?:plate|block)s?\b)\w*"
    r"|\bcycling\b",
    _FLAGS,
)
