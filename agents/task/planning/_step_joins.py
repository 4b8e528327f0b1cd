"""A serial dilution's step volume said in a sentence of its own ("3-fold serial dilution of X
across P row A. Transfer 45 uL, mix 5x"): with no fills spelled out around it, the sentence
is the series' own step, read with the series as one ("..., transfer 45 uL"), never a bare
chain over wells nothing filled."""

from __future__ import annotations

import re
from dataclasses import replace

from agents.task.planning._frames import Frame
from agents.task.planning._reading import _folded, _reread
from agents.task.planning.families import Family

Item = tuple[Frame | None, Family | None]
# "..., then continue to A8": the steps are spelled out one by one, no step of the series
_CONTINUE = re.compile(
    r"^(?:and\s+)?(?:then\s+)?(?:continue|carry\s+on|keep\s+going|repeat)\b", re.I
)


def step_into_series(read_in: list[Item], header: Frame) -> bool:
    """Read the one placeless step ("Transfer 45 uL", "Carry 100 uL.") into ``header`` (in
    ``read_in``) when no other move is said; False: left as it was."""
    moves = [
        i
        for i, (f, fam) in enumerate(read_in)
        if fam is not None and fam.name in ("transfer", "chain") and f is not None
    ]
    if (
        len(moves) != 1
        or any(f.places for f, _ in (read_in[i] for i in moves) if f is not None)
        or any(f is not None and _CONTINUE.match(f.text) for f, _ in read_in)
        or not (header.ents.wellsets or header.ents.labware)
    ):
        return False
    i = moves[0]
    steps = [read_in[i][0], *_mixing_after(read_in, i)]  # "..., mix 5x": its mixing too
    said = ", ".join(f.text for f in steps if f is not None)
    joined = _reread(replace(header.clause, text=f"{header.text}, {said}"), header)
    if joined is None or joined[1].name != "dilution" or not joined[0].ents.volumes():
        return False
    joined[0].extra["folded"] = [*_folded(header), *(f.clause for f in steps if f is not None)]
    at = next(k for k, (f, _) in enumerate(read_in) if f is header)
    read_in[at] = joined
    del read_in[i : i + len(steps)]
    return True


def _mixing_after(read_in: list[Item], i: int) -> list[Frame | None]:
    """The placeless mixing said right after the step ("Transfer 45 uL, mix 5x")."""
    after = read_in[i + 1] if i + 1 < len(read_in) else (None, None)
    frame, family = after
    if frame is None or family is None or family.name != "mix" or frame.places:
        return []
    return [frame]


# "..., leave the last well as is", "..., keep the final well as a blank": the series' own end
_LAST_SAID = re.compile(
    r"^(?:and\s+)?(?:leave|keep)\s+(?:the\s+)?(?:last|final|end)\s+(?:wells?|ones?|points?)\b", re.I
)


def last_well_into_series(read_in: list[Item]) -> list[Item]:
    """A clause that says how a series' last well ends, right after the series in the same
    sentence, read with it as one ("2-fold ... A1-A6, 100 uL final, leave the last well as is")."""
    out: list[Item] = []
    for frame, family in read_in:
        prev = out[-1] if out else (None, None)
        head, kind = prev
        if (
            frame is not None
            and head is not None
            and kind is not None
            and kind.name == "dilution"
            and head.clause.sentence == frame.clause.sentence
            and _LAST_SAID.match(frame.text)
            and (joined := _reread(replace(head.clause, text=f"{head.text}, {frame.text}"), head))
            and joined[1].name == "dilution"
        ):
            joined[0].extra["folded"] = [*_folded(head), frame.clause]
            out[-1] = joined
            continue
        out.append((frame, family))
    return out
