"""What every dilution needs (its fold, its stock, its diluent) and the ratio dilutions ("1:10 in
200 uL"): the diluent into every well first, then the stock (or each source well) mixed in,
as the corpus convention says."""

from __future__ import annotations

import re

from agents.task.planning import _pipetting as pip
from agents.task.planning import _resolve as r
from agents.task.planning._frames import Frame, Place
from agents.task.planning._lexicon import Mention
from agents.task.planning._outcomes import Ask, Refuse
from agents.task.planning._quantities import fmt
from agents.task.planning.families._dilution_words import WORKS
from agents.task.planning.families._each_held import each_held
from agents.task.planning.families._ratio_parts import Parts, parts
from agents.task.planning.families._samples_first import filled, swapped
from agents.task.planning.families._stock_said import (
    _AS_DILUENT,
    _DILUENT,
    _DILUENT_AFTER,
    _DILUENT_BEFORE,
    _IN_IT,
    _stock,
)

_FLAGS = re.IGNORECASE


MIX_CYCLES = 3


# Liquids whose name says they are the diluent; any other is asked for.
_DILUENT_WORDS = ("diluent", "buffer", "sample diluent", "dilution buffer")


def said_diluent(frame: Frame, stock: str, p: r.Planning) -> str | None:
    """The diluent the clause names ("in PBS", "diluent: assay buffer", "with water"), if any."""
    if m := _DILUENT.search(frame.text):
        word = (m.group("a") or m.group("b") or "").strip()
        found = next(
            (
                x
                for x in frame.liquids
                if x.written == word or x.start <= m.start("a" if m.group("a") else "b") < x.end
            ),
            None,
        )
        return r.liquid(found or Mention(word, 0, 0, word), p, "diluent")
    others = [m for m in frame.liquids if m.name != stock]
    called = [
        m
        for m in others
        if _DILUENT_BEFORE.search(frame.text[: m.start])
        or _DILUENT_AFTER.match(frame.text[m.end :])
    ]
    if called:  # "..., diluent PBS, ...", "diluent - assay buffer"
        return r.liquid(called[0], p, "diluent")
    # "PicoGreen std curve: lambda DNA top standard, 2-fold in 1x TE": the one said "in" is it
    others = [m for m in others if _IN_IT.search(frame.text[: m.start])] or others
    if others:
        return r.liquid(others[0], p, "diluent")
    return None


def _diluent(frame: Frame, stock: str, p: r.Planning) -> str:
    said = said_diluent(frame, stock, p)
    if said is not None:
        return said
    known = {n.lower(): n for n in p.world.liquids}
    for word in _DILUENT_WORDS:
        if word in known and known[word] != stock:
            return known[word]
    named = [  # the lab's one "sample buffer" or "assay diluent"
        n
        for low, n in known.items()
        if n != stock and re.search(r"\b(?:diluent|buffer)\b", low) and not WORKS.search(low)
    ]
    if len(named) == 1:
        return named[0]
    sized = frame.final or frame.total or frame.volume or frame.ents.volumes()
    raise Ask(  # (no volume either: both gaps are named, not one after the other)
        f"Which liquid should I dilute {stock} with?" + ("" if sized else " And in what volume?"),
        ["liquid"] if sized else ["liquid", "volume"],
        [x for x in r.liquids(p.world) if x != stock],
    )


def _fold(frame: Frame) -> float:
    if frame.ents.fold is None:
        raise Ask(
            "How many-fold should each step dilute?", ["fold"], ["2-fold", "3-fold", "10-fold"]
        )
    k, how = frame.ents.fold
    if k == 1 and how == "ratio":
        k = 2.0  # "1:1 with buffer": one part and one part, never a dilution by 1
    if k <= 1:
        raise Refuse(
            f"a {k:g}-fold dilution does not dilute: the factor must be more than 1", "capacity"
        )
    return k


# "(medium already plated)", "RPMI pre-dispensed": where the diluent already is, no stock
_ALREADY_THERE = re.compile(
    r"\s*(?:is\s+|are\s+|'s\s+)?(?:already|pre-?(?:filled|dispensed|loaded|plated))\b", _FLAGS
)


