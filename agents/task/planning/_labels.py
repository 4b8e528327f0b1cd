"""Labels that open a line ("ELISA step:", "Reading:", "Blanks (H11, H12):"): what they say
about the clause they open."""

from __future__ import annotations

import re

from agents.task.planning import _social
from agents.task.planning._lexicon import Mention

# "every other well: B1-B12 ...": the colon brings the wells the words before it thin
THINS_BEFORE = re.compile(
    r"\b(?:every\s+(?:other|second|2nd)|alternat(?:e|ing)|odd|even)(?:[-\s]?numbered)?\s+wells?"
    r"(?:\s+only)?\s*$",
    re.IGNORECASE,
)
_VERB_LABEL = re.compile(
    r"(?:read|measure|shake|incubate|move|mix|add|transfer|dispense|wash|thermocycle|cycle)",
    re.IGNORECASE,
)
# A label that names its clause's action as a noun ("Reading: plate_1, 450 nm", "Shaking step:
# 2 min, 500 rpm"): the verb it stands for.
_LABEL_NOUNS = (
    ("read", r"read(?:ing|out|-out)?|detection|measure(?:ment)?|absorbance|fluorescence|od\d*"),
    ("shake", r"shak(?:e|ing)|agitation"),
    ("incubate", r"incubat(?:e|ion)"),
    ("mix", r"mix(?:ing)?"),
    ("add", r"add(?:ition)?|dispens(?:e|ing)"),
    ("transfer", r"transfers?"),
    ("move", r"mov(?:e|ing)|storage|park(?:ing)?"),
    ("thermocycle", r"thermocycl(?:e|ing)|cycling"),
)


# A colon after a curve's role is a key and its value, no heading ("(diluent: PBS, 100 uL
# final)", "..., standard diluent: Assay Buffer, A4-G4"); a colon inside brackets is too.
ROLE_KEY = re.compile(r"(?:^|,\s*)(?:(?:standard|std|assay)\s+)?(?:diluent|dil|stock)\s*$", re.I)


def label_verb(label: str) -> str | None:
    """The verb a label stands for, when it is the name of one action (else None)."""
    words = re.findall(r"[A-Za-z][\w-]*", label)
    if not words or len(words) > 3:
        return None
    if _VERB_LABEL.fullmatch(label.strip()):
        return label.strip()
    found = {verb for verb, rx in _LABEL_NOUNS for w in words if re.fullmatch(rx, w, re.IGNORECASE)}
    return found.pop() if len(found) == 1 else None


_WELLS_LABEL = re.compile(
    r"^(?P<label>[A-Za-z][A-Za-z /+&'-]{0,30}?)\s*\((?P<wells>[A-Pa-p]\d{1,2}"
    r"(?:\s*(?:,|and|&|-|:|to)\s*[A-Pa-p]\d{1,2})*)\)\s*:\s*(?P<body>\S.*)$",
    re.IGNORECASE,
)
_WELL = re.compile(r"\b[A-Pa-p]\d{1,2}\b")


def wells_label(line: str, names: frozenset[str] = frozenset()) -> str:
    """ "Blanks (H11, H12): 100 uL buffer into plate_1": the label's wells are where its
    clause works, written after the clause ("... into plate_1 (H11, H12)"); so are the wells of
    a label that is only wells ("A1-A6: 100 uL buffer to plate_1", see :func:`wells_first`)."""
    m = _WELLS_LABEL.match(line)
    if m is None or _WELL.search(m.group("body")):
        return wells_first(line, names)
    body = m.group("body").rstrip(" .!")
    tail = _social.TAIL.search(body)  # "... into plate_1, thanks!": the wells before the thanks
    body = body[: tail.start()] if tail and tail.start() > 0 else body
    return f"{m.group('label').strip()}: {body} ({m.group('wells')})"


_NOT_A_HEADING = re.compile(
    r"\b(?:pcr|program(?:me)?|profile|cycl\w*|protocol|(?<!'s\s)(?<!for\s)run)\b", re.I
)
# "Plate setup", "Mix prep": a verb's word used as a noun that names a part of the work.
_WORK_NOUN = re.compile(
    r"\w+\s+(?:set-?up|prep(?:aration)?|layout|map|plan|notes?|list|day|stage|section)\b"
    r"|[A-Za-z]+\s*[_-]?\d{1,2}\s*$",  # "Plate 2" over its items: a name, not "plate out"
    re.I,
)


