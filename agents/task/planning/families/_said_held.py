"""What a transfer clause says its wells already hold: "to plate_1 A1-A3, which already hold
50 uL buffer", "into the wells holding 50 uL (A1-A3)", "from A1 (it has 200 uL)".

Such a claim rides on an action, not a sentence of its own, but it is a fact all the same: it
is checked against the lab state as the plan reaches it, and a well that holds another volume
is asked about (``lab_state``) - the planner never plans on either version.
"""

from __future__ import annotations

import re

from agents.task.planning import _resolve as r
from agents.task.planning._frames import Frame
from agents.task.planning._pipetting import Op
from agents.task.planning._quantities import fmt, quantities
from agents.task.planning.families._facts import disagree

_FLAGS = re.IGNORECASE
_ALREADY = r"(?:(?:already|each|all|both|now|still|currently)\s+)"
_HOLDING = re.compile(
    rf"\b(?:(?:which|that|they|it)\s+{_ALREADY}*(?:holds?|contains?|has|have)"
    rf"|{_ALREADY}+(?:holds?|contains?|has|have|holding|containing)|holding|containing)\s+"
    r"(?:about\s+|~\s*)?(?=\d|\.\d)",
    _FLAGS,
)
# "so each has 100 uL", "until it holds 200 uL": a volume to reach, not one already there
_TARGET = re.compile(
    r"\b(?:so|until|till|making|make|such|bring\w*|up\s+to|top\w*)\b[^,;()]{0,20}$", _FLAGS
)


def check(frame: Frame, ops: list[Op], p: r.Planning) -> None:
    """Ask when a volume the clause says its wells hold disagrees with the lab state."""
    text = frame.text
    m = _HOLDING.search(text)
    if m is None or _TARGET.search(text, 0, m.start()):
        return
    said = [q for q in quantities(text[m.end() :]) if q.kind == "volume"][:1]
    if not said or said[0].start != 0:
        return
    volume = said[0].value
    sources = [o.src for o in ops]
    dests = [o.dst for o in ops if o.dst is not None]
    src_at = _start(frame.source)
    dst_at = _start(frame.dest)
    on_source = src_at is not None and src_at < m.start() and (dst_at is None or dst_at > m.start())
    wells = list(dict.fromkeys(sources if on_source else dests))
    world = p.world
    for lw, well in wells:
        have = (
            world.well_volume(lw, well)
            + sum(o.volume for o in p.pending if o.dst == (lw, well))
            - sum(o.volume for o in p.pending if o.src == (lw, well))
        )
        if abs(have - volume) > 0.5:
            raise disagree(
                f"{lw} {well} holds {said[0].text}", f"it holds {fmt(round(have, 3), 'uL')}"
            )


def _start(place: object) -> int | None:
    spots = [x.start for x in (getattr(place, "labware", None), getattr(place, "wells", None)) if x]
    return min(spots) if spots else None
