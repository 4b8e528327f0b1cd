"""A tip for each thing the person names: "one tip per serum" where the sera are what moves is
a tip for each source, kept for that serum's replicates; "one tip per sample" while buffer goes
into the samples is a tip for each destination (the tip touches each sample)."""

from __future__ import annotations

import re

from agents.task.planning._pipetting import Op
from agents.task.planning._world import World

_PER = re.compile(
    r"\b(?:one|a|new|fresh|separate|its\s+own)\s+tips?\s+(?:per|for\s+each|for\s+every|each)\s+"
    r"([a-z][\w-]*)",
    re.IGNORECASE,
)


def _stem(word: str) -> str:
    word = word.lower()
    return {"sera": "serum", "libraries": "library"}.get(word, word.rstrip("s"))


_GENERIC = frozenset({"sample", "specimen", "patient", "donor", "isolate", "clone", "strain"})


def per_named(text: str, ops: list[Op], world: World) -> str | None:
    """The tip policy "one tip per <noun>" means here: per source when the noun names what
    moves (or a sample, when only the sources hold any), per destination when it names what
    the destinations hold; None when the noun names neither."""
    m = _PER.search(text)
    if m is None:
        return None
    noun = _stem(m.group(1))

    def names(wells: set[tuple[str, str]]) -> set[str]:
        held = {name for w in wells for name in world.contents.get(w, {})}
        return {_stem(word) for name in held for word in re.findall(r"[\w-]+", name)}

    sources = {o.src for o in ops}
    dests = {o.dst for o in ops if o.dst is not None}
    if noun in names(dests):
        return "per_destination"
    if len(sources) > 1 and (noun in names(sources) or (noun in _GENERIC and not names(dests))):
        return "per_source"
    return None
