"""Headings of the rule planner: a line ending in a colon names what the clauses under it
work on (their plate, wells, sources, liquid, channels, tips), and a heading that brings every
well to a total ("every well to 30 uL total with water added first:") fills what its items
filled.
"""

from __future__ import annotations

import re
from dataclasses import replace

from agents.task.planning import _pipetting as pip
from agents.task.planning._frames import Frame, read
from agents.task.planning._labels import diluent_of
from agents.task.planning._outcomes import Ask, Refuse
from agents.task.planning._quantities import fmt
from agents.task.planning._resolve import Fill, Planning, source_of
from agents.task.planning.families import FAMILIES, Family, transfer
from agents.task.planning.families._facts import check_fact
from agents.task.planning.families._places import _SAME_WELLS
from agents.task.planning.families.context import states_fact
from agents.task.planning.models import TraceItem

# A heading that starts with one of these names its sources first ("Plate samples B1-B6 ...").
_TAKES = re.compile(
    r"^(?:put|place|plate|pick|cherry|hit|transfer|move|stamp|copy|replicate|spot|pool|take|"
    r"array|re-?array|reformat|distribute|aliquot)\b",
    re.IGNORECASE,
)


def _heading(frame: Frame, p: Planning) -> str:
    """A heading names the plates and wells the clauses under it work on."""
    if states_fact(frame.clause, frame.ents):
        check_fact(frame, p)  # "D8 has 25 uL of cDNA - pick it ...": a fact first, checked
    frame.extra["kind"] = "setting"
    p.head_same = bool(_SAME_WELLS.search(frame.text))  # "... to dest_plate, same wells:"
    said = []
    if frame.volume is not None and frame.ents.volumes() == [frame.volume]:
        p.head_volume = frame.volume  # "Cherry-pick from cmpd to assay, 2 uL each:" + items
        said.append(frame.volume.text)
    roles = {role for role, _ in frame.places}
    verb = _TAKES.match(frame.text) and not any(m.start == 0 for m in frame.ents.labware)
    takes = (verb or "dest" in roles) and "source" not in roles  # "Plate 2:" names no verb
    named: set[str] = set()  # a new heading's plates replace an earlier heading's
    for role, place in frame.places:
        if place.labware is None or not place.labware.sure:
            continue
        name = place.labware.name
        if role == "source" or (role == "head" and takes):
            if place.wells is not None:
                view = p.world.labware(name)
                p.head_source_wells = place.wells.expand(view.rows, view.cols)
            p.head_source = name if "source" not in named else p.head_source or name
            named.add("source")
            said.append(f"from {name}")
            continue
        p.head_dest = name if "dest" not in named else p.head_dest or name
        named.add("dest")
        p.plate = p.head_dest
        if place.wells is not None:
            view = p.world.labware(name)
            p.head_wells = p.wells = place.wells.expand(view.rows, view.cols)
            said.append(f"{name} {p.wells[0]}..{p.wells[-1]} ({len(p.wells)} wells)")
        else:
            said.append(name)
    level = frame.total or frame.final
    if (diluent := diluent_of(frame.text, frame.ents.liquids)) is not None:
        frame.liquid = diluent  # "normalise cDNA to 5 ng/uL w/ NFW:": NFW is what goes in
    if level is not None and frame.liquid is not None and frame.liquid.name in p.world.liquids:
        transfer.flush(p)  # what came before is not among the items
        p.fill = Fill(
            frame.liquid.name,
            level.value,
            bool(_FIRST.search(frame.text)),
            -1,
            len(p.world.steps),
            len(p.world.poured),
            [(p.head_dest, w) for w in p.head_wells] if p.head_dest else [],
        )
        frame.extra["kind"] = "action"
        p.liquid = frame.liquid.name  # for items that name no liquid of their own
        said.append(
            f"each well it fills is brought to {fmt(level.value, 'uL')} with {frame.liquid.name}"
            + (" (that liquid first)" if p.fill.first else "")
        )
    elif frame.liquid is not None and frame.liquid.name in p.world.liquids:
        p.liquid = frame.liquid.name
        said.append(frame.liquid.name)
    if frame.ents.channels:
        p.channels = frame.ents.channels
        said.append(f"{p.channels} channel(s)")
    if frame.ents.tips:
        p.tips = frame.ents.tips
    return "a heading for what follows: " + (", ".join(said) or "nothing to plan by itself")


