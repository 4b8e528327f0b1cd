"""Blank wells of a dilution as people say them ("H1 is the blank", "A12 = buffer only",
"col 12 = growth control", "7 points plus a blank down column 3"): taken out of a clause's well
sets into its blanks, which hold the diluent only."""

from __future__ import annotations

import re

from agents.task.planning import _wellsets as ws
from agents.task.planning._entities import _ASIDE, Entities, _blank

_FLAGS = re.IGNORECASE

_WELLS = (
    # "G1 + H1 blanks", "H11-H12 blank"; never "A3-G3 + H3 blank" (the points, then the blank)
    r"(?:(?<!-)(?<!-\s)(?<!\bto\s)[A-Pa-p]\d{1,2}(?:\s*(?:and|&|\+)\s*[A-Pa-p]\d{1,2})*"
    r"(?:\s*(?:-|to|through|\.\.)\s*[A-Pa-p]\d{1,2})?"
    r"|(?:rows?|columns?|cols?)\s+(?:[A-Pa-p]|\d{1,2})\b(?:\s*(?:-|to|and|&)\s*(?:[A-Pa-p]|\d{1,2})\b)*"
    # "last row blank", "the final two columns are blanks": a row or column named by place
    r"|(?:the\s+)?(?:first|last|final|top|bottom)\s+(?:(?:\d|two|three|four)\s+)?(?:rows?|columns?|cols?)\b)"
)
_BLANK_AFTER = re.compile(
    rf"(?<![\w#])(?P<w>{_WELLS})(?:\s*\))?\s*(?:\(\s*)?(?:=|:|-)?\s*(?:is|are|as|stays?\s+as|remains?\s+as|will\s+be"
    r"|gets?|receives?|stays?|remains?|(?:is\s+)?left|(?:is\s+)?kept|holds?|has|just"
    r"|serves?\s+as|left\s+as|kept\s+as)?\s*(?:the\s+|a\s+|our\s+)?"
    # "H1 = PBS blank", "A12: diluent blank": the blank named by what it holds
    r"(?:(?:#+|buffer|diluent|broth|media|medium|water|reagent|solvent|(?-i:[A-Z][A-Za-z0-9]*))[\s-]+)?"
    r"(?:zero(?:[\s-](?:standards?|stds?|#+))?\b(?!\s*[a-zµ%])|blanks?\b|bla?nks?\b|blk\b"
    # "col 12 = growth control": no drug, the diluent (and what it is for) only
    r"|(?:growth|sterility|no[\s-]drug|vehicle|solvent|untreated|diluent|media|medium|broth)\s+"
    r"(?:controls?|ctrls?|ctls?)\b|ntcs?\b|no[\s-]template(?:\s+controls?)?\b"
    # "A12 as a no-antibody control", "negative ctrl": none of the stock, the diluent alone
    r"|(?:no[\s-](?!template)[\w#-]+|negative|neg\.?)[\s-](?:controls?|ctrls?|ctls?)\b"
    r"|(?:drug|antibody|ab|compound|cmpd|inhibitor|antibiotic|abx|stock|treatment|#+)[\s-]free\b"
    # "D11 and D12 are controls with broth only", "E11-E12 controls (media only)"
    r"|(?:controls?|ctrls?)\s*(?:\(\s*|with\s+|of\s+|[:=-]\s*)?(?:#+|buffer|diluent|broth|media|medium)"
    r"[\s-]+only\b\)?"
    r"|(?:#+|buffer|diluent|broth|media|medium|water|[\w-]+\s+buffer|(?-i:[A-Z][A-Za-z0-9]*))[\s-]+only\b"
    r"|(?:buffer|broth|media|medium|diluent)[\s-]only\b|no[\s-](?:stock|drug)\b"
    # "H1 = 0 pg/mL": the zero of the curve's concentrations
    r"|0\s*(?:[pnuµm]?g|[pnuµm]?M|U|IU|copies)\s*/\s*[mµu]?[lL]\b|0\s*[pnuµm]M\b)(?:\s*wells?)?\)?",
    _FLAGS,
)
_BLANK_BEFORE = re.compile(
    # ("a zero in H1", "NTC at H12": the curve's zero point named before its well)
    r"\b(?:blanks?|zero(?:[\s-](?:standards?|stds?|points?))?|ntcs?)\s*(?:wells?\s*)?"
    r"(?:of\s+#+(?:\s+#+)?\s+)?"  # "a blank of 10 uL IDTE in plate H6"
    rf"(?:in|at|=|:|are|is|-)?\s*(?:#+\s+)?(?:wells?\s+)?(?P<w>{_WELLS}"
    # "blanks C11, C12": a list of single wells after the word
    r"(?:\s*,\s*[A-Pa-p]\d{1,2}\b(?!\s*(?:-|to\b|through\b|:)))*)",
    _FLAGS,
)


