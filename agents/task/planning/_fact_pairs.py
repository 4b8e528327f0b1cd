"""Two facts about the lab in one sentence: "EIA_plate is still empty and SERA1 has 120 uL of
serum in every well of columns 1 to 6". Each is its own claim to check against the lab, so
the "and" between them becomes a clause boundary; the splitter only cuts "and" before an
action verb, and a fact read as one clause names two plates it cannot check at once."""

from __future__ import annotations

import re
from functools import lru_cache

_FLAGS = re.IGNORECASE
_VERB = r"(?:is|are|has|have|holds?|contains?)"
# "FYI, plate_2 is empty and ...", "note that ...": words before the first fact
_LEAD = (
    r"(?:(?:fyi|btw|note(?:\s+that)?|n\.?b\.?|just\s+so\s+you\s+know|heads\s+up|ok(?:ay)?|so"
    r"|also|right|now|currently|at\s+the\s+moment)\b[,:]?\s+)*"
)
_WELLS = (
    r"(?:\s+(?:[A-Pa-p]\d{1,2}(?:\s*[-:–]\s*[A-Pa-p]?\d{1,2})?|(?:rows?|columns?|cols?)\s+\S+))?"
)


@lru_cache(maxsize=64)
def _pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    plates = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    # a sentence that opens with a plate and its verb, then "and" before another plate's
    return re.compile(
        rf"(?:^|(?<=[.;:!?\n]))(\s*{_LEAD}(?:the\s+)?(?:{plates}){_WELLS}\s+"
        rf"(?:still\s+|now\s+|already\s+)?{_VERB}\b[^.;:!?\n]*?)\s+and\s+(?=(?:the\s+)?(?:{plates}){_WELLS}\s+(?:still\s+|now\s+|"
        rf"already\s+)?{_VERB}\b)",
        _FLAGS,
    )


def facts_apart(text: str, names: frozenset[str]) -> str:
    """``text`` with "<plate> is/has ... and <plate> is/has ..." cut into two facts."""
    if " and " not in text or not names:
        return text
    return _pattern(tuple(sorted(names))).sub(r"\1; ", text)
