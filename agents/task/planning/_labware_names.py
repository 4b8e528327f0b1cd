"""Labware named by what it is rather than by its id: its shape ("the 384 plate", "the 12-trough
reservoir", "the 2.2 mL block", "the deep-well block"), a word for its kind ("the reservoir",
"the PCR plate"), or a word of its id ("the sera plate" for sera_plt, "the ELISA plate" for
elisa_A) or the liquid it holds ("the library plate" for the one plate of library) - each only
when exactly one labware of the lab fits.
"""

from __future__ import annotations

import re
from typing import Any

from agents.task.planning._vocabulary import _LABWARE_WORDS

_FLAGS = re.IGNORECASE

_BY_SHAPE = re.compile(
    r"\b(?:the\s+)?(?:(?P<res>\d{1,2}|single|one)[\s-]*(?:troughs?|channels?|columns?|wells?|rows?)"
    r"[\s-]+(?:reservoir|trough)s?\b|(?P<res2>\d{1,2})[\s-]*troughs?(?:\s+plate)?\b"
    r"|(?P<wells>\d{2,4})[\s-]*(?:well|w)\b(?:\s+(?:plate|block))?"
    r"|(?P<wells2>384|96|48|24|12|6)\s+(?:plate|block)\b"
    # "into quadrant 1 of the 384, 3 uL": a bare count only for the dense formats
    r"|(?:(?<=\bthe\s)|(?<=\bblack\s)|(?<=\bwhite\s)|(?<=\bclear\s))(?P<wells3>384|1536)\b(?![\s-]*(?:[\d.]|[uµμm]l\b|micro|tips?\b|head|chan|w(?:ells?)?\b))"
    r"|(?P<ml>\d+(?:\.\d+)?)\s*m[lL]\s+(?:deep[\s-]?well\s+)?(?:block|plate)\b"
    r"|deep[\s-]?well(?:\s+(?:block|plate))?|(?<!\w)(?P<bare>block)\b)",
    _FLAGS,
)

# the word before a bare "block" that makes it an instrument's block
_INSTRUMENT_BLOCK = re.compile(
    r"\b(?:shak(?:er|ing)|heat(?:er|ing)?|thermo(?:mixer|shaker)?|cool(?:er|ing)?|cold|"
    r"magnet(?:ic)?|aluminium|aluminum|dry|pcr|cycler|incubator|tip|cooled|chilled|ice)"
    r"[\s-]+$",
    _FLAGS,
)


def reservoir_like(lw: object) -> bool:
    """A trough or a reservoir: a dozen wells or fewer, each of several mL."""
    rows, cols = getattr(lw, "rows", 0), getattr(lw, "cols", 0)
    return rows * cols <= 12 and getattr(lw, "well_max_volume_ul", 0) >= 2000


def _by_hint(plates: list[Any], hints: tuple[str, ...], said: str = "") -> str | None:
    """The one labware whose id or type contains a hint word, or for "reservoir" and
    "trough" the one reservoir-like labware (None if none or several)."""
    matches = [lw.id for lw in plates if any(h in f"{lw.id} {lw.type}".lower() for h in hints)]
    if {"reservoir", "trough"} & set(hints):
        troughs = [lw.id for lw in plates if reservoir_like(lw)]
        literal = [n for n in matches if said.lower().rstrip("s") in n.lower()]
        if not matches or (len(troughs) > 1 and not literal):
            # "the reservoir" on a bench of three troughs, one of them "bigtrough": which one
            # is not said (the liquid named with it decides, or the planner asks)
            matches = troughs if not matches else []
    return matches[0] if len(matches) == 1 else None


