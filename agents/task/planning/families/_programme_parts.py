"""How a thermocycling programme is told across clauses: its parts ("Initial denaturation:
98 C, 30 s", "Stage 3:", "Do 35 cycles."), the hold after it ("hold at 4 C", "4 C forever"),
the first part or the plate told before the cycling clause, and a programme told without a
cycling word ("25 C 10 min, 50 C 10 min, 85 C 5 min, hold at 4 C forever"). The compose stage
and the thermocycle family read clauses with these.
"""

from __future__ import annotations

import re

from agents.task.planning._clauses import Clause
from agents.task.planning._entities import Entities
from agents.task.planning._frames import Frame
from agents.task.planning._quantities import quantities
from agents.task.planning.families import _profile as prof

_FLAGS = re.IGNORECASE
HOLD = re.compile(r"^(?:hold|keep|store|cool|held|kept|stored|cooled)\b", _FLAGS)

_COLD = re.compile(  # "then 4 C", "then down to 4 C", "then to 4 C on pcr_plate", "then 4."
    r"^(?:and\s+)?(?:then\s+)?(?:(?:go|drop|ramp|come)\w*\s+)?(?:down\s+)?(?:at\s+|to\s+)?"
    r"(-?\d+(?:\.\d+)?)\s*(?:c|degrees?|(?=\W*$))(?:\s+(?:on|in)\s+(?:the\s+)?[\w-]+)?\W*$",
    _FLAGS,
)


_PROGRAMME_LABEL = re.compile(r"^(?:thermo[\s-]?)?cycl\w*\s*:?\s+", _FLAGS)


def is_hold(text: str) -> bool:
    """A clause that only holds the block ('hold at 4 C', '4 C forever', 'keep it at 4 C',
    'then 4 C')."""
    if prof.steps(text):
        return False
    text = _PROGRAMME_LABEL.sub("", text.strip())  # "Cycling: ... . 4C.": the label's
    cold = _COLD.match(text)
    return prof.hold_of(text) is not None or bool(cold and float(cold.group(1)) <= prof.COLD_HOLD_C)


_COUNT_ONLY = re.compile(
    r"^(?=.*\b(?:repeat\w*|\d+|x|times|cycles?)\b|.*\b[x×]\d)(?:and\s+)?(?:then\s+)?"
    r"(?:repeat(?:ed)?|(?:do|run|perform|cycle)(?:\s+(?:it|that|this|them))?|for|with)?\s*"
    r"(?:(?:it|that|this|them|these|those|all|both|the\s+above)(?:\s+(?:two|three|four))?"
    r"(?:\s+steps?)?\s+)?(?:(?:a\s+)?total\s+of\s+)?"
    rf"(?:(?:x|×)\s*{prof.COUNT_N}|{prof.COUNT_N}\s*(?:x|×|times|cycles?)"
    r"|(?:a\s+few|several|a\s+couple\s+of|some|many)\s+(?:times|cycles))?\s*(?:(?:in\s+)?total|of)?\W*$",
    _FLAGS,
)


_CYCLE_NUMBER = re.compile(
    r"^(?:the\s+)?(?:cycle\s+(?:number|count|no\.?)|(?:number|no\.?)\s+of\s+cycles|#\s*(?:of\s+)?cycles"
    r"|cycles)\s*[:=]?\s*\d{1,3}\W*$",
    _FLAGS,
)  # "cycle number 40", "No. of cycles: 35"
_NO_HOLD_ONLY = re.compile(  # "No final hold.", "no 4 C hold needed": the programme just ends
    r"^(?:and\s+|but\s+)?(?:no|without\s+(?:a|any))\s+(?:final\s+|end\s+)?(?:4\s*C\s+)?hold"
    r"(?:\s+step)?(?:\s+(?:needed|required|please|at\s+the\s+end))?\W*$",
    _FLAGS,
)
_LID_ONLY = re.compile(
    r"^(?:and\s+|then\s+|with\s+)*(?:the\s+|a\s+)?(?:heated\s+)?lid\b[^,;]*?\d[^,;]*$", _FLAGS
)


_PART_LABEL = re.compile(
    r"^(?:then\s+|and\s+)?(?:(?:initial|final|first|last|pre-?)\s+)?(?:heated\s+)?(?:lid|hold|"
    r"denatur\w*|anneal\w*|exten\w*|elongat\w*|melt\w*|hot\s+start|activation|inactivation|"
    rf"cycl\w*|stage\s*\w*|step\s*\w*|(?:{prof.COUNT_N})\s*(?:x|cycles?))(?:\s+temp(?:erature)?)?$",
    _FLAGS,
)  # "Stage 3:", "then thirty cycles:"


def part_text(clause: Clause) -> str:
    """A clause with its label when the label names a part of a programme ("Lid: 105 C",
    "Hold: 4 C", "Initial denaturation: 98 C, 30 s") or its volume ("Reaction volume: 25 uL")."""
    label = (clause.label or "").strip()
    if label and (_PART_LABEL.match(label) or _VOLUME_NOTE.match(f"{label} {clause.text}")):
        return f"{label} {clause.text}"
    return clause.text


