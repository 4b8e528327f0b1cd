"""One spelling for the words later stages key on: units after a number, misspelt keywords.

Units: "150 microlitres", "0.2 millilitres", "4 degrees C", "5 minutes" are written "150 uL",
"0.2 mL", "4 C", "5 min", the forms every later stage reads.

Keywords: misspelt keywords of lab English are corrected before the clause splitter reads them.

The splitter starts a clause at an action verb after a comma or an "and" (", incubate 15 min",
"..., then dispense it into B1") and knows a dilution by its words; a misspelt verb
("incubtae", "dipsense", "trasnfer", "pipete", "diltuion") hid that boundary, so two actions
were read as one and the second one's numbers were left over. The clause reader corrects typos
too, but only after the split. Here, before it, a word is corrected only to an action verb or
a keyword, only when it is a sure typo (one edit, two for long words; a transposition is one
edit), shares its first two letters and is no inflection or known word; quoted names are
already held aside, and lab names are never this close to a verb.
"""

from __future__ import annotations

import re
from functools import lru_cache

from rapidfuzz import process
from rapidfuzz.distance import DamerauLevenshtein

from agents.task.planning._vocabulary import NOT_TYPOS, VOCABULARY

# What a misspelt word is corrected to: the verbs that start a clause and the keywords of a
# family (five letters or more: shorter words are too close to others to correct safely).
_TARGET_WORDS = """
    transfer dispense distribute aliquot pipette pipet place bring return shake incubate
    measure record prepare dilute serially combine consolidate stamp replicate cherrypick
    remove aspirate discard normalise normalize thermocycle cycle agitate dispose withdraw
    drain empty exchange replace refill replenish resuspend titrate quench start perform
    carry continue proceed repeat unload rinse dilution dilutions serial absorbance
    fluorescence luminescence incubation aliquots multichannel triplicate duplicate
"""
_TARGETS = frozenset(_TARGET_WORDS.split())
_TARGET_LIST = sorted(_TARGETS)
_INFLECTED = re.compile(r"s|es|ed|d|ing|er|ers|ion|ions|al|ally|ly|y")
_WORD = re.compile(r"(?<![\w«-])[A-Za-z]{5,}(?![\w»-])")


def _inflected(word: str, target: str) -> bool:
    """'repeats' of 'repeat', 'mixer' of 'mix', 'diluted' of 'dilute'."""
    stems = [target, target[:-1]] if target.endswith("e") else [target]
    return any(
        word.startswith(stem) and _INFLECTED.fullmatch(word[len(stem) :]) is not None
        for stem in stems
    )


@lru_cache(maxsize=4096)
def _corrected(word: str) -> str:
    low = word.lower()
    if low in VOCABULARY or low in NOT_TYPOS or low in _TARGETS:
        return word
    near = [
        (int(edits), -len(str(t)), str(t))
        for t, edits, _ in process.extract(
            low, _TARGET_LIST, scorer=DamerauLevenshtein.distance, limit=3
        )
    ]
    if not near:
        return word
    edits, _, target = min(near)
    allowed = 1 if max(len(low), len(target)) < 9 else 2
    if edits > allowed or target[:2] != low[:2]:
        return word
    if target.startswith(low) or _inflected(low, target):
        return word  # a stem or an inflection ("incubat", "repeats", "mixer"), not a typo
    return target if word.islower() else target.capitalize() if word[0].isupper() else word


def keywords(text: str) -> str:
    """``text`` with misspelt action verbs and keywords written right."""
    return _WORD.sub(lambda m: _corrected(m.group(0)), text)


# A unit after a number, spelled however it is written ("150 microlitres", "0.2 millilitres",
# "4 degrees C", "37 deg. Celsius", "5 minutes", "30 secs", "2 hours"), in the one short form
# the later stages read ("uL", "mL", "C", "min", "s", "h"). Only right after a number.
_NUMBER_UNIT = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?|\.\d+)([ \t]*-?[ \t]*)"
    r"(?:(?P<ul>micro[ \t-]?lit(?:er|re)s?|u[lL]s?|mcl)"
    r"|(?P<ml>milli[ \t-]?lit(?:er|re)s?|m[lL]s|ML)"
    r"|(?P<c>(?:degrees?|deg\.?)[ \t]*(?:C|celsius|centigrade)|degrees?(?![ \t]*(?:F|fahrenheit)\b)"
    r"|celsius|centigrade|degC|c(?=[ \t]*(?:$|[,;.)/\n]|for\b|and\b|\d)))"
    r"|(?P<min>minutes?|mins)|(?P<s>seconds?|secs?)|(?P<h>hours?|hrs?))\b",
    re.IGNORECASE | re.MULTILINE,
)
_SHORT = {"ul": "uL", "ml": "mL", "c": "C", "min": "min", "s": "s", "h": "h"}


def _number_unit(m: re.Match[str]) -> str:
    kind = next(k for k in _SHORT if m.group(k) is not None)
    return f"{m.group(1)}{m.group(2)}{_SHORT[kind]}"


def units(text: str) -> str:
    """``text`` with every unit after a number in its one short form."""
    return _NUMBER_UNIT.sub(_number_unit, text)
