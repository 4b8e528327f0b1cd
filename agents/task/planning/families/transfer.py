"""Liquid moved from wells to wells: transfer, add / distribute, aliquot, stamp ("same
positions"), cherry- and hit-pick lists, pool, spot one column into several, replicates.

They differ only in how sources and destinations pair up: one into many (distribute), equal
sets in order (stamp), many into one (pool), one set into a multiple of it (spot, replicates),
or a list of ``source -> destination, volume`` pairs (cherry-pick)."""

from __future__ import annotations

import re

from agents.task.planning import _pipetting as pip
from agents.task.planning import _resolve as r
from agents.task.planning._frames import Frame, Place
from agents.task.planning._lexicon import Mention
from agents.task.planning._outcomes import Ask, Refuse
from agents.task.planning._quantities import fmt
from agents.task.planning.families import Family
from agents.task.planning.families import _amounts as am
from agents.task.planning.families import _asks as asks
from agents.task.planning.families import _groups as groups
from agents.task.planning.families import _held as holding
from agents.task.planning.families import _pairing as pairing
from agents.task.planning.families import _plate_wide as plate_wide
from agents.task.planning.families import _said_held as said_held
from agents.task.planning.families._dest_plates import _FRESH, _resolve_places, _unnamed_destination
from agents.task.planning.families._last_wells import added_to_last
from agents.task.planning.families._layout import _arranged
from agents.task.planning.families._places import (
    _BOTH,
    _EACH_AFTER,
    _OF_THOSE,
    _POOL,
    _REST,
    _SAME_WELLS,
    _all,
    _expand,
    _fits,
    _fits_nowhere,
    _roles,
    _source_wells,
    copies_layout,
)
from agents.task.planning.families._recognise import VERBS, detect
from agents.task.planning.families._sources import _implicit_sources, _unnamed_sources, bulk_liquid
from agents.task.planning.families._tip_nouns import per_named
from agents.task.planning.families._worked import plural
from agents.task.planning.families._written import written_liquid

_FLAGS = re.IGNORECASE
MIX_CYCLES = 3


def mixing(frame: Frame) -> tuple[int, float | None]:
    """Mixing after each dispense as the clause says it (cycles 0: none asked)."""
    ents = frame.ents
    if not ents.mix:
        return 0, None
    cycles = ents.mix_times or MIX_CYCLES
    r.within(cycles, "mix_repetitions", None, frame_world(frame), "mixing", "times")
    volume = frame.mix_volume.value if frame.mix_volume else None
    return cycles, volume


def frame_world(frame: Frame) -> r.World:  # set by build (the world the frame plans on)
    return frame.extra["world"]  # type: ignore[return-value]