def heading_line(line: str, verbs: str) -> bool:
    """A short line without a colon that names the list items under it ("Buffer prep",
    "Plate setup for tomorrow's run", "Day 2"): a label for them, not a clause of its own."""
    words = line.strip(" .-").split()
    return (
        1 <= len(words) <= 6
        and all(re.fullmatch(r"[A-Za-z0-9][\w/&'-]*|[-:/&]", w) for w in words)
        and any(ch.isalpha() for ch in line)
        and not re.search(r"\b[A-Pa-p]\d{1,2}\b|\d\s*(?:u|m)l\b", line, re.IGNORECASE)
        and (
            not re.match(rf"(?:{verbs})\b", line.strip(), re.IGNORECASE)
            or bool(_WORK_NOUN.match(line.strip()))
        )
        and not _NOT_A_HEADING.search(line)
    )


_FOLLOWS = re.compile(
    r"\b(?:as\s+follows|(?:the\s+)?following(?:\s+[\w-]+){0,3}|below|like\s+(?:this|so)"
    r"|as\s+(?:shown|laid\s+out|listed))\s*[.,:]?\s*$",
    re.IGNORECASE,
)


def follows(line: str) -> bool:
    """ "add to dna_plate the following water volumes": a line that heads the entries under it."""
    return bool(_FOLLOWS.search(line))


_DILUTES = re.compile(r"^(?:normali[sz]|dilut|equali[sz]|bring|adjust)", re.IGNORECASE)
_WITH_BEFORE = re.compile(
    r"\b(?:with|using|w/|adding)\s+(?:the\s+|some\s+|more\s+)?$", re.IGNORECASE
)


def diluent_of(text: str, liquids: list[Mention]) -> Mention | None:
    """The one liquid a normalising heading dilutes with: the one after "with" ("normalise
    cDNA ... with NFW:"), else, of two liquids, the one that is not the verb's object (the
    samples: "Normalize the serum dilutions, assay diluent per well:")."""
    if not _DILUTES.match(text):
        return None
    added = [m for m in liquids if _WITH_BEFORE.search(text[: m.start])]
    if not added and len({m.name for m in liquids}) == 2:
        added = [m for m in liquids if m.name != liquids[0].name]
    return added[0] if len({m.name for m in added}) == 1 else None


# "A1-A6: 100 uL buffer to plate_1", "- row A - 50 uL dye, plate_2": wells said first, as a
# label, and the plate they are on said in the body after them
_WELLS_FIRST = re.compile(
    r"^(?P<item>\s*(?:[-*+]|\d{1,2}[.)])\s+)?(?P<wells>[A-Pa-p]\d{1,2}(?:\s*(?:,|and|&|-|–|to|:)"
    r"\s*[A-Pa-p]\d{1,2})*|(?:rows?\s+[A-Pa-p]|(?:columns?|cols?)\s+\d{1,2})(?:\s*(?:-|–|to|,|and|&)"
    r"\s*(?:[A-Pa-p]|\d{1,2})\b)*)\s*(?::|\s[-–]\s)\s*(?P<body>\S.*)$",
    re.IGNORECASE,
)
_VOLUME_SAID = re.compile(r"\d\s*(?:[uµμ]l|ml)\b", re.IGNORECASE)


def wells_first(line: str, names: frozenset[str]) -> str:
    """ "A1-A6: 100 uL buffer to plate_1" -> "100 uL buffer to plate_1 A1-A6": the wells of a
    label that names only wells go after the one plate its body adds to, or after a body that
    names no labware ("- row A: 100 uL dye" under "plate_1:"); a body with wells of its own or
    with two plates is left as it was."""
    m = _WELLS_FIRST.match(line)
    if m is None or _WELL.search(body := m["body"]) or not _VOLUME_SAID.search(body):
        return line
    if "+" in body:  # "B1: 5 uL library + 45 uL Tris": an entry of a mixture list
        return line
    named = [
        p
        for name in names
        for p in re.finditer(rf"(?<![\w-]){re.escape(name)}(?![\w-])", body, re.IGNORECASE)
    ]
    if not named and not _WELL.search(m["wells"]):  # "- row A: 100 uL dye" under "plate_1:"
        return f"{m['item'] or ''}{body} {m['wells']}"
    into = [p for p in named if not re.search(r"\bfrom\s+(?:the\s+)?$", body[: p.start()], re.I)]
    if len(into) != 1:
        return line
    at = into[0].end()
    return f"{m['item'] or ''}{body[:at]} {m['wells']}{body[at:]}"
