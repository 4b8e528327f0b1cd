"""Where a sentence of a request splits before its commas are read: at semicolons and at
"then" / "after that" / "followed by", never inside brackets ("35 cycles of [95 C, 15 s; 60 C,
30 s]", "A600 on both MIC plates (MIC_P1 then MIC_P2)": the order of the plates, no step).
"""

from __future__ import annotations

import re

from agents.task.planning._scaled import SCALED
from agents.task.planning._vocabulary import ACTION_VERBS

_FLAGS = re.IGNORECASE
THEN = re.compile(
    r"\s*[,;]?\s*(?:\b(?:and\s+|&\s+)?then\b|\bafter\s+that\b|\bafterwards\b|\bafter\s+which\b"
    r"|\bfollowed\s+by\b|\bonce\s+(?:(?:that'?s|that\s+is|it'?s|it\s+is)\s+)?(?:done|finished|complete)\b"
    r"|\band\s+(?:finally|lastly)\b|(?<=,)\s*(?:finally|lastly|next)\b)\s*,?\s*",
    _FLAGS,
)
_SEMI = re.compile(r"\s*;\s*")


def bracketed(text: str) -> list[tuple[int, int]]:
    """The spans of ``text`` inside round or square brackets (innermost pairs)."""
    return [m.span() for m in re.finditer(r"\([^()]*\)|\[[^\[\]]*\]", text)]


def semicolon_parts(text: str) -> list[str]:
    """Split at semicolons, never inside brackets ("35 cycles of [95 C, 15 s; 60 C, 30 s]")."""
    pieces, depth, last = [], 0, 0
    for i, ch in enumerate(text):
        depth += (ch in "([") - (ch in ")]")
        if ch == ";" and depth <= 0:
            pieces.append(text[last:i].strip())
            last = i + 1
    return [*pieces, text[last:].strip()] if depth == 0 else _SEMI.split(text)


_VERB_OPENS = re.compile(rf"^\s*(?:{ACTION_VERBS})\b", re.IGNORECASE)
# "A1 15 uL; A2 12.5 uL; A3 10 uL - single tip": a tip wish after a dash ends a list of pieces
_TRAILING_TIPS = re.compile(
    r"\s+-\s+(?=(?:(?:with|using)\s+)?(?:a\s+|one\s+|the\s+)?(?:single|one|same|new|fresh|"
    r"separate|clean)\s+tips?\b[^;]*$|(?:don'?t|do\s+not|never)\s+change\s+tips?\b[^;]*$"
    r"|change\s+tips?\b[^;]*$)",
    re.IGNORECASE,
)


def list_tips_apart(semis: list[str]) -> list[str]:
    """The pieces, a tip wish said after the last one of a list (no piece after the first opens
    with a verb) set apart as a piece of its own: the wish is the whole list's."""
    if len(semis) < 2 or any(_VERB_OPENS.match(semi) for semi in semis[1:]):
        return semis  # "add X to A1; add Y to B1 - new tip each": the last action's own wish
    tail = _TRAILING_TIPS.search(semis[-1])
    return (
        semis if tail is None else [*semis[:-1], semis[-1][: tail.start()], semis[-1][tail.end() :]]
    )


# "50 uL PBS-T into capture_plate, then into serum_samples columns 1-6": a further destination
# of the same liquid and volume, no step of its own (no verb, no volume after it).
_ONWARD = re.compile(r"(?:(?:also|again|the\s+same)\s+)?(?:in|into|onto|to)\s+(?!\d)", _FLAGS)
_VOLUME = re.compile(r"\d\s*(?:u|µ|m|micro|milli)l", _FLAGS)


# "A1 neat, then 1:2 steps to A7": how a series runs from its top well, one step of nothing
# but a fold after a well with no verb and no volume of its own.
_TOP_WELL = re.compile(
    r"(?:^|[\s,:(])[A-Pa-p]\d{1,2}\s*(?:[=:]\s*|(?:is|as)\s+)?(?:the\s+)?"
    r"(?:neat|undiluted|stock|top(?:\s+(?:standard|std|conc\w*))?)\s*$",
    _FLAGS,
)
_FOLD_STEP = re.compile(
    r"(?:in\s+)?(?:\d+(?:\.\d+)?\s*-?\s*(?:fold|x)\b|1\s*(?::|/|in)\s*\d|halving|two-?fold"
    r"|three-?fold|ten-?fold)",
    _FLAGS,
)


def _series_step(before: str, after: str) -> bool:
    return bool(_TOP_WELL.search(before) and _FOLD_STEP.match(after))