def first_well_stock(frame: Frame, p: r.Planning, plate: str, first: str) -> str | None:
    """The liquid the chain's first well already holds, when the clause names no other stock
    ("dna_plate A3 holds DNA. 2-fold serial dilution from A3 to A8 with water": the DNA)."""
    if any(
        not _AS_DILUENT.search(frame.text[: m.start])
        and not _ALREADY_THERE.match(frame.text[m.end :])
        for m in frame.liquids
    ):
        return None  # a stock is named: it is the stock (never "(medium already plated)")
    said = {m.name for m in frame.liquids}  # ("20 uL X + 180 uL Y in A1, ... with Y": X)
    held = [n for n, v in p.world.contents.get((plate, first), {}).items() if v > 0]
    held = [n for n in held if n not in said] if len(held) > 1 else held
    return held[0] if len(held) == 1 else None


def prefilled_diluent(
    world: r.World, plate: str, chains: list[list[str]]
) -> tuple[str, float] | None:
    """The one liquid every well after each chain's first already holds, and its one volume
    ("titr_plate already has 100 uL RPMI in columns 2-12"): the diluent, in place."""
    held = [world.contents.get((plate, w), {}) for c in chains for w in c[1:]]
    names = {n for h in held for n, v in h.items() if v > 1e-6}
    volumes = {round(sum(h.values()), 3) for h in held}
    if len(names) != 1 or len(volumes) != 1 or not all(held):
        return None
    return names.pop(), volumes.pop()


def _by_column(wells: list[str], channels: int) -> list[str]:
    return sorted(wells, key=lambda w: (int(w[1:]), w[0])) if channels == 8 else wells


def _by_row(wells: list[str]) -> list[str]:
    return sorted(wells, key=lambda w: (w[0], int(w[1:])))


def _ratio(frame: Frame, p: r.Planning) -> str:
    world = p.world
    k = _fold(frame)
    heads = [
        pl
        for role, pl in frame.places
        if role in ("head", "source") and pl.labware is not None and pl.wells
    ]
    targets = [pl for role, pl in frame.places if role == "dest"]
    if not heads and len(targets) == 2 and swapped(targets[1], targets[0], p):
        heads, targets = targets[:1], targets[1:]  # "the lysate in lysates A1-H1 ... in Y col 1"
    if not targets and len(heads) == 2 and swapped(heads[0], heads[1], p):
        heads, targets = heads[1:], heads[:1]  # "dil_blk A1-A3: 1:50 serum (pt_sera A1-A3) ..."
    if heads and targets:  # "dilute samples A1-A4 1:2 with buffer into dest_plate A1-A4"
        return _ratio_from(frame, p, k, heads[0], targets[0])
    final = frame.final or frame.total or frame.volume
    lone = len(heads) == 1 == len(frame.places) and not p.head_dest
    if final is not None and lone and filled(heads[0], p):
        raise Ask(  # "1:10 of lysates A1 in PBS, 100 uL final": made where?
            f"Where should the 1:{k:g} dilutions go (which wells of which plate)?",
            ["destination"],
            [lw for lw in r.work_plates(world) if lw != heads[0].labware.name],  # type: ignore[union-attr]
        )
    told = parts(frame, k)
    named = [pl for _, pl in frame.places if pl.labware is not None and pl.wells]
    if final is None and len(named) == 1:
        return _in_place(frame, p, k, named[0])
    stock = _stock(frame, p)
    said = told.diluent_said if told else None
    diluent = r.liquid(said, p, "diluent") if said else _diluent(frame, stock, p)
    if final is None:
        raise Ask(
            f"In what final volume should each 1:{k:g} dilution be?",
            ["volume"],
            ["100 uL", "200 uL"],
        )
    if (each := each_held(frame, stock, p)) is not None:  # "1:100 of each sample into X"
        return _ratio_wells(frame, p, k, each[0], each[1], each[2], each[1], diluent, final.value)
    place = frame.dest if not frame.dest.empty else frame.head
    if place.empty and not frame.source.empty and _holds_none(frame.source, stock, p):
        place = frame.source  # "from 10X wash conc, 1.5 mL per well in dil_blk column 7"
    plate = r.labware(place, p, "dilute into")
    wells = r.wells(place, plate, p, "should hold the dilution", frame)
    v_stock, v_dil = _split(final.value, k, told)
    room = world.labware(plate).well_max_volume_ul
    if room and v_stock + v_dil > room + 1e-6:
        raise Refuse(
            f"{fmt(v_stock + v_dil, 'uL')} is more than a {plate} well holds ({fmt(room, 'uL')})",
            "capacity",
        )
    channels = frame.ents.channels or p.channels or 1
    lh = world.labware(plate).instrument
    tips = frame.ents.tips or p.tips
    exclude = {(plate, w) for w in wells}
    d_src = r.source_of(diluent, v_dil * len(wells), world, exclude)
    pip.emit(
        world,
        lh,
        [pip.Op(d_src, (plate, w), v_dil) for w in _by_column(wells, channels)],
        channels,
        pip.policy_used([], tips),
    )
    cycles = 0 if frame.ents.no_mix else (frame.ents.mix_times or MIX_CYCLES)
    s_src = r.source_of(stock, v_stock * len(wells), world, exclude)
    ops = [pip.Op(s_src, (plate, w), v_stock, cycles) for w in _by_column(wells, channels)]
    policy = pip.policy_used(ops, tips)
    pip.emit(world, lh, ops, channels, policy)
    p.policies_used.append(pip.POLICIES[policy])
    p.plate, p.wells = plate, wells
    return (
        f"1:{k:g} dilution of {stock} in {diluent} into {plate} {wells[0]}..{wells[-1]} "
        f"({len(wells)} wells): {fmt(v_dil, 'uL')} {diluent} then {fmt(v_stock, 'uL')} {stock} each"
    )