def _by_shape(plates: list[Any], m: re.Match[str]) -> str | None:
    """'the 24-well plate', 'the 384 plate', 'the 2.2 mL block', 'the deep-well block'."""
    if m.group("res") or m.group("res2"):  # "the 4-trough", "the 12-channel reservoir"
        said = (m.group("res") or m.group("res2")).lower()
        count = 1 if said in ("single", "one") else int(said)
        matches = [lw.id for lw in plates if reservoir_like(lw) and lw.rows * lw.cols == count]
    elif m.group("wells") or m.group("wells2") or m.group("wells3"):
        count = int(m.group("wells") or m.group("wells2") or m.group("wells3"))
        matches = [lw.id for lw in plates if lw.rows * lw.cols == count and not reservoir_like(lw)]
    elif m.group("ml"):
        ml = float(m.group("ml"))
        near = sorted(
            (abs(lw.well_max_volume_ul / 1000 - ml), lw.id)
            for lw in plates
            if abs(lw.well_max_volume_ul / 1000 - ml) < 0.25 * ml
        )
        close = [n for d, n in near if d <= near[0][0] + 0.05 * ml] if near else []
        matches = close[:1] if len(close) == 1 else close
    else:
        matches = [
            lw.id for lw in plates if lw.well_max_volume_ul >= 1000 and lw.rows * lw.cols >= 24
        ]
    return matches[0] if len(matches) == 1 else None


_ID_WORD = re.compile(
    r"\b(?:the\s+)?(?P<word>[A-Za-z][A-Za-z0-9]{2,})\s+(?P<noun>plate|block|reservoir|trough|rack)\b",
    _FLAGS,
)
# "the master plate", "the mother block", "the source plate": the one plate that holds liquid
_SOURCE_WORDS = {"master", "mother", "source", "parent", "original", "donor", "stock"}


def _by_role(plates: list[Any], word: str, noun: str) -> str | None:
    """The one plate (or deep-well block, for "block") holding liquid, for a word that names
    the plate copies are made from (None when no such word, or none or several fit)."""
    if word.lower() not in _SOURCE_WORDS or noun.lower() not in ("plate", "block"):
        return None
    matches = [
        lw.id
        for lw in plates
        if not reservoir_like(lw)
        and getattr(lw, "rows", 0) * getattr(lw, "cols", 0) > 1
        and (noun.lower() == "plate" or lw.well_max_volume_ul >= 1000)
        and any(well.contents for well in lw.wells.values())
    ]
    return matches[0] if len(matches) == 1 else None


# the parts of an id: "sera_plt" -> sera, plt; "lemna12" -> lemna, 12 (a name and its number)
_ID_PARTS = re.compile(r"[_\-\s]+|(?<=[a-z])(?=\d)|(?<=\d)(?=[a-z])")


def _by_id_word(plates: list[Any], word: str, noun: str = "plate") -> str | None:
    """The one labware whose id has ``word`` as one of its parts ("sera" for sera_plt), else
    the one labware holding the liquid ``word`` names ("the library plate" for libs_in; never
    a trough for a "plate": "the standard plate" is no trough holding the standard), else the
    one whose id shortens ``word`` ("std" of "the standard plate")."""
    low = word.lower()
    forms = {low, low.removesuffix("s"), low + "s"}  # "the seedling plate" for seedlings24
    matches = [lw.id for lw in plates if forms & set(_ID_PARTS.split(lw.id.lower()))]
    if not matches:
        forms = {low, low.removesuffix("s"), low.removesuffix("es")}
        matches = [
            lw.id
            for lw in plates
            if not (noun.lower() in ("plate", "block") and min(lw.rows, lw.cols) == 1)
            and any(
                forms & {liquid.lower(), *liquid.lower().split()}
                for well in lw.wells.values()
                for liquid in well.contents
            )
        ]
    if not matches:  # "the amplification plate" for amp_plate, "the standard plate" std_curve
        matches = [
            lw.id
            for lw in plates
            if any(_shortens(part, low) for part in _ID_PARTS.split(lw.id.lower()))
        ]
    return matches[0] if len(matches) == 1 else None