def hold_text(clause: Clause) -> str:
    """The hold a clause says, as the profile reads it ("then 4." after a programme: 4 C)."""
    text = part_text(clause)
    cold = _COLD.match(_PROGRAMME_LABEL.sub("", text.strip()))
    if cold and prof.hold_of(text) is None:
        return f"hold at {cold.group(1)} C"
    return text


def is_continuation(text: str) -> bool:
    """A clause of only temperatures and times ('72 C for 5 min', 'final extension 72 C 5 min')."""
    rest = text
    for q in sorted(quantities(text), key=lambda q: -q.start):
        rest = rest[: q.start] + rest[q.end :]
    bare = text.strip().rstrip(":").strip()
    if bare and (
        _COUNT_ONLY.match(bare)
        or _CYCLE_NUMBER.match(bare)
        or _LID_ONLY.match(bare)
        or _PART_LABEL.match(bare)
        or _VOLUME_NOTE.match(bare)
        or _NO_HOLD_ONLY.match(bare)
    ):
        return True  # "..., repeat 35 times", "Do 35 cycles.", "lid at 105 C", "No final hold."
    return bool(prof.steps(text, programme=True)) and not re.search(
        r"\b(?:shake|read|transfer|add|move|mix|incubate|rpm|nm|ul|ml|park|unload|stash|measure"
        r"|hotel|dispense)\b",
        rest,
        _FLAGS,
    )


_ON_PLATE = re.compile(
    r"\b(?:on|in|for|using|with|plate|onto|into|run|do|it|this|that|the|above|same|programme"
    r"|program|profile|please|pls)\b|[-–—()\[\],:;.]",
    _FLAGS,
)  # "...; hold 4 C. Run this on rxn_plate (in tc1)": the plate the programme runs on


def continues(frame: Frame, profile: Frame) -> bool:
    """More of the ``profile`` clause before it: temperatures and times ("72 C 5 min"), a count
    ("repeat 40 times"), or the plate it runs on said after it ("...; qpcr_a", "repeat 40 times
    - on qpcr_a") when the profile names none (a second plate is never folded away)."""
    text = part_text(frame.clause)
    if is_continuation(text):
        return True
    plates = [m for m in frame.ents.labware if m.sure]
    if not plates or profile.ents.labware or text != frame.clause.text:
        return False
    rest = frame.ents.text
    spans = [(m.start, m.end) for m in plates]
    spans += [(a, b) for kind, _, a, b in frame.ents.instruments if kind == "thermocycler"]
    for start, end in sorted(spans, key=lambda se: -se[0]):
        rest = rest[:start] + rest[end:]
    rest = _ON_PLATE.sub(" ", rest).strip()
    return not rest or (is_continuation(rest) and not is_hold(rest))


_PLATE_ONLY = re.compile(
    r"^[\W_]*(?:(?:the|plate|for|on|with|program(?:me)?|protocol|thermal|cycling|conditions"
    r"|pcr|qpcr|profile|settings|parameters|run)\b[\W_]*)*$",
    _FLAGS,
)
# "Reaction volume: 25 uL" among a programme's lines: what the wells hold, no setting of it.
_VOLUME_NOTE = re.compile(
    r"^(?:(?:reaction|sample|total|final|rxn)\s+)?vol(?:ume)?\.?\s*[:=]?\s*\d*(?:\.\d+)?\s*[um][lL]"
    r"(?:\s*(?:per|/|each)\s*(?:well|reaction|rxn))?\W*$",
    _FLAGS,
)


def part_before(before: Frame, family: str, profile: Frame) -> bool:
    """Whether the clause ``before`` a profile is its first part: a part with only
    temperatures and times ("rxn_plate: 99 C 30 s", "Stage 1: 95 C 10 min", "initial 95/3min"),
    or a line naming only the plate the programme runs on ("amp_plt" above its steps)."""
    if family not in ("incubate", "context", "not understood"):
        return False
    text = part_text(before.clause)
    if is_continuation(text) and not is_hold(text):
        return True
    rest = text
    for m in sorted(before.ents.labware, key=lambda m: -m.start):
        rest = rest[: m.start] + rest[m.end :]
    return bool(before.ents.labware) and bool(_PLATE_ONLY.match(rest))


_FOREVER = re.compile(r"∞|\bforever\b|\bindefinitely\b|\binf(?:inity)?\b|\bhold\b", _FLAGS)
_NOT_BLOCK = re.compile(r"\b(?:shak\w*|rpm|agitat\w*|orbital|read|nm)\b", _FLAGS)


def programme_only(text: str, ents: Entities) -> bool:
    """A programme told without a cycling word: three timed steps or more, or timed steps
    ending in a cold hold ('..., 85 C 5 min, 4 C forever'). A heater-shaker holds one
    temperature a clause and never holds a plate cold for good."""
    timed = prof.steps(text)
    if not timed or ents.volumes() or _NOT_BLOCK.search(text):
        return False
    cold = prof.hold_of(text)
    kept = cold is not None and cold <= prof.COLD_HOLD_C and bool(_FOREVER.search(text))
    return kept or (len({c for *_, c, _ in timed}) >= 2 and len(timed) >= 3)


def timed_only(frame: Frame) -> bool:
    return bool(prof.steps(part_text(frame.clause))) and not (
        frame.ents.volumes() or _NOT_BLOCK.search(frame.text)
    )
