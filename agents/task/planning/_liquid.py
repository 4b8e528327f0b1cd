"""Liquid-handling families: transfer and add (a named liquid), serial dilution, mix.

Serial dilution, n wells, k-fold, final volume V in every well (t = V / (k - 1)):

1. diluent V into wells 2..n (one tip: the wells are empty);
2. stock V + t into well 1;
3. t from well i to well i + 1, mixing after each transfer: well i + 1 then holds V + t with
   t / (V + t) = 1 / k of well i's concentration, and keeps V once it gives t onwards;
4. t taken from well n and discarded with its tip, so well n holds V too.

Mixing repeats ``MIX_CYCLES`` times (the liquid handler's own default) unless the request says
how often; it mixes V uL (never more than the well holds or a tip takes).
"""

from __future__ import annotations

import math
from itertools import pairwise

from agents.task.planning import _resolve as r
from agents.task.planning import _wells
from agents.task.planning._grammar import DilutionIntent, Lexicon, MixIntent, TransferIntent
from agents.task.planning._outcomes import Ask, Refuse
from agents.task.planning._units import Quantity, fmt, quantities, times
from agents.task.planning._world import World

MIX_CYCLES = 3


def _span(wells: list[str]) -> str:
    return wells[0] if len(wells) == 1 else f"{wells[0]}..{wells[-1]} ({len(wells)} wells)"


def pipette(
    world: World,
    src: str,
    src_well: str,
    dst: str,
    dst_wells: list[str],
    volume: float,
    mix_after: int = 0,
    mix_volume: float | None = None,
) -> None:
    """Plan ``volume`` uL from one well into each of ``dst_wells`` (split if a tip is smaller)."""
    lh = world.labware(dst).instrument
    if world.labware(src).instrument != lh:
        raise Refuse(f"{src} and {dst} are on different liquid handlers")
    room = world.labware(dst).well_max_volume_ul
    if room and volume > room:
        raise Refuse(f"{fmt(volume, 'uL')} is more than a {dst} well holds ({fmt(room, 'uL')})")
    if src == dst and src_well in dst_wells:
        raise Refuse(f"{src} {src_well} cannot be both the source and a destination")
    need = volume * len(dst_wells)
    if world.well_volume(src, src_well) + 1e-6 < need:
        raise Refuse(
            f"{src} {src_well} holds {fmt(round(world.well_volume(src, src_well), 3), 'uL')}, "
            f"less than the {fmt(round(need, 3), 'uL')} to take from it"
        )
    if mix_after:
        r.within(mix_after, "mix_repetitions", None, world, "mixing", "times")
    if mix_volume is not None and mix_volume > min(
        world.tip_capacity(), volume + min(world.well_volume(dst, w) for w in dst_wells)
    ):
        raise Refuse(f"mixing {fmt(mix_volume, 'uL')} needs more than a tip or the well holds")
    world.at_home(src)
    world.at_home(dst)
    cap = world.tip_capacity()
    passes = max(1, math.ceil(volume / cap - 1e-9)) if math.isfinite(cap) else 1
    per = round(volume / passes, 3)
    empty = all(world.well_volume(dst, w) <= 0 for w in dst_wells) and not mix_after
    new_tip = "once" if empty else "always"
    for _ in range(passes):
        args: dict[str, object] = {
            "source": src,
            "source_well": src_well,
            "destination": dst,
            "destination_wells": list(dst_wells),
            "volume_ul": per,
            "new_tip": new_tip,
        }
        if mix_after:
            args["mix_after"] = mix_after
            if mix_volume is not None:
                args["mix_volume_ul"] = mix_volume
        for w in dst_wells:
            world.pour(src, src_well, dst, w, per)
        world.use_tips(1 if new_tip == "once" else len(dst_wells))
        pairs = [(dst, w) for w in dst_wells] + [(src, src_well)]
        world.emit(lh, "transfer", args, {"wells": world.wells_expect(pairs)})


def _volume(q: Quantity | None, intent: TransferIntent | MixIntent, question: str) -> float:
    value = r.quantity(q, intent, question, "volume")
    return r.positive_volume(value, q.text if q else "")