def _shortens(part: str, word: str) -> bool:
    """An id's part is a longer word it stands for, shortened: its start or its letters in
    order from the same first one ("amp" of "amplification", "std" of "standard")."""
    if len(part) < 3 or not part.isalpha() or len(word) <= len(part) + 2 or part[0] != word[0]:
        return False
    letters = iter(word)
    return all(ch in letters for ch in part)


_BLOCK_VERB = re.compile(r"(?:^|[.;:!?\n]\s*|\b(?:please|then|and|now|first|next)\s+)$", _FLAGS)
_OBJECT = re.compile(r"\s+(?![A-Pa-p]\d{1,2}\b|->|to\b|into\b)\S", _FLAGS)


def described(
    text: str, plates: list[Any], taken: list[tuple[int, int]]
) -> list[tuple[str, int, int]]:
    """(labware id, start, end) for each labware ``text`` names by what it is (``taken``:
    spans already named, extended with what is found here)."""
    out: list[tuple[str, int, int]] = []

    def free(a: int, b: int) -> bool:
        return not any(x <= a < y or a <= x < b for x, y in taken)

    def add(name: str | None, a: int, b: int) -> None:
        if _FRESH_BEFORE.search(text[:a]) and _holds_liquid(plates, name):
            return  # "the empty PCR plate": never the filled one
        if name is not None:
            out.append((name, a, b))
            taken.append((a, b))

    for m in _BY_SHAPE.finditer(text):
        if m.group("bare") and _INSTRUMENT_BLOCK.search(text[: m.start()]):
            continue  # "on the shaker block", "in the heat block": an instrument's, not a plate
        if (
            m.group("bare")
            and _BLOCK_VERB.search(text[: m.start()])
            and _OBJECT.match(text, m.end())
        ):
            continue  # "Block assay_96 with 200 uL ...": the ELISA step, no deep-well block
        if free(m.start(), m.end()):
            add(_by_shape(plates, m), m.start(), m.end())
    for word, hints in _LABWARE_WORDS.items():
        for m in re.finditer(rf"\b(?:the\s+)?{re.escape(word)}\b", text, _FLAGS):
            if free(m.start(), m.end()):
                add(_by_hint(plates, hints, word), m.start(), m.end())
    for m in _ID_WORD.finditer(text):
        if free(m.start(), m.end()):
            found = _by_id_word(plates, m.group("word"), m.group("noun"))
            add(found or _by_role(plates, m.group("word"), m.group("noun")), m.start(), m.end())
    return out


# "into the empty PCR plate", "a fresh library plate": a plate said to hold nothing, which a
# word of it can never name as one that holds liquid (the one that fits is found by "empty")
_FRESH_BEFORE = re.compile(r"\b(?:empty|fresh|new|clean|unused|blank|spare)\s+(?:the\s+)?$", _FLAGS)


def _holds_liquid(plates: list[Any], name: str | None) -> bool:
    """The labware ``name`` holds some liquid at the start."""
    return any(lw.id == name and any(well.contents for well in lw.wells.values()) for lw in plates)


# a container said by its role rather than its id: which one is meant may hang on the liquid
ROLE_WORDS = re.compile(r"\b(?:reservoirs?|troughs?|res|resv)\b", _FLAGS)


def role_holder(name: str, plates: list[Any], liquids: list[str]) -> str | None:
    """For "TMB from the reservoir" (``name`` the reservoir the word alone points at): the one
    reservoir-like labware that holds a liquid said beside it, when ``name`` holds none of
    them ("the reservoir" is where the TMB is, not the trough whose id says "trough"); None
    when several hold it (the liquid's places are then asked, never one picked)."""
    if not liquids:
        return name
    holders = [
        lw.id
        for lw in plates
        if reservoir_like(lw)
        and any(liquid in well.contents for well in lw.wells.values() for liquid in liquids)
    ]
    if not holders or name in holders:
        return name
    return holders[0] if len(holders) == 1 else None
