"""The joints between written well sets: what joins two mentions into one set ("A1, B1",
"row A and row C"), what leaves a set out ("all wells except column 12", "..., column 12 left
empty"), where two sets cross ("columns 1-3 in triplicate (rows A-D)"), and when a well starts
a pair of its own ("A1 into X A1-A3, A2 into X B1-B3")."""

from __future__ import annotations

import re

from agents.task.planning._wellpatterns import _FROM_TO

_FLAGS = re.IGNORECASE

# "all wells except column 12", "row A but not A1", "..., skipping H12": what is left out.
_EXCEPT = re.compile(
    r"^\s*(?:,|\()?\s*(?:(?:on|of|in)\s+(?:the\s+)?#+\s*,?\s*)?(?:but\s+|and\s+)?(?:except(?:\s+for)?"
    r"|excluding|but\s+not|but|not|skipping|skip|other\s+than|apart\s+from|leaving\s+out|without|minus"
    r"|save\s+for)\s+(?:the\s+)?(?:wells?\s+)?$",
    _FLAGS,
)
# "B2-G11 (edge wells excluded)", "all wells, column 12 left empty": a set left out, said after it
_LEFT_OUT_BEFORE = re.compile(
    r"^\s*(?:(?:on|of|in)\s+(?:the\s+)?#+\s*)?[,(]\s*(?:with\s+|but\s+)?(?:the\s+)?(?:wells?\s+)?$",
    _FLAGS,
)
_LEFT_OUT_AFTER = re.compile(
    r"^\s*(?:(?:is|are)\s+)?(?:excluded|omitted|skipped|left\s+out|not\s+(?:used|filled)"
    r"|(?:left\s+|kept\s+|stays?\s+|remains?\s+)?(?:empty|blank|dry|unfilled))\b",
    _FLAGS,
)
_JOIN = re.compile(
    r"^\s*(?:,|&|\+|\band\b|\bas well as\b|\bplus\b|,\s*and\b)\s*(?:wells?\s+)?$", _FLAGS
)
# "A2 (10 uL) -> H2", "A2 25 uL -> H2": a well that starts a pair, its volume before the arrow
_PAIR_NEXT = re.compile(
    r"^\s*(?:\([^()]{1,30}\)\s*|#+\s+)?(?:->|into\b|onto\b)",  # volumes are blanked "#"
    _FLAGS,
)
# "columns 1-3 in triplicate (rows A-D)": the replicates' block, the lines where two sets cross
_CROSS = re.compile(
    r"^\s*(?:,|of|in|on|x|×|;|\()?\s*(?:the\s+)?(?:#+\s+)?$"
    r"|^\s*(?:of|in|on)\s+(?:the\s+)?#+\s*,\s*$"  # "rows A-D of lp384_b, column 1"
    r"|^\s*,?\s*in\s+(?:duplicate|triplicate|quadruplicate)s?\s*[,(]?\s*$",
    _FLAGS,
)
_PAIRED = re.compile(r"\b[A-Za-z]\d{1,2}\s*(?:->|\binto\b|\bonto\b)", _FLAGS)


def _starts_a_pair(text: str, prev_start: int, end: int) -> bool:
    """'A1 into X A1-A3, A2 into X B1-B3': A2 starts a pair of its own; in 'B2, C5, D9 into
    X' (no other pair written) D9 ends the list."""
    if re.match(r"\s*to\s+[A-P]\d", text[end:], _FLAGS) and _PAIR_SAID.search(text[:end]):
        return True  # "from P A1 to Q B1 and B2, and A2 to B3": A2 starts the next pair
    if not _PAIR_NEXT.match(text[end:]):
        return False
    if re.search(r"(?:->|\binto\b|\bonto\b)\s*(?:#+\s*)?$", text[:prev_start], _FLAGS):
        return True  # "X into # A1 and row B (B1-B4) into # B1": A1 ended a pair, row B starts one
    after = text[end:]
    joint = re.search(r"->|\binto\b|\bonto\b", after, _FLAGS)
    after = after[joint.end() :] if joint else ""
    return bool(_PAIRED.search(text[:prev_start]) or _PAIRED.search(after))


def _joined(text: str, prev: str, prev_end: int, start: int, end: int) -> bool:
    """'A1, B1', 'row A and row C': one set - unless the second is said to be left out ('all
    wells, column 12 left empty')."""
    between, after = text[prev_end:start], _MORE_WELLS.sub("", text[end:], count=1)
    left_out = (
        _LEFT_OUT_BEFORE.match(between)
        and _LEFT_OUT_AFTER.match(after)
        and not re.fullmatch(r"[A-Pa-p]\d{1,2}", prev.strip())  # "A1, A2 and A3 left out": one list
    )
    return bool(_JOIN.match(between)) and not left_out


# ", A2 and A3", " and 12": the rest of a list of wells or lines, before what is said of it
_MORE_WELLS = re.compile(
    r"^(?:\s*(?:,|and|&)\s*(?:wells?\s+)?(?:[A-Pa-p]\d{1,2}|\d{1,2})\b)+", _FLAGS
)


# "..., and A2 to B3": after a pair said as "<plate> A1 to <plate> B1", a second pair
_PAIR_SAID = re.compile(r"\b[A-P]\d{1,2}\s+to\s+(?![A-P]\d)\S+\s+[A-P]\d{1,2}\b", _FLAGS)
_NEXT_ITEM = re.compile(r"(?:,\s*and|;)\s*$", _FLAGS)


def a_pair_not_a_range(before: str, said: str, after: str) -> bool:
    """Whether ``said`` ("A2 to B3") names a source well and a destination well, not the
    wells between them: after "from" ("from A1 to B1"), or as the next item after a pair
    said with its plates ("P A1 to Q B1, and A2 to B3"), unless "into" follows."""
    if not re.search(r"\sto\s", said, _FLAGS) or re.search(r"\b(?:into|onto)\b|->", after, _FLAGS):
        return False
    if _FROM_TO.match(before[::-1]):
        return True
    return bool(_NEXT_ITEM.search(before) and _PAIR_SAID.search(before))
