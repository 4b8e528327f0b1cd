"""Settings said once that work several clauses: the head ("with the multichannel") and tip
use ("fresh tips for each column") said in a label, once in a sentence, or after the work;
a replicate count said before its clause ("In triplicate, add ...")."""

from __future__ import annotations

import re

from agents.task.planning import _quantities as qty
from agents.task.planning._entities import how_said
from agents.task.planning._frames import Frame, Place
from agents.task.planning._tip_classes import kind_named, of_kind
from agents.task.planning.families import Family
from agents.task.planning.families._tip_wishes import scoped_tips, tip_words, tips_only
from agents.task.planning.families.context import setting_only

_LIQUID_FAMILIES = ("transfer", "chain", "dilution", "mix", "volumes")
# A tip wish that ends a sentence: ", fresh tips for each column" (for every move said in it).
_TIPS_LAST = re.compile(
    r",\s*(?:with\s+|using\s+)?(?:a\s+)?(?:new|fresh|one|same|change)\b[^,]*\btips?\b[^,]*$",
    re.IGNORECASE,
)
_EACH_LAST = re.compile(
    r"\d\s*(?:uL|mL)\s*(?:each|apiece|per\s+well|/\s*well)\b[^;]*$", re.IGNORECASE
)
_REPLICATE_LABEL = re.compile(
    r"\bin\s+(?:duplicate|triplicate|quadruplicate)s?\b|^\s*(?:duplicate|triplicate|quadruplicate)"
    r"(?:\s+wells)?\s*$|\bn\s*=\s*\d\b|^\s*(?:triplicate|quadruplicate)\s+[a-z]",
    re.IGNORECASE,
)
# "Dup:", "Trip:" - notebook shorthand for the count of a label
_SHORT_COUNT = {"dup": 2, "dups": 2, "trip": 3, "trips": 3, "quad": 4, "quads": 4}
_FOR_ALL = re.compile(r"\bfor\s+(?:both|all|each|every\w*)\b|\bthroughout\b", re.IGNORECASE)