def transfer(intent: TransferIntent, world: World, ctx: r.Context, lex: Lexicon) -> str:
    """Transfer from a well, or add a named liquid, to one or many wells."""
    volume = _volume(intent.volume, intent, "How many uL should go into each well?")
    dst = r.plate(intent.dest, world, ctx, "pipette into")
    dst_wells = r.wells(intent.dest, dst, world, ctx, "should receive it")
    room = world.labware(dst).well_max_volume_ul
    if intent.volume is not None and room and volume > room:
        raise Refuse(f"{intent.volume.text} is more than a {dst} well holds ({fmt(room, 'uL')})")
    if intent.source is not None:
        src = r.plate(intent.source, world, r.Context(), "take the liquid from")
        src_well = _source_well(intent.source.selection, src, world)
        what = f"{src} {src_well}"
    elif intent.liquid:
        name = r.liquid(intent.liquid, world, lex)
        src, src_well = r.source_of(
            name, volume * len(dst_wells), world, {(dst, w) for w in dst_wells}
        )
        what = f"{name} ({src} {src_well})"
    else:
        raise Ask("Which liquid, or which well, should it come from?", ["source"], r.liquids(world))
    mix_after, mix_volume = 0, None
    if intent.mix_text is not None:
        n = times(intent.mix_text)
        if n is None:
            raise Ask("How many times should each well be mixed after it?", ["repetitions"], [])
        mix_after = n
        mixq = next((q for q in quantities(intent.mix_text) if q.kind == "volume"), None)
        mix_volume = r.positive_volume(mixq.value, mixq.text) if mixq else None
    pipette(world, src, src_well, dst, dst_wells, volume, mix_after, mix_volume)
    ctx.plate, ctx.wells = dst, dst_wells
    mixed = f", mixing {mix_after}x" if mix_after else ""
    return f"transfer {fmt(volume, 'uL')} of {what} to {dst} {_span(dst_wells)}{mixed}"


def _source_well(selection: str | None, src: str, world: World) -> str:
    lw = world.labware(src)
    filled = [w for (lid, w), v in world.volume.items() if lid == src and v > 0]
    if selection is None and len(filled) == 1:
        return filled[0]
    names = _wells.expand(selection, lw.rows, lw.cols) if selection else []
    if len(names) != 1:
        options = [f"{src} {w}" for w in filled] or [f"{src} A1"]
        raise Ask(f"Which one well of {src} should the liquid come from?", ["source well"], options)
    return names[0]


def dilution(intent: DilutionIntent, world: World, ctx: r.Context, lex: Lexicon) -> str:
    """An n-step k-fold serial dilution across a row, column or range, every well at V."""
    if intent.fold is None:
        raise Ask(
            "How many-fold should each step dilute?", ["fold"], ["2-fold", "3-fold", "10-fold"]
        )
    k = intent.fold
    if k <= 1:
        raise Refuse(f"a {k:g}-fold dilution does not dilute: the factor must be more than 1")
    if intent.stock is None:
        raise Ask("Which liquid should I dilute?", ["liquid"], r.liquids(world))
    stock = r.liquid(intent.stock, world, lex)
    if intent.diluent is not None:
        diluent = r.liquid(intent.diluent, world, lex)
    elif "buffer" in lex.liquids:
        diluent = lex.liquids["buffer"]
    else:
        others = [x for x in r.liquids(world) if x != stock]
        raise Ask(f"Which liquid should I dilute {stock} with?", ["diluent"], others)
    if diluent == stock:
        raise Refuse(f"{stock} cannot be diluted with itself")
    plate = r.plate(intent.target, world, ctx, "dilute across")
    wells = r.wells(intent.target, plate, world, ctx, "should the dilution run across")
    if intent.steps is not None:
        if not 2 <= intent.steps <= len(wells):
            raise Refuse(f"a {intent.steps}-step dilution does not fit in {len(wells)} wells")
        wells = wells[: intent.steps]
    if len(wells) < 2:
        raise Refuse("a serial dilution needs at least two wells")
    final = _final_volume(intent)
    t = round(final / (k - 1), 3)
    room = world.labware(plate).well_max_volume_ul
    if room and final + t > room:
        raise Refuse(
            f"a {k:g}-fold dilution to {fmt(final, 'uL')} needs {fmt(final + t, 'uL')} in a "
            f"well while mixing, more than a {plate} well holds ({fmt(room, 'uL')})"
        )
    cycles = intent.mix_times or MIX_CYCLES
    mix_volume = min(final, world.tip_capacity())
    on_plate = {(plate, w) for w in wells}
    pipette(
        world,
        *r.source_of(diluent, final * (len(wells) - 1), world, on_plate),
        plate,
        wells[1:],
        final,
    )
    pipette(world, *r.source_of(stock, final + t, world, on_plate), plate, [wells[0]], final + t)
    for a, b in pairwise(wells):
        pipette(world, plate, a, plate, [b], t, cycles, mix_volume)
    _discard(world, plate, wells[-1], t)
    ctx.plate, ctx.wells = plate, wells
    return (
        f"{len(wells)}-step {k:g}-fold serial dilution of {stock} in {diluent} across {plate} "
        f"{_span(wells)}, {fmt(final, 'uL')} final, {fmt(t, 'uL')} carried, mixed {cycles}x"
    )


