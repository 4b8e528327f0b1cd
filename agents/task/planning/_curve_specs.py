"""A standard curve written as a spec sheet: a curve heading, then one "key: value" line per
fact ("- stock: BSA 2 mg/mL", "- diluent: PBS", "- plate: bca_p2, column 2", "- 2-fold, 100 uL
final", "- blank: H2"). Read as the one sentence it stands for ("Std curve: top standard = BSA
2 mg/mL, diluent = PBS, bca_p2, column 2, 2-fold, 100 uL final, blank H2"). Pure text."""

from __future__ import annotations

import re

_FLAGS = re.IGNORECASE
_HEAD = re.compile(
    r"^\s*(?:#+\s*)?[^:\n]*\b(?:std|standard|calibration|calibrator)s?\b[^:\n]*\b(?:curves?|series|"
    r"standards?|stds?)?[^:\n]*:\s*$|^\s*(?:#+\s*)?[^:\n]*\b(?:std|standard)\s+curve\b[^:\n]*:?\s*$",
    _FLAGS,
)
_ITEM = re.compile(
    r"^\s*(?:[-*•]\s+|\d{1,2}[.)]\s+)?"
    r"(?:(?P<key>[A-Za-z][\w /#()-]{0,24}?)\s*[:=]\s*)?(?P<val>\S.*)$"
)

_STOCK = re.compile(r"^(?:stock|top(?:\s+(?:standard|std|conc\w*))?|highest\s+(?:standard|std)|"
                    r"standard|std|calibrator|s1|start(?:ing)?(?:\s+\w+)?)$", _FLAGS)  # fmt: skip
_DILUENT = re.compile(r"^(?:diluent|buffer|dilution\s+buffer|diluted\s+in|dilute\s+in|in)$", _FLAGS)
_PLACE = re.compile(r"^(?:plate|labware|where|location|wells?|layout|positions?)$", _FLAGS)
_AXIS = re.compile(r"^(?:columns?|cols?|rows?)$", _FLAGS)
_FOLD = re.compile(r"^(?:dilution|fold|factor|dilution\s+factor|series|steps?|serial)$", _FLAGS)
_POINTS = re.compile(r"^(?:points|pts|n|number\s+of\s+points|#\s*points|standards)$", _FLAGS)
_LEVEL = re.compile(
    r"^(?:final|final\s+vol(?:ume)?|vol(?:ume)?|per\s+well|volume\s+per\s+well)$", _FLAGS
)
_BLANK = re.compile(r"^(?:blanks?|zero|ntcs?)$", _FLAGS)
_STEP = re.compile(  # a numbered step of its own, never a fact of the sheet
    r"(?:then\s+)?(?:add|transfer|pipett?e|dispense|put|mix|dilute|serially|discard|remove|move"
    r"|read|incubate|shake|aspirate|fill|make|prepare|take|carry|repeat)\b",
    _FLAGS,
)
_REPS = re.compile(r"^(?:replicates?|reps?)$", _FLAGS)


def _piece(key: str | None, val: str) -> str | None:
    """The sentence piece one spec line stands for (None: a line this reading cannot place)."""
    val = val.strip().rstrip(".;,")
    if key is None:
        return None if _STEP.match(val) else val
    key = key.strip()
    if _STOCK.match(key):
        return f"top standard = {val}"
    if _DILUENT.match(key):
        return f"diluent = {val}"
    if _PLACE.match(key):
        return val
    if _AXIS.match(key):
        return val if re.match(r"(?i)(?:columns?|cols?|rows?)\b", val) else f"{key} {val}"
    if _FOLD.match(key):
        return f"{val}-fold" if re.fullmatch(r"\d+(?:\.\d+)?", val) else val
    if _POINTS.match(key) and re.fullmatch(r"\d{1,2}", val):
        return f"{val} points"
    if _LEVEL.match(key):
        return val if re.search(r"(?i)\bfinal\b", val) else f"{val} final"
    if _BLANK.match(key):
        wells = re.split(r"\s*,\s*", val)  # "C11, C12": both, said as one list
        return f"blank {val}" if len(wells) == 1 else f"blanks {' and '.join(wells)}"
    if _REPS.match(key):
        return f"in {val}" if re.fullmatch(r"(?i)(?:du|tri|quadru)plicate", val) else None
    return None


def one_line(text: str) -> str:
    """``text`` with each curve spec sheet (a heading and three or more fact lines under it)
    written as one line."""
    if "\n" not in text or ":" not in text:
        return text
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not _HEAD.match(line):
            out.append(line)
            i += 1
            continue
        pieces, j = [], i + 1
        while j < len(lines) and lines[j].strip():
            m = _ITEM.match(lines[j])
            piece = _piece(m["key"], m["val"]) if m else None
            if piece is None:
                break
            pieces.append(piece)
            j += 1
        keyed = sum(1 for k in lines[i + 1 : j] if ":" in k or "=" in k)
        if len(pieces) >= 3 and keyed >= 2 and (j == len(lines) or not lines[j].strip()):
            out.append(f"{line.rstrip()} {', '.join(pieces)}")
            i = j
        else:
            out.append(line)
            i += 1
    return "\n".join(out)


_DASH = re.compile(r"\s+[-–]\s+")
_SPAN_END = re.compile(r"(?:\b[A-Pa-p]\d{1,2}|\b\d{1,2})$")
_SPAN_START = re.compile(r"^(?:[A-Pa-p]\d{1,2}|\d{1,2})\b(?![:.])")


def _joins(line: str) -> list[re.Match[str]]:
    """The spaced dashes of ``line`` that join pieces, not the two ends of a span ("A1 - G1")."""
    return [
        m
        for m in _DASH.finditer(line)
        if not (_SPAN_END.search(line[: m.start()]) and _SPAN_START.match(line[m.end() :]))
    ]


_CURVE_FIRST = re.compile(
    r"^\s*[^\n]{0,30}?\b(?:std|standard|calibration)\s+(?:curve|series)\b", _FLAGS
)


def dashed(text: str) -> str:
    """ "Std curve - BSA - 1:2 - PBS - bca_p2 col 1 - 100 uL final": a curve's facts joined by
    spaced dashes, read as a label and its comma-separated pieces (never a range "A1 - H1")."""
    out = []
    for line in text.split("\n"):
        head = _CURVE_FIRST.match(line)
        joins = _joins(line) if head is not None else []
        if head is None or len(joins) < 3:
            out.append(line)
            continue
        pieces, at = [], head.end()
        for m in joins:
            pieces.append(line[at : m.start()])
            at = m.end()
        rest = ", ".join(p.strip() for p in [*pieces, line[at:]] if p.strip())
        out.append(f"{line[: head.end()]}: {rest}")
    return "\n".join(out)