def _ratio_from(frame: Frame, p: r.Planning, k: float, src: Place, dst: Place) -> str:
    """A ratio dilution of wells into wells: diluent first, then each source well, mixed."""
    world = p.world
    src_lw = r.labware(src, p, "take the samples from")
    src_wells = r.wells(src, src_lw, p, "should I dilute", frame)
    first = next(iter(world.contents.get((src_lw, src_wells[0]), {})), None)
    told = parts(frame, k)
    said = told.diluent_said if told else None
    diluent = r.liquid(said, p, "diluent") if said else _diluent(frame, first or "", p)
    final = frame.final or frame.total or frame.volume
    if final is None:
        raise Ask(f"In what final volume should each 1:{k:g} dilution be?", ["volume"], ["100 uL"])
    plate = r.labware(dst, p, "dilute into")
    wells = r.wells(dst, plate, p, "should hold the dilution", frame)
    if len(src_wells) == 1:
        src_wells = src_wells * len(wells)  # "the dye from reservoir A1 1:4 into A1-A3": each
    if len(wells) != len(src_wells):
        raise Ask(
            f"{len(src_wells)} wells to dilute into {len(wells)} wells: which into which?",
            ["wells"],
            [],
        )
    return _ratio_wells(frame, p, k, src_lw, src_wells, plate, wells, diluent, final.value)


def _ratio_wells(
    frame: Frame,
    p: r.Planning,
    k: float,
    src_lw: str,
    src_wells: list[str],
    plate: str,
    wells: list[str],
    diluent: str,
    final: float,
) -> str:
    """Each source well diluted 1:k into its destination well (paired in order)."""
    world = p.world
    v_stock, v_dil = _split(final, k, parts(frame, k))
    lh = world.labware(plate).instrument
    channels = frame.ents.channels or p.channels or 1
    tips = frame.ents.tips or p.tips
    d_src = r.source_of(diluent, v_dil * len(wells), world, {(plate, w) for w in wells})
    pip.emit(
        world,
        lh,
        [pip.Op(d_src, (plate, w), v_dil) for w in wells],
        _said(frame, "diluent_channels", channels),
        pip.policy_used([], tips),
    )
    channels = _said(frame, "stock_channels", channels)
    cycles = 0 if frame.ents.no_mix else (frame.ents.mix_times or MIX_CYCLES)
    ops = [
        pip.Op((src_lw, s), (plate, w), v_stock, cycles)
        for s, w in zip(src_wells, wells, strict=True)
    ]
    policy = pip.policy_used(ops, tips)
    pip.emit(world, lh, ops, channels, policy)
    p.policies_used.append(pip.POLICIES[policy])
    p.plate, p.wells = plate, wells
    return (
        f"1:{k:g} dilution of {src_lw} {src_wells[0]}..{src_wells[-1]} in {diluent} into {plate} "
        f"{wells[0]}..{wells[-1]}: {fmt(v_dil, 'uL')} {diluent} then {fmt(v_stock, 'uL')} of each"
    )