def build(frame: Frame, p: r.Planning) -> str:
    frame.extra["world"] = p.world
    if frame.volume is None and not frame.ents.volumes() and p.head_volume is not None:
        frame.volume = p.head_volume  # the heading said how much each
    world = p.world
    if (
        frame.clause.joined == "item"
        and [q.value for q in frame.ents.volumes()] == [0.0]
        and (p.head_dest or p.head_source)
    ):  # "- C1: 0 uL" in a normalisation list: that well needs nothing
        where = frame.ents.wellsets[0].text if frame.ents.wellsets else "this item"
        return f"nothing to add to {where} (0 uL)"
    asks.repeats(frame)
    explicit = pairing.explicit_pairs(frame)
    channels = frame.ents.channels or p.channels or 1
    if channels > (most := world.most_channels()):  # refused before any question is asked
        raise Refuse(
            f"the liquid handler has {most} channels, not {channels}", "missing_instrument"
        )
    cycles, mix_volume = mixing(frame)
    ops: list[pip.Op] = []
    if explicit is not None:
        prev_src: str | None = None
        prev_dst: str | None = None
        for src_place, dst_place, vol in explicit:
            volume = (
                vol
                if vol is not None
                else r.quantity(frame.volume, frame, "How many uL for each pair?", "volume")
            )
            r.positive_volume(volume, f"{volume:g} uL")
            implicit = _implicit_sources(frame, [dst_place], p, src_place.wells)
            src_lw = (
                prev_src
                if prev_src and src_place.labware is None and src_place.unknown is None
                else r.labware(src_place, p, "take the liquid from", implicit=implicit)
            )
            dst_lw = (
                prev_dst
                if prev_dst and dst_place.labware is None and dst_place.unknown is None
                else r.labware(dst_place, p, "pipette into")
            )
            prev_src, prev_dst = src_lw, dst_lw
            src = r.wells(src_place, src_lw, p, "should the liquid come from", frame)
            dst = r.wells(dst_place, dst_lw, p, "should receive it", frame)
            for s_, d in pairing.pair(src, dst):
                ops.append(pip.Op((src_lw, s_), (dst_lw, d), volume, cycles, mix_volume))
        what = f"{len(ops)} listed pairs"
    else:
        try:
            ops, what = _ops(frame, p, cycles, mix_volume)
        except Ask as ask:
            if set(ask.missing) & {"destination", "plate", "wells"}:
                _fits_nowhere(frame, p)  # too much for any well it could go to: say that
            raise
    asks.sources_used(frame, ops, p.world)  # a source place the pairing left out: asked
    said_held.check(frame, ops, p)  # "..., which already hold 50 uL buffer": checked
    lh = world.labware(ops[0].dst[0] if ops[0].dst else ops[0].src[0]).instrument
    if any(world.labware(o.src[0]).instrument != lh for o in ops):
        raise Refuse("the source and the destination are on different liquid handlers", "unsafe")
    wish = per_named(frame.text, ops, world) or frame.ents.tips  # "one tip per serum"
    policy = pip.policy_used(ops, wish or p.tips)
    p.policies_used.append(pip.POLICIES[policy])
    how = (lh, channels, policy)
    carries_on = (  # the pieces of a list from one source ("A1 15 uL; A2 12 uL - one tip")
        p.pending
        and p.pending_how == how
        and policy in pip.SHARED
        and not cycles
        and (p.pending[-1].src == ops[0].src or policy == "once")  # "one tip throughout"
    )
    if not carries_on:
        flush(p)
    if policy in pip.SHARED and not cycles:
        p.pending.extend(ops)  # emitted with the next clause from another source, or at the end
        p.pending_how = how
    else:
        pip.emit(world, lh, ops, channels, policy)
    served, p.said_empty = [o.dst for o in ops if o.dst is not None] + p.said_empty, []
    if served:
        last = served[-1][0]
        before = p.joined_wells if frame.clause.joined in _LISTED and p.plate == last else []
        p.plate, p.wells = last, list(dict.fromkeys(d[1] for d in served if d[0] == last))
        p.joined_wells = list(dict.fromkeys([*before, *p.wells]))
    mixed = f", mixing {cycles}x after each dispense" if cycles else ""
    head = "8 channels" if channels == 8 else "1 channel"
    return f"transfer {what}{mixed} ({head}; tips: {pip.POLICIES[policy]})"


_LISTED = ("and", "semicolon", "item")  # "A1 15 uL; A2 12.5 uL": the wells "them" stands for


def flush(p: r.Planning) -> list[str]:
    """Emit the transfer moves waiting for a tip decision; return their step ids."""
    if not p.pending or p.pending_how is None:
        return []
    lh, channels, policy = p.pending_how
    ops, p.pending, p.pending_how = list(p.pending), [], None
    ids = pip.emit(p.world, lh, ops, channels, policy)  # type: ignore[arg-type]
    p.flushed.extend(ids)
    return ids


# A source said as wells of no named plate: never a trough that holds the liquid named.
_FROM_WELLS = re.compile(
    r"\b(?:from|out\s+of|off)\s+(?:each|every|all(?:\s+the)?|the|those|these)\s+wells?\b", _FLAGS
)