_BLANK_ASIDE = re.compile(
    r"^\(\s*(?:the\s+|a\s+)?(?:blanks?|zero[\s-]standards?|ntcs?|no[\s-]template(?:\s+controls?)?"
    r"|(?:[\w-]+\s+){1,2}only|(?:buffer|diluent|media|medium|broth)[\s-]only)\s*\)$",
    _FLAGS,
)


_NOTHING_OR_ZERO = re.compile(r"^\s*(?:(?:=|:)?\s*0\s*)?$")  # "H1 (blank)", "G6 = 0 (TE only)"


def blank_note(ents: Entities) -> bool:
    """The clause only says which wells are blanks ("A8 = blank", "H1 is the zero standard")."""
    rest = ents.marked
    found = False
    for rx in (_BLANK_AFTER, _BLANK_BEFORE):
        for m in rx.finditer(rest):
            found = True
            rest = rest[: m.start()] + " " * (m.end() - m.start()) + rest[m.end() :]
    filler = (
        r"#+|\b(?:and|with|the|a|wells?|plate|of|on|in|leave|keep|use|for|as|blanks?)\b"
        r"|[\s,.;:()=-]"
    )
    rest = re.sub(filler, "", rest, flags=_FLAGS)
    return found and not rest


# "S1-S7 + blank in column 1", "7 points and a blank down column 2": the blank joined to the
# points, and the place said once for all of them.
_JOINED_BLANK = re.compile(
    r"(?:\+|\bplus|\band|&|\bwith)\s*(?:an?\s+|one\s+|1\s+)?(?:0\s*(?:[pnuµm]?g\s*/\s*[mµu]?l\s+)?)?$",
    _FLAGS,
)  # ("..., 31.25 ug/mL and a 0 blank in A1-H1": the zero of the curve, its last well)


def _shared_place(ents: Entities, m: re.Match[str], before: bool) -> bool:
    """A blank said with the points before it, in a row or column named for them all: the
    place is the dilution's, the blank is its last well (counted in ``ents.tail``)."""
    ahead = ents.marked[: m.start()]
    line = ws.find_all(m["w"])
    if not (before and _JOINED_BLANK.search(ahead) and not ws.find_all(ahead) and line):
        return False
    if any(part.kind == "well" for s in line for part in s.parts):
        return False  # "7 points and a blank in H1": the blank's own well
    ents.tail = 1
    return True


def _covers(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> bool:
    """Span ``a`` already names the wells of span ``b`` ("blanks in B9 and B10 (...)")."""
    return a[2] <= b[2] and b[3] <= a[3]


def split_blanks(ents: Entities) -> None:
    """Take the blank wells a dilution names ("A12 blank", "blanks in G12 and H12") out of its
    well sets, into ``ents.blanks``: they hold diluent only and are not part of the chain."""
    for aside in _ASIDE.finditer(ents.text):  # "(H12 blank)": a remark that names a blank
        for rx in (_BLANK_AFTER, _BLANK_BEFORE):
            ents.blanks.extend(w for m in rx.finditer(aside.group(0)) for w in ws.find_all(m["w"]))
    spans = [
        (m.start(), m.end(), m.start("w"), m.end("w"))
        for rx in (_BLANK_AFTER, _BLANK_BEFORE)
        for m in rx.finditer(ents.marked)
        if not _shared_place(ents, m, rx is _BLANK_BEFORE)
    ] + [
        (w.start, w.end, w.start, w.end)
        for aside in re.finditer(r"\([^()]*\)", ents.text)
        if _BLANK_ASIDE.match(aside.group(0))
        for w in ents.wellsets
        if w.end <= aside.start() and _NOTHING_OR_ZERO.match(ents.text[w.end : aside.start()])
    ]
    if not spans:
        return
    spans = [s for i, s in enumerate(spans) if not any(_covers(t, s) for t in spans[:i])]
    for _, _, wa, wb in spans:
        ents.blanks.extend(ws.find_all(ents.marked[wa:wb]))
    ents.marked = _blank(ents.marked, [(a, b) for a, b, _, _ in spans], " ")
    ents.wellsets = ws.find_all(ents.marked)
