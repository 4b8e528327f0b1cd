"""The destination named in a sentence of its own after the move that needs it: "Stamp
MB-3, 200 uL. Destination: DB-1.", "Make a replica of samples at 5 uL. Use dest_plate as the
destination.", "..., target plate qc96". The piece names one plate (and perhaps its wells) and
only says it is where things go; the move before it names no destination of its own. The two
are read as one clause (the piece folded into it, so the trace still shows it)."""

from __future__ import annotations

import re

from agents.task.planning._frames import Frame
from agents.task.planning._lexicon import Lexicon
from agents.task.planning._normalise import Normalised
from agents.task.planning._reading import Read, fold_into_previous
from agents.task.planning.families import Family

_FLAGS = re.IGNORECASE
_ROLE = r"(?:dest(?:ination)?|target|receiving|recipient)(?:\s+(?:plate|labware|block))?"
# what is left of the piece once its plate and wells are taken out
_SAYS_WHERE = re.compile(
    rf"^(?:(?:the\s+)?{_ROLE}\s*(?:is|=|:)?|(?:please\s+)?use\s+as\s+(?:the\s+)?{_ROLE}"
    rf"|(?:is|as)\s+(?:the\s+)?{_ROLE}|(?:it\s+)?goes\s+(?:in|into|to|onto)"
    # "Put them in dest_plate.", "They go into P2.", "Onto dest_plate please."
    r"|(?:please\s+)?(?:put|place|transfer|move|pipette|dispense)\s+(?:them|it|these|those"
    r"|the\s+cop(?:y|ies)|everything)\s+(?:in|into|to|onto)"
    r"|(?:they|these|those|it|the\s+cop(?:y|ies))\s+(?:go(?:es)?|should\s+go|will\s+go)"
    r"\s+(?:in|into|to|onto)|(?:in|into|onto|to))(?:\s+please)?$",
    _FLAGS,
)


def _where_said(frame: Frame) -> str | None:
    """The plate (and wells) the piece names as the destination, as written; None when the
    piece says anything else."""
    ents = frame.ents
    if len(ents.labware) != 1 or not ents.labware[0].sure or ents.quantities:
        return None
    spans = [(m.start, m.end) for m in ents.labware] + [(w.start, w.end) for w in ents.wellsets]
    text = ents.text
    for a, b in sorted(spans, reverse=True):
        text = f"{text[:a]} {text[b:]}"
    label = frame.clause.label or ""
    rest = " ".join(f"{label} {text}".replace(":", " : ").split()).strip(" .;,")
    if not _SAYS_WHERE.match(rest):
        return None
    start, end = min(a for a, _ in spans), max(b for _, b in spans)
    return ents.text[start:end]


def dest_after(read_in: Read, lex: Lexicon, norm: Normalised) -> Read:
    """``read_in`` with a piece that names the destination of the move before it (which
    names none) read as that move's destination."""

    def joins(frame: Frame, _: Family | None, head: Frame) -> bool:
        dest = any(role == "dest" for role, _ in head.places)
        return not dest and _where_said(frame) is not None

    def text(head: Frame, frame: Frame) -> str:
        return f"{head.clause.text} to {_where_said(frame)}"

    return fold_into_previous(read_in, lex, norm, "transfer", joins, text=text)
