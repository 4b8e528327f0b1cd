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
from agents.task.planning.models import PlanStep, TraceItem

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
    level = frame.total or frame.final
    if (
        level is None
        and _EQUALISES.search(frame.text)
        and frame.volume is not None
        and not _aside(frame.text, frame.volume.start)  # "(libraries sit in A1-A4, 20 uL each)"
    ):
        level = frame.volume  # "Normalise the cultures ..., 200 uL each. CAMHB first": a level
    elif frame.volume is not None and frame.ents.volumes() == [frame.volume]:
        p.head_volume = frame.volume  # "Cherry-pick from cmpd to assay, 2 uL each:" + items
        said.append(frame.volume.text)
    roles = {role for role, _ in frame.places}
    verb = _TAKES.match(frame.text) and not any(m.start == 0 for m in frame.ents.labware)
    takes = (verb or "dest" in roles) and "source" not in roles  # "Plate 2:" names no verb
    named: set[str] = set()  # a new heading's plates replace an earlier heading's
    for role, place in frame.places:
        if place.labware is None and place.wells is not None and role != "source" and p.plate:
            name = p.plate  # "Columns 4-6:" after "Columns 1-3 of assay_96:": the same plate
        elif place.labware is None or not place.labware.sure:
            continue
        else:
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
    if (diluent := diluent_of(frame.text, frame.ents.liquids)) is not None:
        frame.liquid = diluent  # "normalise cDNA to 5 ng/uL w/ NFW:": NFW is what goes in
    if level is not None and frame.liquid is not None and frame.liquid.name in p.world.liquids:
        transfer.flush(p)  # what came before is not among the items
        liquids = {m.name: m for m in reversed([frame.liquid, *frame.ents.liquids])}.values()
        p.fill = Fill(
            frame.liquid.name,
            level.value,
            said_first(frame.text, frame.liquid.start, frame.liquid.end),
            -1,
            len(p.world.steps),
            len(p.world.poured),
            [(p.head_dest, w) for w in p.head_wells] if p.head_dest else [],
            tuple(
                (m.name, said_first(frame.text, m.start, m.end))
                for m in liquids
                if m.name in p.world.liquids
            ),
        )
        frame.extra["kind"] = "action"
        p.liquid = frame.liquid.name  # for items that name no liquid of their own
        said.append(_brought(level.value, frame.liquid.name, p.fill.first))
    elif frame.liquid is not None and frame.liquid.name in p.world.liquids:
        p.liquid = frame.liquid.name
        said.append(frame.liquid.name)
    elif level is not None:  # "in std_dil column 12, 200 uL total each:" and no liquid: the
        transfer.flush(p)  # items (or a clause after them) must bring the wells there
        at = (len(p.world.steps), len(p.world.poured))
        p.fill = Fill("", level.value, False, -1, *at, [])
        said.append(f"each well it fills should end at {fmt(level.value, 'uL')}")
    if frame.ents.channels:
        p.channels = frame.ents.channels
        said.append(f"{p.channels} channel(s)")
    if frame.ents.tips:
        p.tips = frame.ents.tips
    return "a heading for what follows: " + (", ".join(said) or "nothing to plan by itself")


_FIRST = re.compile(r"\b(?:first|before(?:hand)?|to\s+start)\b", re.IGNORECASE)
_LAST = re.compile(r"\b(?:last|after(?:wards)?|second|at\s+the\s+end)\b", re.IGNORECASE)
_PART = re.compile(r"[,;:.()]|\bthen\b", re.IGNORECASE)
# "Normalise ... to the same OD", "Equalise chlorophyll": the volume said is what wells end at
_EQUALISES = re.compile(
    r"\b(?:normali[sz]|equali[sz]|equilibrat)\w*|\bsame\s+(?:OD|conc\w*|density|amount)\b",
    re.IGNORECASE,
)


def _aside(text: str, at: int) -> bool:
    """Whether ``at`` is inside brackets: a remark on the lab state, not what to do."""
    return text.count("(", 0, at) > text.count(")", 0, at)


def said_first(text: str, start: int, end: int) -> bool:
    """Whether the text pours the liquid named at ``start:end`` first: "CAMHB first, then
    culture", "with water added first"; never "stocks first, DMSO last"."""
    cuts = [0, *(m.end() for m in _PART.finditer(text)), len(text)]
    lo = max(c for c in cuts if c <= start)
    hi = min((m.start() for m in _PART.finditer(text, end)), default=len(text))
    own = text[lo:hi]
    if _LAST.search(own):
        return False
    if _FIRST.search(own):
        return True
    return bool(_FIRST.search(text)) and not _FIRST.search(text[:lo] + " " + text[hi:])


