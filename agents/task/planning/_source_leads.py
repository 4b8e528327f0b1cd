"""Where the source of a transfer is said in a clause of its own, beside the transfer.

People often name what to take in a piece of the sentence that is not the transfer itself:
a lead ("Using the dye, add 20 uL to ...", "With buffer from the reservoir, fill ..."), a first
half ("Take TMB from the reservoir and dispense 50 uL into row B"), or an afterthought
("dispense 50 uL into A1:H1; source is the stop solution"). Read alone, the transfer names no
liquid and the planner would ask for it; the piece is joined to the transfer it serves, within
one sentence only, so the liquid and the place it comes from are the ones said.
"""

from __future__ import annotations

import re
from dataclasses import replace

from agents.task.planning._frames import Frame
from agents.task.planning._lexicon import Lexicon
from agents.task.planning._normalise import Normalised
from agents.task.planning.families import Family

Read = list[tuple[Frame | None, Family | None]]

# "Using the dye", "With dye from the reservoir", "Take buffer from reservoir column 2"
_LEAD = re.compile(
    r"^(?:(?P<prep>using|with)|(?:first\s+)?(?:take|taking|draw|drawing|get|grab|use|pull)"
    r"(?:\s+up)?)\s+(?P<rest>.+)$",
    re.IGNORECASE,
)
# "source is the buffer", "the source is res A3", "source = TMB", "source: TMB"
_AFTER = re.compile(r"^(?:and\s+)?(?:the\s+)?source\s*(?:is|=|:|-)\s*(?P<rest>.+)$", re.IGNORECASE)
_VOLUME_KINDS = ("volume",)
_FROM_PLACE = re.compile(r"\b(?:in|on|at)\s+(?=(?:the\s+)?\S)", re.IGNORECASE)


def _needs_source(frame: Frame) -> bool:
    """A transfer clause with a volume that names no liquid and no place to take from."""
    ents = frame.ents
    if frame.liquid is not None or ents.liquids:
        return False
    if not any(q.kind in _VOLUME_KINDS for q in ents.quantities):
        return False
    return not re.search(r"\bfrom\b", frame.text, re.IGNORECASE)


def _serves(item: tuple[Frame | None, Family | None], lead: Frame) -> bool:
    """A further transfer of the lead's sentence that names no source of its own."""
    frame, family = item
    return (
        frame is not None
        and family is not None
        and family.name == "transfer"
        and frame.clause.sentence == lead.clause.sentence
        and _needs_source(frame)
    )


def _names_source(frame: Frame, lex: Lexicon) -> bool:
    """The piece names a liquid (or a container and a liquid) and nothing to move to."""
    ents = frame.ents
    if not ents.liquids or any(q.kind in _VOLUME_KINDS for q in ents.quantities):
        return False
    return not re.search(r"\b(?:to|into|onto|->)\b", frame.text, re.IGNORECASE)


def _joined(
    frame: Frame, extra: str, lex: Lexicon, norm: Normalised
) -> tuple[Frame, Family] | None:
    from agents.task.planning._reading import _read  # the reader of stage 4 (no cycle at import)

    text = f"{frame.clause.text}, {extra}"
    merged, fam = _read(replace(frame.clause, text=text), lex, norm.quoted)
    if merged is None or fam is None or fam.name != "transfer":
        return None
    if merged.liquid is None and not merged.ents.liquids:
        return None
    return merged, fam


def source_leads(read_in: Read, lex: Lexicon, norm: Normalised) -> Read:
    """Join a clause that only says what to take to the transfer beside it in its sentence."""
    if not any(f is not None and (_LEAD.match(f.text) or _AFTER.match(f.text)) for f, _ in read_in):
        return read_in  # the common case: nothing to join (cheap)
    out: Read = []
    i = 0
    while i < len(read_in):
        frame, family = read_in[i]
        nxt = read_in[i + 1] if i + 1 < len(read_in) else None
        lead = _LEAD.match(frame.text) if frame is not None else None
        if (
            frame is not None
            and lead is not None
            and (family is None or family.name in ("transfer", "context"))
            and nxt is not None
            and nxt[0] is not None
            and nxt[1] is not None
            and nxt[1].name == "transfer"
            and nxt[0].clause.sentence == frame.clause.sentence
            and _names_source(frame, lex)
            and _needs_source(nxt[0])
        ):
            said = _FROM_PLACE.sub(
                "from ", lead.group(0) if lead.group("prep") else lead.group("rest")
            )  # "Using the TMB in rgt": rgt is where it is taken from
            got = _joined(nxt[0], said, lex, norm)
            if got is not None:
                got[0].extra["folded"] = [frame.clause]
                out.append(got)
                i += 2
                while i < len(read_in) and _serves(read_in[i], frame):
                    # "using X, add 20 uL to A and 40 uL to B": the lead serves both
                    more = _joined(read_in[i][0], said, lex, norm)  # type: ignore[arg-type]
                    out.append(more if more is not None else read_in[i])
                    i += 1
                continue
        after = _AFTER.match(frame.text) if frame is not None else None
        prev, prev_fam = out[-1] if out else (None, None)
        if (
            frame is not None
            and after is not None
            and prev is not None
            and prev_fam is not None
            and prev_fam.name == "transfer"
            and prev.clause.sentence == frame.clause.sentence
            and frame.ents.liquids
            and _needs_source(prev)
        ):
            got = _joined(prev, f"(source: {after.group('rest')})", lex, norm)
            if got is not None:
                got[0].extra["folded"] = [*_folded(prev), frame.clause]
                out[-1] = got
                i += 1
                continue
        out.append((frame, family))
        i += 1
    return out


def _folded(frame: Frame) -> list[object]:
    folded = frame.extra.get("folded")
    return list(folded) if isinstance(folded, list) else []