def _holds_none(place: Place, stock: str, p: r.Planning) -> bool:
    """A place said after "from" whose plate holds none of the stock: where the dilution goes."""
    lw = place.labware.name if place.labware is not None and place.labware.sure else None
    if lw is None:
        return False
    return not any(p.world.contents.get((lw, w), {}).get(stock, 0) > 0 for w in _wells_of(p, lw))


def _wells_of(p: r.Planning, lw: str) -> list[str]:
    view = p.world.labware(lw)
    return [f"{chr(65 + i)}{j + 1}" for i in range(view.rows) for j in range(view.cols)]


def _split(final: float, k: float, told: Parts | None) -> tuple[float, float]:
    """The stock and the diluent per well: the parts told, else 1 in k of the final volume."""
    if told is not None:
        return told.stock, told.diluent
    v_stock = round(final / k, 4)
    return v_stock, round(final - v_stock, 4)


def _said(frame: Frame, key: str, default: int) -> int:
    """The head said for one liquid of the dilution ("the buffer with a single channel")."""
    said = frame.extra.get(key)
    return said if isinstance(said, int) else default


_IN_PLACE = re.compile(r"\bin[\s-]place\b|\bwhere\s+(?:it|they)\s+(?:is|are)\b", _FLAGS)


def _in_place(frame: Frame, p: r.Planning, k: float, place: Place) -> str:
    """ "Dilute the DNA in dna_plate column 3 1:2 with water": each well already holds the
    stock, so (k - 1) times what it holds of diluent goes in, mixed after it."""
    world = p.world
    plate = r.labware(place, p, "dilute in")
    wells = r.wells(place, plate, p, "should I dilute", frame)
    held = [world.well_volume(plate, w) for w in wells]
    if min(held) <= 0:
        raise Ask(f"In what final volume should each 1:{k:g} dilution be?", ["volume"], ["100 uL"])
    stock = next(iter(world.contents.get((plate, wells[0]), {})), "")
    diluent = _diluent(frame, stock, p)
    adds = [round(v * (k - 1), 4) for v in held]
    room = world.labware(plate).well_max_volume_ul
    if room and max(v * k for v in held) > room + 1e-6 and not _IN_PLACE.search(frame.text):
        raise Ask(  # "dilute pt_sera A1 1:10 in diluent": not there, so where and how much?
            f"A 1:{k:g} dilution in {plate} itself would need {fmt(max(held) * k, 'uL')} in a "
            "well: where should it be made, and in what final volume?",
            ["destination", "volume"],
            [lw for lw in r.work_plates(world) if lw != plate],
        )
    if room and max(v * k for v in held) > room + 1e-6:
        raise Refuse(
            f"a 1:{k:g} dilution of what {plate} holds needs {fmt(round(max(held) * k, 3), 'uL')} "
            f"in a well, more than it holds ({fmt(room, 'uL')})",
            "capacity",
        )
    cycles = 0 if frame.ents.no_mix else (frame.ents.mix_times or MIX_CYCLES)
    channels = frame.ents.channels or p.channels or 1
    src = r.source_of(diluent, sum(adds), world, {(plate, w) for w in wells})
    ops = [pip.Op(src, (plate, w), v, cycles) for w, v in zip(wells, adds, strict=True)]
    policy = pip.policy_used(ops, frame.ents.tips or p.tips)
    pip.emit(world, world.labware(plate).instrument, ops, channels, policy)
    p.policies_used.append(pip.POLICIES[policy])
    p.plate, p.wells = plate, wells
    return (
        f"1:{k:g} dilution of {stock} in place in {plate} {wells[0]}..{wells[-1]} "
        f"({len(wells)} wells): {k - 1:g}x what each holds of {diluent} added, mixed {cycles}x"
    )