def _final_volume(intent: DilutionIntent) -> float:
    question = "What final volume should each well hold (e.g. 100 uL final volume)?"
    if not intent.volumes:
        return r.quantity(None, intent, question, "final volume")
    if not intent.labelled_final:
        q = intent.volumes[0]
        raise Ask(
            f"Is {q.text} the final volume of each well? {question}",
            ["final volume"],
            [f"{q.text} final volume"],
        )
    anchor = intent.text.lower().find("final")
    q = (
        min(intent.volumes, key=lambda v: abs(v.start - anchor))
        if anchor >= 0
        else intent.volumes[0]
    )
    return r.positive_volume(q.value, q.text)


def _discard(world: World, plate: str, well: str, volume: float) -> None:
    lh = world.labware(plate).instrument
    rack = world.next_rack()
    world.use_tips(1)
    world.emit(lh, "pick_up_tips", {"rack": rack, "channels": [0]}, {"tips_on": [0]})
    world.pour(plate, well, plate, None, volume)
    world.emit(
        lh,
        "aspirate",
        {"labware": plate, "wells": [well], "volume_ul": volume, "channels": [0]},
        {"wells": world.wells_expect([(plate, well)])},
        note="excess of the last dilution step, discarded with the tip",
    )
    world.emit(lh, "drop_tips", {"channels": [0], "destination": "trash"}, {"tips_on": []})


def mix(intent: MixIntent, world: World, ctx: r.Context) -> str:
    """Mix wells with a fresh tip each."""
    plate = r.plate(intent.target, world, ctx, "mix")
    wells = r.wells(intent.target, plate, world, ctx, "should I mix")
    volume = _volume(intent.volume, intent, "How many uL should each mixing stroke move?")
    if intent.times is None:
        raise Ask("How many times should I mix?", ["repetitions"], [])
    r.within(intent.times, "mix_repetitions", None, world, "mixing", "times")
    if volume > world.tip_capacity():
        raise Refuse(
            f"{fmt(volume, 'uL')} is more than a tip holds ({fmt(world.tip_capacity(), 'uL')})"
        )
    for w in wells:
        have = world.well_volume(plate, w)
        if have + 1e-6 < volume:
            raise Refuse(
                f"{plate} {w} holds {fmt(round(have, 3), 'uL')} at that point: mixing "
                f"{fmt(volume, 'uL')} needs at least that much in the well"
            )
    world.at_home(plate)
    lh = world.labware(plate).instrument
    for w in wells:
        rack = world.next_rack()
        world.use_tips(1)
        world.emit(lh, "pick_up_tips", {"rack": rack, "channels": [0]}, {"tips_on": [0]})
        args = {
            "labware": plate,
            "well": w,
            "volume_ul": volume,
            "repetitions": intent.times,
            "channel": 0,
        }
        world.emit(lh, "mix", args, {"wells": world.wells_expect([(plate, w)])})
        world.emit(lh, "drop_tips", {"channels": [0], "destination": "trash"}, {"tips_on": []})
    ctx.plate, ctx.wells = plate, wells
    return f"mix {plate} {_span(wells)} {intent.times}x with {fmt(volume, 'uL')}"