_FIRST = re.compile(r"\b(?:first|before(?:hand)?|to\s+start)\b", re.IGNORECASE)


def _fill(p: Planning, trace: list[TraceItem]) -> None:
    """Bring the wells the items under a heading filled to the heading's volume."""
    fill, world = p.fill, p.world
    if fill is None:
        return
    poured = world.poured[fill.poured_at :]
    held = {(lw, w) for lw, w, _ in world.liquids.get(fill.liquid, [])}
    if poured and all(src in held for _, src in poured):
        return  # the items pour the liquid itself: they are the filling
    wells = list(dict.fromkeys(dst for dst, _ in poured)) or fill.named
    if not wells:
        raise Ask(
            f"Which wells should I bring to {fmt(fill.volume, 'uL')} with {fill.liquid}?",
            ["wells"],
        )
    adds = []
    for lw, w in wells:
        have = world.well_volume(lw, w)
        if have > fill.volume + 1e-6:
            raise Refuse(
                f"{lw} {w} gets {fmt(round(have, 3), 'uL')}, more than the "
                f"{fmt(fill.volume, 'uL')} each well should end at",
                "capacity",
            )
        if fill.volume - have > 1e-6:
            adds.append(((lw, w), round(fill.volume - have, 4)))
    src = source_of(fill.liquid, sum(v for _, v in adds), world, set(wells))
    ops = [pip.Op(src, dst, v) for dst, v in adds]
    policy = pip.policy_used(ops, p.tips)
    first = len(world.steps)
    lh = world.labware(wells[0][0]).instrument
    pip.emit(world, lh, ops, p.channels or 1, policy)
    p.policies_used.append(pip.POLICIES[policy])
    new = [s.id for s in world.steps[first:]]
    if fill.first:
        renamed = world.move_steps(first, fill.steps_at)
        new = [renamed[i] for i in new]
        for i, item in enumerate(trace):
            trace[i] = item.model_copy(update={"steps": [renamed[s] for s in item.steps]})
    at = fill.trace_at
    if 0 <= at < len(trace):
        trace[at] = trace[at].model_copy(
            update={"kind": "action", "steps": [*trace[at].steps, *new]}
        )


_ANNOUNCES = re.compile(r"\bnormali[sz](?:e|ation)\b", re.IGNORECASE)
_WITH = re.compile(r"\b(?:with|using|in)\s+(?:the\s+)?$", re.IGNORECASE)
_SWAPS = re.compile(
    r"\b(?:change|replace|exchange|refresh|swap|renew)\b.*\b(?:media|medium)\b"
    r"|\b(?:media|medium)\s+(?:change|exchange|swap|refresh)\b",
    re.IGNORECASE,
)


def announced(read_in: list[tuple[Frame | None, Family | None]]) -> None:
    """ "Normalise libs A1-A3 with low-TE. Add 20, 35 and 12 uL respectively": a normalisation
    that names no amounts, followed by a clause that gives them, is that clause's heading
    (its plate, wells and the liquid it adds with)."""
    for i, (frame, family) in enumerate(read_in[:-1]):
        nxt = read_in[i + 1][0]
        if (
            frame is None
            or family is None
            or family.name != "volumes"
            or frame.clause.heading
            or frame.ents.volumes()
            or nxt is None
            or not (nxt.ents.volumes() or nxt.ents.bare)
        ):
            continue
        if not _ANNOUNCES.search(frame.text) and not (
            _SWAPS.search(frame.text) and re.search(r"\bout\b", nxt.text, re.IGNORECASE)
        ):
            continue  # "swap out the media on X? 150 uL old out, 150 uL fresh in": the heading
        frame.clause = replace(frame.clause, heading=True)
        if read_in[i + 1][1] is None:  # "volumes to add: 5, 7, 3.5 and 10 uL": what goes in
            adds = next(f for f in FAMILIES if f.name == "transfer")
            read_in[i + 1] = (read(nxt.clause, nxt.ents, adds.name), adds)
        added = [m for m in frame.ents.liquids if _WITH.search(frame.text[: m.start])]
        frame.liquid = added[0] if added else frame.liquid  # "the amplicons ... with EB"