def _ops(
    frame: Frame, p: r.Planning, cycles: int, mix_volume: float | None
) -> tuple[list[pip.Op], str]:
    world, text = p.world, frame.text
    sources, dests = _roles(frame)
    dest_sets: list[tuple[str, list[str]]] = []
    if dests and _BOTH.search(text) and all(d.labware is None for d in dests) and dests[0].wells:
        view_sets = [(lw, world.labware(lw)) for lw in r.work_plates(world)]
        dest_sets = [(lw, dests[0].wells.expand(v.rows, v.cols)) for lw, v in view_sets]
    elif not dests and _REST.search(text) and p.plate and p.wells:  # "... and buffer to the rest"
        dest_sets = [(p.plate, [w for w in _all(world, p.plate) if w not in p.wells])]
    elif not dests and p.plate and (empty := holding.empty_wells(frame, p, p.plate)) is not None:
        dest_sets = [(p.plate, empty)]  # "..., then fill the remaining empty wells with X"
    elif not dests and (frame.ents.refers_back or _SAME_WELLS.search(text)) and p.plate and p.wells:
        dest_sets = [(p.plate, plural(p, p.plate) or list(p.wells))]  # "to the same wells"
    elif not dests and p.head_wells and not frame.places:
        dest_sets = [(p.head_dest or p.plate or "", list(p.head_wells))]
    elif (
        not dests
        and p.plate
        and p.wells
        and frame.clause.joined in ("then", "and", "comma", "semicolon", "sentence", "item")
        and not (any(role == "dest" for role, _ in frame.places) or _FRESH.search(text))
        and (not frame.places or not VERBS.match(text))
    ):  # (never "... to each well of the other plate")
        dest_sets = [(p.plate, list(p.wells))]  # "..., and then the template": the same wells
    elif not dests and (last := added_to_last(frame, p)):
        dest_sets = [last]  # "...; add 5 uL cDNA from cDNA_plate A1-H1": into those reactions
    if not dest_sets and not dests and _BOTH.search(text):
        dest_sets = [(lw, _all(world, lw)) for lw in r.work_plates(world)]
    src_sets: list[tuple[str, list[str] | None]] = []
    positions = [pl for _, pl in frame.places if pl.labware is None and pl.wells is not None]
    if (
        _SAME_WELLS.search(text)
        and positions
        and any(s.labware and not s.wells for s in sources)
        and any(d.labware and not d.wells for d in dests)
    ):
        listed = [w for pl in positions for w in _expand(pl, world, dests[0].labware.name)]  # type: ignore[union-attr]
        sources = [Place(next(s for s in sources if s.labware).labware)]  # "(cols 11-12) of X"
        dests = [Place(next(d for d in dests if d.labware).labware)]
        src_sets = [(sources[0].labware.name, listed)]  # type: ignore[union-attr]
        dest_sets = [(dests[0].labware.name, listed)]  # type: ignore[union-attr]
    foreign = bool(frame.ents.liquids) and all(  # "add Tris to ...": not the heading's liquid
        lw != p.head_source
        for m in frame.ents.liquids
        for lw, _, _ in world.liquids.get(m.name, [])
    )
    if (
        positions
        and p.head_source
        and p.head_dest
        and (p.head_same or _SAME_WELLS.search(text))
        and not foreign
    ):
        listed = [w for pl in positions for w in _expand(pl, world, p.head_source)]  # 1:1
        taken = pairing.same_line(listed, p.head_source_wells, text)  # "..., same rows"
        src_sets, dest_sets = [(p.head_source, taken)], dest_sets or [(p.head_dest, listed)]
    elif not sources:
        src_sets = _unnamed_sources(frame, p, bool(dests))
    if sources and not src_sets:
        implicit = _implicit_sources(frame, dests, p)
        for lw, place in _resolve_places(sources, p, "take the liquid from", implicit, frame):
            wells = (
                r.wells(place, lw, p, "should the liquid come from", frame) if place.wells else None
            )
            src_sets.append((lw, wells))
    if not dest_sets and not dests and (onto := holding._onto_liquid(frame, p)):
        dest_sets = [onto]  # "add 500 uL growth medium to the cells": the wells holding them
    if not dest_sets:
        if not dests:  # "onto the empty plate": the one that fits, else asked
            dests = _unnamed_destination(frame, p, [lw for lw, _ in src_sets])
        for lw, place in _resolve_places(dests, p, "pipette into", None, frame):
            r.check_count(frame, lw, p)
            asks.part_of(frame, lw, world, place.wells is not None)
            if (
                place.wells is None
                and src_sets
                and src_sets[0][1]
                and (_SAME_WELLS.search(text) or (lw != src_sets[0][0] and not _POOL.match(text)))
                and not asks.one_into_many(frame, src_sets[0][1])
            ):  # (a pool "into pool_blk" names no well: which one is asked)
                wells = pairing.positions(src_sets)  # "to dest_plate": the same positions
                _fits(wells, lw, p)
            elif place.wells is None and src_sets and copies_layout(frame, src_sets, world):
                filled = [
                    w for (lid, w), v in world.volume.items() if lid == src_sets[0][0] and v > 0
                ]
                if not filled:
                    raise Refuse(f"{src_sets[0][0]} holds no liquid to copy", "insufficient_liquid")
                wells = sorted(filled, key=lambda w: (w[0], int(w[1:])))
                _fits(wells, lw, p)  # (a 384's wells on a 96: no such wells)
            elif plate_wide.every_well(frame, place, lw, p, src_sets, _all(world, lw)):
                wells = _all(world, lw)  # "fill plate_2 with ...", "50 uL/well X to plate_2"
            elif place.wells is None and (held := holding.onto_held(frame, p, lw)):
                wells = held  # "to the cells in ipsc_24": the wells holding them
            else:
                wells = r.wells(place, lw, p, "should receive it", frame)
                if (
                    _OF_THOSE.search(text)
                    and place.wells is not None
                    and place.wells.axis == "row"
                    and p.wells
                ):
                    cols = {w[1:] for w in p.wells}  # "rows B to H of both columns"
                    wells = [w for w in wells if w[1:] in cols]
                wells = holding.described_wells(
                    frame, p, lw, wells, getattr(place.wells, "start", None)
                )  # "to the lysate wells in col 2"
            dest_sets.append((lw, wells))
    dst_lw = dest_sets[0][0]
    dst_wells = [w for _, ws_ in dest_sets for w in ws_]
    per_well = pairing.per_well_volumes(frame, [pl for _, pl in frame.places])
    each_said = any(_EACH_AFTER.match(text[q.end :]) for q in frame.volumes)
    n_src = sum(len(w or []) for _, w in src_sets)
    if per_well is None and 1 < len(frame.volumes) in (len(dst_wells), n_src) and not each_said:
        per_well = [q.value for q in frame.volumes]  # "... into A1, A2, A3 at 2, 3 and 4.5 uL"
    if per_well is None and frame.volume is None and frame.total is None:
        per_well = am.whole(frame, src_sets, p) or am.refill(frame, p, dest_sets)
        n_src = len(per_well) if per_well else n_src
    volume = None
    if per_well is None or len(per_well) not in (len(dst_wells), n_src):
        asks.unmatched_list(frame, len(dst_wells))
        per_well = None
        if frame.volume is None and frame.total is not None:
            volume = frame.total.value / len(dst_wells)
        else:
            volume = r.quantity(
                frame.volume, frame, "How many uL should go into each well?", "volume"
            )
        am.per_well(frame, volume, dst_lw, len(dst_wells), world, max(len(dst_wells), n_src))
    if src_sets:
        src_lw, src_wells = asks.first_source(frame, src_sets, world)  # "water from A1": dye?
        if src_wells is None:
            src_wells = _source_wells(
                sources[0] if sources else Place(), src_lw, dst_wells, frame, p
            )
        else:
            src_wells = list(dict.fromkeys(w for lw, ws_ in src_sets for w in (ws_ or [])))
        name = f"{src_lw} {pairing.span(src_wells)}"
        p.liquid = bulk_liquid(world, src_lw, src_wells)  # "..., then 25 uL into A2-P2"
    else:
        if _FROM_WELLS.search(frame.text):  # "take 200 uL of medium from each well into X"
            raise Ask("Which plate should I take it from?", ["source"], r.work_plates(world))
        written = None if frame.liquid else written_liquid(frame)
        # A liquid the clause names, even one the lab lacks, is never the clause before's.
        liquid = r.liquid(frame.liquid, p) if frame.liquid else (None if written else p.liquid)
        held = [k for k, at in p.kept.items() if at[1] not in dict(dest_sets).get(at[0], [])]
        if liquid is None and not written and len(p.kept) == len(held) == 1:
            liquid = held[0]  # "samples A1 holds 100 uL. Take 50 uL to ...": from it
        if liquid is None:
            if not written:
                raise Ask(
                    "Which liquid should I add, or which well should it come from?",
                    ["liquid"],
                    r.liquids(world),
                )
            if len(written.split()) > 1:  # "blocking buffer" is not the lab's "sample buffer"
                raise Ask(
                    f"There is no {written} in the lab: which liquid do you mean?",
                    ["liquid"],
                    r.liquids(world),
                )
            # A name the lab does not know: one of its liquids by that word, else ask.
            liquid = r.liquid(Mention(written, 0, 0, written, False), p)
        count = frame.ents.replicates or 1
        per = per_well or [float(volume or 0)] * len(dst_wells)
        need = sum(per) * (count if len(dst_wells) == 1 else 1)
        reserved: dict[tuple[str, str], float] = {}
        for op in p.pending:
            reserved[op.src] = reserved.get(op.src, 0.0) + op.volume
        into = {(lw, w) for lw, ws_ in dest_sets for w in ws_}
        for dw, add in zip([(lw, w) for lw, ws_ in dest_sets for w in ws_], per, strict=False):
            moved = sum(o.volume * ((o.dst == dw) - (o.src == dw)) for o in p.pending)
            world.room_for(*dw, add + moved)  # a well's capacity is said before the source's
        kept = p.kept.get(liquid)  # the one well a fact said holds it: the source
        at = kept if kept and kept not in into else None
        src_lw, well = at or r.source_of(liquid, need, world, into, reserved)
        src_wells = [well]
        name = f"{liquid} ({src_lw} {well})"
        p.liquid = liquid
    if len(dest_sets) == 1:  # picks in order, a quadrant, a run from a starting well
        dst_wells = _arranged(frame, src_lw, src_wells, dst_lw, dst_wells, world)
        dest_sets = [(dst_lw, dst_wells)]
    pooled = bool(_POOL.match(text)) and len(dst_wells) == 1  # "pool the 4 replicates into B12"
    if not frame.ents.replicates and len(dest_sets) == 1:  # "replicates of A1 in row C"
        pairing.uncounted(text, src_wells, dst_wells, dst_lw)
    if frame.ents.replicates and frame.ents.replicates > 1 and len(dest_sets) == 1 and not pooled:
        dst_wells = pairing.replicate(
            dst_wells,
            frame.ents.replicates,
            len(src_wells) * frame.ents.replicates,
            dst_lw,
            p,
            src_wells,
            frame.text,
        )
        dest_sets = [(dst_lw, dst_wells)]
    if src_lw == dst_lw and set(src_wells) & set(dst_wells) and len(src_wells) == 1:
        raise Refuse(
            f"{src_lw} {src_wells[0]} cannot be both the source and a destination", "unsafe"
        )
    ops: list[pip.Op] = []
    for k, (lw, s_, d) in enumerate(groups.paired(frame, src_wells, dest_sets, world)):
        v = per_well[k] if per_well is not None and k < len(per_well) else volume
        if v and v > 0:
            ops.append(pip.Op((src_lw, s_), (lw, d), float(v), cycles, mix_volume))
        else:  # "100/50/0 uL of std in A3-C3, then saline to 100 uL": C3 is still a well
            p.said_empty.append((lw, d))
            p.world.poured.append(((lw, d), ("", "")))  # worked on, with nothing
    if per_well is not None and len(per_well) == len(src_wells) != len(dst_wells):
        ops = [
            pip.Op(o.src, o.dst, per_well[src_wells.index(o.src[1])], o.mix_cycles, o.mix_volume)
            for o in ops
        ]
    amount = "the listed volumes" if per_well else fmt(round(volume or 0, 3), "uL")
    where = ", ".join(f"{lw} {pairing.span(ws_)}" for lw, ws_ in dest_sets)
    return ops, f"{amount} of {name} to {where}"


FAMILY = Family("transfer", detect, build)