# "stamp X to P2, then to P3, 30 uL each": one volume said last for every destination
_EACH_LAST = re.compile(
    r"^[^,;]*,\s*(?:at\s+)?\d+(?:\.\d+)?\s*(?:u|µ|m|micro|milli)l\s*"
    r"(?:each(?:\s+well)?|per\s+well|/\s*well|apiece)\W*$",
    _FLAGS,
)


def _onward(before: str, after: str) -> bool:
    rest = THEN.split(after, maxsplit=1)[0]
    if not _ONWARD.match(after):
        return False
    if _VOLUME.search(before):
        return not _VOLUME.search(rest)
    return bool(_EACH_LAST.match(rest)) and after == rest


def then_parts(text: str) -> list[str]:
    """Split at "then" and its kin, never inside brackets (nor before "into" a further place
    of the same transfer)."""
    inside = bracketed(text)
    pieces, last = [], 0
    for m in THEN.finditer(text):
        if m.start() == m.end() or any(a < m.start() < b for a, b in inside):
            continue
        if _onward(text[last : m.start()], text[m.end() :]) or _series_step(
            text[last : m.start()], text[m.end() :]
        ):
            continue
        pieces.append(text[last : m.start()])
        last = m.end()
    return [*pieces, text[last:]]


# "in every well of rows A-D of assay_96, put 100 uL PBS-T": a place said first, its verb after
# the comma; the place is where the action goes, not a clause of its own.
_FRONTED = re.compile(
    r"^\s*(?:in|into|to|across|throughout)\s+[^,;:]*\b(?:wells?|rows?|columns?|cols?|[A-Pa-p]\d{1,2})\b"
    r"[^,;:]*$",
    _FLAGS,
)


# "Column for column, move ...", "Well-to-well, copy ...": how the plates pair, fronted
_MANNER = re.compile(
    r"^\s*(?:(?:column|col|row|well|plate)[\s-]+(?:for|by|to)[\s-]+(?:column|col|row|well|plate)"
    r"|(?:in\s+the\s+)?same\s+(?:layout|positions?|wells?)|one[\s-]+to[\s-]+one)\s*$",
    _FLAGS,
)


def after_clause_start(text: str, cut: re.Match[str]) -> bool:
    """Whether ``cut`` may end a clause: not at the very start, and not a comma after a place
    that opens the sentence with no verb or volume of its own."""
    before = text[: cut.start()]
    if cut.start() == 0 or pools_what_before(text, cut.start(), cut.end()):
        return False  # (nor "... from each of X and pool into Y": where what was taken goes)
    return not (
        cut.group(0).strip() == ","
        and (_FRONTED.match(before) or _MANNER.match(before))
        and not _VOLUME.search(before)
    )


_HAS_DEST = re.compile(
    r"\b(?:to|into|in|onto|gets?)\b\s+[^,;]*?(?:[A-Pa-p]\d|\bcolumns?\b|\brows?\b|_)|\bgets?\b|\b(?:pre-?)?fill(?:ed|ing)?\b|\bwaste\b|\d\s*(?:u|m)l\s+(?:of\s+)?(?:the\s+)?(?:[a-z]+\s+){0,2}?out\b",
    _FLAGS,
)
# "ELU-96_3 A1 to H1": a range of wells, not a place the liquid goes (with no volume before it).
_RANGE_ONLY = re.compile(
    r"^[^,;]*?[A-Pa-p]\d{1,2}\s+(?:to|through|thru)\s+[A-Pa-p]\d{1,2}\s*$", _FLAGS
)
_VOLUME_SAID = re.compile(r"\d\s*(?:u|m)l\b", _FLAGS)


def has_destination(before: str) -> bool:
    """The part of a sentence before a new volume already says where its liquid goes ("...
    into A1-A6, 20 uL dye to B1": a new transfer starts); a bare well range ("SERA1 A1 to H1,
    50 uL of each into column 3") is the source of what follows."""
    if _RANGE_ONLY.match(before) and not _VOLUME_SAID.search(before):
        return False
    return bool(_HAS_DEST.search(before))