def _fill(p: Planning, trace: list[TraceItem]) -> None:
    """Bring the wells the items under a heading filled to the heading's volume."""
    fill, world = p.fill, p.world
    if fill is None:
        return
    poured = world.poured[fill.poured_at :]
    liquid, first_ = _filler(fill, p, {src for _, src in poured})
    wells = list(dict.fromkeys(dst for dst, _ in poured)) or fill.named
    if not liquid:
        wells += [(dst, w) for dst, w in _blanks(p, wells) if (dst, w) not in wells]
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
    if not adds:
        return  # a clause under the heading brought every well to its level
    if not liquid:
        short = ", ".join(f"{lw} {w}" for (lw, w), _ in adds[:6])
        raise Ask(
            f"Which liquid should bring {short} up to {fmt(fill.volume, 'uL')}?",
            ["liquid"],
            sorted(world.liquids),
        )
    src = source_of(liquid, sum(v for _, v in adds), world, set(wells))
    ops = [pip.Op(src, dst, v) for dst, v in adds]
    policy = pip.policy_used(ops, p.tips)
    first = len(world.steps)
    lh = world.labware(wells[0][0]).instrument
    pip.emit(world, lh, ops, p.channels or 1, policy)
    p.policies_used.append(pip.POLICIES[policy])
    new = [s.id for s in world.steps[first:]]
    if first_:
        renamed = world.move_steps(first, fill.steps_at)
        new = [renamed[i] for i in new]
        for i, item in enumerate(trace):
            trace[i] = item.model_copy(update={"steps": [renamed[s] for s in item.steps]})
    at = fill.trace_at
    if 0 <= at < len(trace):
        said = trace[at].understood.replace(  # the liquid the items left to pour
            _brought(fill.volume, fill.liquid, fill.first), _brought(fill.volume, liquid, first_)
        )
        trace[at] = trace[at].model_copy(
            update={"kind": "action", "steps": [*trace[at].steps, *new], "understood": said}
        )


def _brought(volume: float, liquid: str, first: bool) -> str:
    return f"each well it fills is brought to {fmt(volume, 'uL')} with {liquid}" + (
        " (that liquid first)" if first else ""
    )


def _filler(fill: Fill, p: Planning, sources: set[tuple[str, str]]) -> tuple[str, bool]:
    """The liquid that brings the wells to the level, and whether it goes in first: of the
    liquids the heading names, the one the items do not pour ("PBS first, then lysate" and
    the items pour lysate: PBS); "" when the items pour every one (then nothing is added,
    and a well short of the level is asked about)."""
    if not sources:
        return fill.liquid, fill.first
    poured = {
        name
        for name, places in p.world.liquids.items()
        for lw, w, _ in places
        if (lw, w) in sources
    }
    named = fill.others or ((fill.liquid, fill.first),)
    left = [c for c in named if c[0] not in poured]
    if len(left) == 1:
        return left[0]
    if left and fill.liquid not in poured:
        return fill.liquid, fill.first
    return "", False


def _blanks(p: Planning, wells: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The blanks the request names on the plate the items filled ("F12 is the blank")."""
    if not wells:
        return []
    plate = wells[0][0]
    view = p.world.labware(plate)
    return [(plate, w) for b in p.blanks for w in b.expand(view.rows, view.cols)]


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


_LIQUID_COMMANDS = ("transfer", "aspirate", "dispense", "mix")


def check_used(
    read_as: list[tuple[Frame, int]], trace: list[TraceItem], steps: dict[str, PlanStep]
) -> None:
    """A heading that gives a volume must have liquid work under it: "5 uL of each X - ..."
    read as a heading with no step after it that moves liquid would be a clause left out."""
    heads = [at for frame, at in read_as if frame.clause.heading]
    for frame, at in read_as:
        item = trace[at]
        if not (frame.clause.heading and frame.ents.volumes()):
            continue
        if not item.understood.startswith("a heading for what follows"):
            continue
        end = min([h for h in heads if h > at], default=len(trace))
        later = [
            s
            for t in trace[at + 1 : end]
            if not t.understood.startswith("part of the clause")
            for s in t.steps
        ]
        if not any(s in steps and steps[s].command in _LIQUID_COMMANDS for s in later):
            raise Ask(
                f"I read '{item.clause}' as a heading for the steps after it, but no step after "
                "it moves liquid: what should it do? Say it as its own step.",
                ["destination"],
            )
