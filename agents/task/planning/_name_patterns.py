"""The regexes of one lab's names, built once per set of names.

The same names always make the same regexes, whatever the labs hold, so each builder is cached
on its names alone (tuples and frozensets of strings: never a lab view, whose contents change):
a request pays for matching, not for compiling, and two labs that share names share only the
regexes of those names. A cached value that is mutable is copied by its caller.
"""

from __future__ import annotations

import re
from functools import lru_cache

from agents.task.planning._liquid_names import alias_pattern, by_phrase, by_word, without_tail
from agents.task.planning._vocabulary import _NOT_A_LIQUID, INSTRUMENT_WORDS

_FLAGS = re.IGNORECASE

# The names of culture media: "medium" or "media" in a request means the lab's one medium
# (not a culture: "overnight culture" is cells in a medium, never the medium to add).
MEDIUM = re.compile(
    r"\b(?:media|medium|dmem|rpmi|e?mem|opti-?mem|imdm|f-?12|mccoy|ham'?s|broth|lb|ypd|yepd"
    r"|tb|tsb|bhi|m9|2x\s?yt|sc-\w+|mhb|cation-adjusted)\b",
    _FLAGS,
)

CULTURE = re.compile(r"\b(?:cultures?|cells|overnights?|inocul\w*|starters?)\b", _FLAGS)


@lru_cache(maxsize=128)
def every_well_rx(labware: tuple[str, ...]) -> re.Pattern[str] | None:
    """ "every HEK12 well", "all the plate_1 wells" for these labware ids."""
    names = "|".join(re.escape(n) for n in sorted(labware, key=len, reverse=True))
    if not names:
        return None
    every = r"\b(every|each|all(?:\s+the)?)\s+"
    return re.compile(rf"{every}({names})\s+(wells?)\b", re.IGNORECASE)


@lru_cache(maxsize=128)
def alias_rxs(liquids: tuple[str, ...]) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """Short forms of these liquid names, then runs of their words, then names said without
    their generic tail (see :meth:`Lexicon._alias_rxs`)."""
    out = []
    for name in sorted(liquids, key=len, reverse=True):
        pattern = alias_pattern(name)
        if pattern is not None:
            out.append((name, re.compile(rf"(?<![\w]){pattern}(?:e?s)?(?![\w])", _FLAGS)))
    return (*out, *by_phrase(list(liquids)), *without_tail(list(liquids)))


@lru_cache(maxsize=128)
def by_word_of(liquids: tuple[str, ...], taken: frozenset[str]) -> dict[str, str]:
    """The words that stand for one of ``liquids`` (``taken``: the lab's other names); callers
    get a copy (:meth:`Lexicon._by_word`)."""
    found = by_word(list(liquids), set(taken), _NOT_A_LIQUID)
    media = [n for n in liquids if MEDIUM.search(n) and not CULTURE.search(n)]
    if len(media) == 1 and not re.search(r"\bmedi(?:um|a)\b", media[0], _FLAGS):
        found.setdefault("medium", media[0])  # "fresh medium": the lab's one RPMI
        found.setdefault("media", media[0])
    return found


@lru_cache(maxsize=128)
def instrument_rxs(
    ids: tuple[str, ...],
) -> tuple[tuple[tuple[str, re.Pattern[str]], ...], tuple[tuple[str, re.Pattern[str]], ...]]:
    """(each instrument id's regex, longest first; the regex of each id's base that only one
    id has: "ODTC" for odtc1, "TC" for tc1)."""
    by_id = tuple(
        (iid, re.compile(rf"(?<![\w]){re.escape(iid)}(?![\w])", _FLAGS))
        for iid in sorted(ids, key=len, reverse=True)
    )
    bases: dict[str, list[str]] = {}
    for iid in ids:
        base = re.sub(r"[\d_-]+$", "", iid)
        if len(base) >= 2 and base != iid:
            bases.setdefault(base.lower(), []).append(iid)
    by_base = tuple(
        (found[0], re.compile(rf"(?<![\w]){re.escape(base)}(?![\w])", _FLAGS))
        for base, found in bases.items()
        if len(found) == 1
    )
    return by_id, by_base


@lru_cache(maxsize=1)
def instrument_word_rxs() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """(kind, regex) for every word of :data:`INSTRUMENT_WORDS`, in its order."""
    return tuple(
        (kind, re.compile(rf"\b{word}s?\b", _FLAGS))
        for kind, words in INSTRUMENT_WORDS.items()
        for word in words
    )


@lru_cache(maxsize=1)
def any_instrument_word() -> re.Pattern[str]:
    """Every word of :data:`INSTRUMENT_WORDS` in one regex: a text it finds nothing in has none
    of them (an alternation matches where one of its words does), so each need not be tried."""
    words = "|".join(f"(?:{word})" for words in INSTRUMENT_WORDS.values() for word in words)
    return re.compile(rf"\b(?:{words})s?\b", _FLAGS)