# "..., 100 uL final", "..., 50 uL/well", "..., 100 uL each": a level the work before ends at
_LEVEL_TAIL = re.compile(
    r"^\s*[\d.]+\s*[a-zA-Zµ]+\s*(?:final|total|per\s+(?:well|point|standard|std)|/\s*well|each"
    r"|in\s+total|in\s+every|in\s+each)",
    _FLAGS,
)
# "std curve in P col 1, 2-fold, 100 uL in sample buffer": a series' volume and its diluent
_SERIES_SAID = re.compile(
    r"\b(?:\d+(?:\.\d+)?\s*-?\s*(?:fold|x)|(?:two|three|four|five|ten)-?fold|1\s*:\s*\d+"
    r"|serial\w*|curve|standards?|stds?)\b",
    _FLAGS,
)
_IN_LIQUID = re.compile(
    r"^\s*[\d.]+\s*[a-zA-Zµ]+\s+(?:in|with|using)\s+(?:the\s+)?([\w-]+)", _FLAGS
)
_WELL = re.compile(r"\b[A-Pa-p]\d{1,2}\b")


def volume_of_before(before: str, after: str, names: frozenset[str]) -> bool:
    """Whether the volume that starts ``after`` only says how much the work ``before`` ends at
    ("..., 100 uL final", "50 uL/well") or, after a dilution series, its volume and diluent
    ("2-fold down col 1, 100 uL in sample buffer"): no new transfer starts there."""
    if _LEVEL_TAIL.match(after):
        return True
    liquid = _IN_LIQUID.match(after)
    words = set(re.findall(r"[\w-]+", after.lower()))
    return bool(
        liquid and _SERIES_SAID.search(before) and not _WELL.search(after) and not words & names
    )


# "take 50 uL from each of P A1-A4 and pool them in Q B1": where what was taken goes
_POOL_INTO = re.compile(
    r"(?:pool|combine|consolidate|merge)(?:\s+(?:them|it|these|those|all|everything))?"
    r"(?:\s+(?:all\s+)?together)?\s+(?:in|into|to|onto)\s",
    _FLAGS,
)


def pools_what_before(text: str, start: int, end: int) -> bool:
    """Whether the cut at ``start:end`` only says where the part before it, which takes from
    wells and says no destination, pools ("transfer 100 uL from each of X and pool into Y")."""
    return (
        bool(_POOL_INTO.match(text, end))
        and bool(re.search(r"\bfrom\b", text[:start], _FLAGS))
        and not has_destination(text[:start])
    )


# "take 50 uL off the cells and discard it", "... and discard.", "... and discard to waste",
# "... and throw away": where the liquid taken goes, never a new action (a second emptying)
DISCARDED = (
    r"(?:discard|dump|bin|trash)\s+(?:it|them|that|those)\b|throw\s+(?:it|them)\s+(?:away|out)"
    r"|(?:discard|dump|trash|throw\s+(?:away|out)|dispose)(?:\s+(?:of\s+)?(?:it|them))?"
    r"(?:\s+(?:to|into|in)\s+(?:the\s+)?(?:liquid\s+)?(?:waste|trash|bin)\b)?\s*(?:[.;,)!]|$)"
)


_WORD = r"(?![A-Pa-p]\d{1,2}\b)[A-Za-z][A-Za-z%-]*"  # a word of a liquid's name, never a well
# ", 200 uL dye into A1", ", H2:H8 get 150 uL": a second transfer; ", 20 uL into 180 uL": a step
RUN = r"[A-Pa-p]\d{1,2}(?:\s*(?:-|:|\s(?:to|through|thru)\s)\s*[A-Pa-p]\d{1,2})?"
VOLUME_START = re.compile(
    r"\s*(?:,|/|\band\b)\s*(?:and\s+)?(?![\d.]+\s*[um]l\s[^,]*?\bin(?:to)?\s+(?:the\s+)?[\d.]+\s*[um]l)"
    r"(?=(?:\d+(?:\.\d+)?|\.\d+)\s*(?:u[lL]|ml|mL|microlit\w*|millilit\w*)\b"
    r"|the\s+same\s+(?:volume|amount)\s+of\s"  # "..., and the same volume of dye to B1-B6"
    rf"|(?:{SCALED})\s+(?:of\s+)?[a-z]"  # "..., and double that of dye into B1-B4"
    # "PBS (200 uL) -> P A1-A12, compound (50 uL) -> P B1-B12": a liquid and its arrow
    rf"|(?:{_WORD}\s+){{0,3}}{_WORD}\s*(?:\(\s*[\d.]+\s*(?:u[lL]|ml|mL)\s*\)\s*)?->\s*[^,;]*?\d"
    rf"|(?:{RUN}|(?:columns?|cols?|rows?)\s+[A-Pa-p\d]{{1,2}})"
    r"\s+(?:gets?\b|with\s+(?:another\s+)?\d))",
    re.IGNORECASE,
)
