"""A starting well said inside the set it starts ("row B starting at B4", "column 3 of plate_1,
starting at H3"): it orders the set, it is never a destination of its own (a second dispense
into it). When it is the set's first well the set stands; any other well leaves open whether
the wells before it are meant, which is asked."""

from __future__ import annotations

import re
from itertools import pairwise
from typing import Any

from agents.task.planning._outcomes import Ask
from agents.task.planning._wellsets import SelectionError

# between the set and its starting well: "row B of ####### starting at", "column 3, beginning with"
_STARTS = re.compile(
    r"^\s*(?:(?:of|on|in)\s+(?:the\s+)?#+\s*)?[,(]?\s*(?:starting|beginning|start)\s+"
    r"(?:at|from|with|in)\s+(?:well\s+)?$",
    re.IGNORECASE,
)


def start_within(ents: Any) -> None:
    """Drop a starting well that opens the set it is said with; ask about one inside it."""
    sets = ents.wellsets
    for whole, first in pairwise(sets):
        if not _STARTS.match(ents.marked[whole.end : first.start]):
            continue
        try:  # the largest grid: whether a well lies in a row or column needs no plate size
            wells, one = whole.expand(16, 24), first.expand(16, 24)
        except SelectionError:
            continue
        if len(one) != 1 or len(wells) < 2 or one[0] not in wells:
            continue
        if one[0] == wells[0]:
            ents.wellsets = [s for s in sets if s is not first]
            return
        raise Ask(
            f"You say {whole.text.strip()} starting at {one[0]}: should every well of "
            f"{whole.text.strip()} get it, or only {one[0]} and the wells after it?",
            ["wells"],
            [f"all of {whole.text.strip()}", f"{one[0]} to the end of {whole.text.strip()}"],
        )
