"""Why the person asks, said alongside the request: "they've been sitting", "it settles in the
fridge", "Bradford's done", "the Quant-iT has been sitting 5 min", "the suspension settles fast".

Such a remark says how things are or were, never what to do: it is a clause of its own (the
splitter cuts it off the action it rides on, so a word in it, "fridge", is no instrument to
find), planned as nothing. Only a subject with a verb of resting, settling or being finished
counts; a remark told in the present with a time ("the plate sits 15 min at RT") can be a
step of a protocol and is left to the families.
"""

from __future__ import annotations

import re

_FLAGS = re.IGNORECASE
_SUBJECT = (
    r"(?:it|they|these|those|this|that|everything|all\s+of\s+(?:them|it)"
    r"|(?:the|my|our|your)\s+[\w«»-]+(?:\s+[\w«»-]+){0,2}|[A-Za-z][\w«»-]*(?:\s+[\w«»-]+)?)"
)
_BE = (
    r"(?:\s*'s|\s*'ve|\s*'re|\s+(?:has|have|had|is|are|was|were))"
    r"(?:\s+(?:been|just|already|now|all|probably|still))*"
)
# what the subject is or has been doing: resting, settling, finished
_STATE = (
    r"(?:sitting|standing|settling|settled|sat|waiting|thawing|thawed|incubating|cooling|warming"
    r"|done|finished|over|complete|ready|(?:in|out\s+of)\s+the\s+(?:fridge|freezer|cold\s+room))"
)
# a present-tense verb of settling ("settles fast", "tends to sink") and past ones ("sat")
_SETTLES = (
    r"(?:settles?|sinks?|sediments?|separates?|clumps?|precipitates?|evaporates?|dries\s+out"
    r"|tends?\s+to\s+(?:settle|sink|clump|separate)|settled|sank|sat|separated|clumped"
    r"|precipitated)"
)
_LEAD = r"(?:(?:because|since|as|cos|cuz|coz)\s+)?"
# what the work is for: "to stop the edge wells drying out", "so the edges don't evaporate"
# (a purpose names wells it protects, never wells to pipette into)
PURPOSE = (
    r"(?:(?:so\s+as\s+|in\s+order\s+)?to\s+(?:stop|prevent|avoid|minimi[sz]e|reduce|limit|cut\s+down"
    r"|protect|guard\s+against|help\s+(?:with|against)|keep\s+[\w\s-]{1,40}?\s+from)"
    r"|so\s+(?:that\s+)?(?:the|it|they|nothing|we)\b[^,;]{0,40}?\b(?:don'?t|doesn'?t|won'?t|"
    r"do\s+not|does\s+not|will\s+not|can'?t|stays?\s+(?:wet|moist|humid)))\b"
)
REASON = re.compile(
    rf"^(?:{_LEAD}{_SUBJECT}(?:{_BE}\s+{_STATE}|\s+{_SETTLES})|{PURPOSE})\b", _FLAGS
)
# where such a remark starts after a comma or a dash ("..., they've been sitting")
AFTER = (
    rf"(?:{_LEAD}(?:it|they|these|those|everything|(?:the|my|our)\s+[\w«»-]+(?:\s+[\w«»-]+)?)"
    rf"(?:{_BE}\s+{_STATE}|\s+{_SETTLES})|{PURPOSE})\b"
)
_PRESENT = re.compile(rf"^{_LEAD}{_SUBJECT}\s+(?:sits?|stands?)\b", _FLAGS)
_AMOUNT = re.compile(r"\d\s*(?:u[lL]|m[lL]|rpm|nm|x\b|times)|\b[A-Pa-p]\d{1,2}\b", _FLAGS)


_PURPOSE_ONLY = re.compile(rf"^{PURPOSE}", _FLAGS)


def is_purpose(text: str) -> bool:
    """ "to stop the edge wells drying out": what the work is for; the wells it names are
    not where anything goes."""
    return bool(_PURPOSE_ONLY.match(text)) and not re.search(r"\d\s*(?:u[lL]|m[lL])\b", text)


def is_reason(text: str) -> bool:
    """A remark on why: how the liquid or plate is or was, no volume, well or speed."""
    return bool(REASON.match(text)) and not _AMOUNT.search(text) and not _PRESENT.match(text)