def shared_settings(read_in: list[tuple[Frame | None, Family | None]]) -> None:
    """A head said once in a sentence works its liquid moves after it ("15 uL ... with the
    multichannel, 5 uL ... into the same wells"), and before it too when it says so ("...,
    8-channel for both"); a clause that only says how to use tips works every liquid move
    before it ("...; new tip each time") and, as a setting, after it."""
    liquid = [f for f, fam in read_in if f is not None and fam and fam.name in _LIQUID_FAMILIES]
    for frame in liquid:  # "Multichannel: 50 uL TMB to all wells, then ...": the label says how
        channels, tips = how_said(frame.clause.label or "")
        frame.ents.channels = frame.ents.channels or channels
        frame.ents.tips = frame.ents.tips or tips
        label = (
            frame.clause.label or ""
        )  # "In duplicate: 100 uL ... A1" (not "Pool the duplicates:")
        if _REPLICATE_LABEL.search(label) and not frame.ents.replicates:
            frame.ents.replicates = qty.replicates(label)
        short = _SHORT_COUNT.get(label.strip(" .").lower())
        if short and not frame.ents.replicates:
            frame.ents.replicates = short
    for i, (said_first, fam) in enumerate(read_in):  # "In triplicate, add 100 uL PBS to A1"
        nxt = read_in[i + 1][0] if i + 1 < len(read_in) else None
        if (
            said_first is not None
            and fam is not None
            and fam.name == "context"
            and said_first.ents.replicates
            and nxt is not None
            and nxt in liquid
            and not nxt.ents.replicates
        ):
            if not said_first.ents.wellsets:
                nxt.ents.replicates = said_first.ents.replicates
            elif rows := _layout_said(said_first, nxt):
                # "Each sample in duplicate in rows A and B: src A1-A12 -> dst": where the
                # copies go is said before the move, on the plate it names
                nxt.ents.replicates = said_first.ents.replicates
                nxt.places += [("dest", pl) for pl in rows]
            elif all(pl.labware is None for _, pl in said_first.places):
                nxt.ents.replicates = said_first.ents.replicates  # never dropped: asked
    for i, frame in enumerate(liquid):  # "water to A1-A6 and primers to B1-B6, 5 uL each"
        if frame.volume is not None or frame.ents.volumes():
            continue
        for nxt_pair in liquid[i + 1 :]:
            if nxt_pair.clause.joined != "and" or nxt_pair.clause.sentence != frame.clause.sentence:
                break
            if nxt_pair.volume is not None and _EACH_LAST.search(nxt_pair.text):
                frame.volume = nxt_pair.volume  # one amount said for every pair of the verb
                frame.ents.tips = frame.ents.tips or nxt_pair.ents.tips
                break
    for i, frame in enumerate(liquid):  # "..., then ... , fresh tips for each column": all
        same = [f for f in liquid[i + 1 :] if f.clause.sentence == frame.clause.sentence]
        if not frame.ents.tips and same and same[-1].ents.tips and _TIPS_LAST.search(same[-1].text):
            frame.ents.tips = same[-1].ents.tips
    said = [f.ents.channels for f in liquid]
    for i, frame in enumerate(liquid):
        if said[i] is None:
            before = [j for j in range(i) if liquid[j].clause.sentence == frame.clause.sentence]
            stated = [said[j] for j in before if said[j] is not None]
            joined = [  # "fill A with dye and B with buffer, 8-channel": one clause, one head
                j
                for j in range(i + 1, len(liquid))
                if all(liquid[k].clause.joined == "and" for k in range(i + 1, j + 1))
                and liquid[j].clause.sentence == frame.clause.sentence
            ]
            later = [
                said[j]
                for j in range(i + 1, len(liquid))
                if liquid[j].clause.sentence == frame.clause.sentence
                and said[j] is not None
                and (_FOR_ALL.search(liquid[j].text) or j in joined)
            ]
            frame.ents.channels = (stated[-1:] or later[:1] or [None])[0]
    for i, (setting, fam) in enumerate(read_in):
        if setting is None or fam is None or fam.name != "context":
            continue
        if by_word := _named_by_word(setting, liquid):  # "a new tip for each inoculum well"
            for moved in by_word:
                moved.ents.tips = moved.ents.tips or setting.ents.tips
            setting.extra["scoped"] = [m.liquid.name for m in by_word if m.liquid is not None]
            continue
        kind = setting.ents.tips and not setting.ents.liquids and kind_named(setting.text)
        kinds = [m for m in liquid if kind and m.liquid and of_kind(kind, m.liquid.name)]
        for moved in kinds:  # "tips can be reused for the buffer" (the lab's PBS)
            moved.ents.tips = moved.ents.tips or setting.ents.tips
        if kinds:
            setting.extra["scoped"] = list(dict.fromkeys(m.liquid.name for m in kinds if m.liquid))
            continue
        names = scoped_tips(setting.ents)
        alone = not any(m.liquid and m.liquid.name not in names for m in liquid)
        for moved in liquid if names else []:
            if (moved.liquid is not None and moved.liquid.name in names) or alone:
                moved.ents.tips = moved.ents.tips or setting.ents.tips  # "... for the buffer"
        last = not any(of and of.name in _LIQUID_FAMILIES for _, of in read_in[i + 1 :])
        if not (
            tips_only(setting.ents)
            or tip_words(setting.ents)  # "fresh tip for each sample well": all of them
            or (last and setting_only(setting.ents))
        ):
            continue
        for other, of in read_in[:i]:  # "add ...; add ...; new tip each time": all of them
            if other is None or not of or of.name not in _LIQUID_FAMILIES:
                continue  # "... Use the multichannel." at the end: what came before it
            other.ents.tips = other.ents.tips or setting.ents.tips
            if last:
                other.ents.channels = other.ents.channels or setting.ents.channels


def _named_by_word(setting: Frame, liquid: list[Frame]) -> list[Frame]:
    """The liquid moves a tip wish names by a word of their liquid's name ("a new tip for each
    inoculum well" after CAMHB and S. aureus inoculum): some of them, never all or none."""
    words = tip_words(setting.ents)
    if not words:
        return []
    named = [
        f
        for f in liquid
        if f.liquid is not None
        and all(w in re.findall(r"[a-z][\w.-]*", f.liquid.name.lower()) for w in words)
    ]
    return named if 0 < len(named) < len(liquid) else []


def _layout_said(heading: Frame, frame: Frame) -> list[Place]:
    """The rows or columns a replicate heading names with no plate ("in duplicate in rows A
    and B"), when the move after it names a destination plate and no wells there."""
    said = [pl for _, pl in heading.places]
    if not said or any(pl.labware is not None or pl.wells is None for pl in said):
        return []
    dests = [pl for role, pl in frame.places if role == "dest"]
    if len(dests) != 1 or dests[0].labware is None or dests[0].wells is not None:
        return []
    return said
