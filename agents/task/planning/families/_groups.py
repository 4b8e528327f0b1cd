"""Replicate groups written one per source: "spot A1-A4, 3 spots each (A1-A3, B1-B3, C1-C3,
D1-D3)" sends A1 into A1-A3 and A2 into B1-B3 - the groups in the order the sources are
listed - never round-robin over the groups' wells (A1 into A1, B2, C3)."""

from __future__ import annotations

import re

from agents.task.planning import _resolve as r
from agents.task.planning._frames import Frame
from agents.task.planning._quantities import number
from agents.task.planning._wellsets import SelectionError
from agents.task.planning._wellsets import _expand as expand_part
from agents.task.planning.families import _pairing as pairing

_FLAGS = re.IGNORECASE
# "3 spots each", "x3 each", "3x each", "3 replicate wells each", "each in 3 wells"
_EACH = re.compile(
    r"\b(?:x\s*)?(\d|two|three|four|five|six)\s*(?:x|×|times)?\s+(?:[a-z-]+\s+){0,2}?each\b"
    r"|\bx\s*(\d)\s+each\b"
    r"|\beach\s+(?:in|into|to|onto)\s+(\d|two|three|four|five|six)\s+(?:wells|spots|replicates)\b",
    _FLAGS,
)

_TIMES = re.compile(r"(?:^|\s)(?:x|×)\s*(\d)\b|\b(\d)\s*(?:x|×)(?:\s|$)", _FLAGS)  # "x3", "3x"


# "... into A1-A3, B1-B3 and C1-C3 respectively", "triplicate wells of each serum": a group
# per source even when each group has the sources' own shape
_PER_SOURCE = re.compile(
    r"\brespectively\b|\b(?:of|for)\s+each\b|\bper\s+(?:sample|source|serum|standard|well)\b",
    _FLAGS,
)


def _count(frame: Frame) -> int | None:
    """How many copies of each source the request says (None: not said): its replicate count,
    "3 spots each", or a label "x3:" ("mix 3x" in the clause itself is mixing, never a count)."""
    if frame.ents.replicates:
        return frame.ents.replicates
    label = frame.clause.label or ""
    m = _EACH.search(f"{label} {frame.clause.said}") or _TIMES.search(label)
    return int(number(next(g for g in m.groups() if g))) if m else None


def _groups(
    frame: Frame, dest_sets: list[tuple[str, list[str]]], world: r.World
) -> list[list[str]]:
    """The destination as the groups it was written in: several places on one plate, or one
    place listing several ranges ("(A1-A3, B1-B3, C1-C3)"); [] when not written so."""
    plates = {lw for lw, _ in dest_sets}
    if len(plates) != 1:
        return []
    if len(dest_sets) > 1:
        return [ws for _, ws in dest_sets]
    lw, wells = dest_sets[0]
    view = world.labware(lw)
    for role, place in frame.places:
        if role != "dest" or place.wells is None or len(place.wells.parts) < 2:
            continue
        try:
            groups = [expand_part(part, view.rows, view.cols) for part in place.wells.parts]
        except SelectionError:
            continue
        if [w for g in groups for w in g] == wells:
            return groups
    return []


def paired(
    frame: Frame, src: list[str], dest_sets: list[tuple[str, list[str]]], world: r.World
) -> list[tuple[str, str, str]]:
    """(destination plate, source well, destination well) for every move: a group per source
    when the destination is written as one group of the said count per source, in order;
    else each destination set paired with the sources as written (stamp, spot, replicates)."""
    groups = _groups(frame, dest_sets, world) if len(src) > 1 else []
    per_source = bool(_PER_SOURCE.search(f"{frame.clause.label or ''} {frame.clause.said}"))
    if _set_again(src, groups, per_source) and len(dest_sets) == 1:
        # "samples A1-A6 into dest_plate A1-A6 and A7-A12": the set again into each range
        return [(dest_sets[0][0], s, d) for g in groups for s, d in pairing.pair(src, g)]
    k = len(groups[0]) if groups else 0
    if (
        len(groups) == len(src)
        and k > 1
        and all(len(g) == k for g in groups)
        and (count := _count(frame)) in (None, k)
        and (k != len(src) or count or per_source)  # (as many as the sources: a copy of the set?)
        and (per_source or not _copies_of_the_set(src, groups))
    ):
        lw = dest_sets[0][0]
        return [(lw, s, d) for s, g in zip(src, groups, strict=True) for d in g]
    return [
        (lw, s, d)
        for lw, ws in dest_sets
        for s, d in pairing.pair(pairing.side_by_side(src, ws, frame), ws)
    ]


def _set_again(src: list[str], groups: list[list[str]], per_source: bool) -> bool:
    """Ranges each the sources' shape, not one per source ("A1-A6 into A1-A6 and A7-A12")."""
    if len(groups) < 2 or len(groups) == len(src) or per_source:
        return False
    return _copies_of_the_set(src, groups)


def _copies_of_the_set(src: list[str], groups: list[list[str]]) -> bool:
    """Every group the sources' own shape ("A1-A3 in triplicate into A1-A3, B1-B3, C1-C3"):
    each group is a copy of the whole set, well by well."""
    shape = pairing._rect(src)
    return shape is not None and all(
        (g_shape := pairing._rect(g)) is not None and g_shape[2:] == shape[2:] for g in groups
    )
