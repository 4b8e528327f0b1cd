"""Dilutions: serial dilutions along rows or down columns, and ratio dilutions ("1:10 in 200 uL").

Serial dilution over n wells, k-fold (or 1:k), final volume V, transfer t: t = V / (k - 1)
when V is given, else the stated transfer volume (and V = t * (k - 1)):

1. diluent V into wells 2..n (one tip: the wells are empty);
2. stock V + t into well 1 — unless the first well already holds it ("pre-filled");
3. t from well i to well i + 1, mixing after each transfer (3 cycles unless said), a new tip
   each: well i + 1 then holds V + t at 1 / k of well i's concentration. The last well keeps
   its V + t unless the request states the final volume: then t goes from it to waste so
   every well ends at V (a spelled-out request asks for that step itself when it wants it).

When the request spells the steps out ("100 uL buffer into A2-A12, 200 uL dye into A1, then
transfer 100 uL along the row"), the serial-dilution sentence only names the wells, the fold
and the mixing; the spelled-out clauses are planned (:mod:`.chain` carries the chain).

Each row of the well set is one chain ("across"), or each column ("down"); with the 8-channel
head the chains of one column run together. An arrow chain ("A1 -> B1 -> C1") is one chain in
the order written. A ratio dilution puts V / k of stock and V - V / k of diluent in each well.
"""

from __future__ import annotations

import re

from agents.task.planning import _pipetting as pip
from agents.task.planning import _resolve as r
from agents.task.planning._clauses import Clause
from agents.task.planning._entities import _ASIDE, Entities
from agents.task.planning._frames import Frame
from agents.task.planning._outcomes import Ask, Refuse
from agents.task.planning._quantities import fmt
from agents.task.planning.families import Family
from agents.task.planning.families import _chains as geometry
from agents.task.planning.families._blank_wells import diluent_wells, without_blanks
from agents.task.planning.families._concentrations import top_and_stock
from agents.task.planning.families._deferred import steps_said_apart
from agents.task.planning.families._dilution_words import (
    _ALONG,
    _CURVE,
    _FINAL_SAID,
    _LEVELLED,
    _MAKE_STANDARDS,
    _MAKE_STRENGTH,
    _MIXED_IN,
    _RATIO_OF,
    _SERIAL,
    _SERIES_WORDS,
    _STEP_ALONG,
    _WITH,
    COUNTED_FOLDS,
    IN_ALONG,
    carried_fold,
    curve_label,
    series_label,
    tips_for_diluent,
)
from agents.task.planning.families._ratio import (
    MIX_CYCLES,
    _by_column,
    _by_row,
    _diluent,
    _fold,
    _ratio,
    _stock,
    first_well_stock,
    prefilled_diluent,
    said_diluent,
)
from agents.task.planning.families._ratio_parts import is_recipe
from agents.task.planning.families._serial_volumes import amounts, fold_asking_once, says_step
from agents.task.planning.families._series_end import last_well_out
from agents.task.planning.families._stock_wells import first_wells_ready, held_stock, stock_sources
from agents.task.planning.families._unsaid import unsaid

_FLAGS = re.IGNORECASE
_DILUTE = re.compile(r"\b(?:dilut\w*)\b", _FLAGS)
_DILUTE_VERB = re.compile(r"^(?:dilute|make\s+(?:a\s+)?dilutions?|titrate)\b", _FLAGS)
_PREFILLED = re.compile(
    r"\b(?:already|pre-?filled|pre-?loaded|starting\s+(?:from|with)\s+(?:the\s+)?(?:stock\s+)?(?:already\s+)?in"
    r"|(?:stock|it)\s+is\s+(?:already\s+)?in|from\s+the\s+stock\s+in)\b",
    _FLAGS,
)


def _joined(ents: Entities) -> bool:
    """A stock and its diluent said together: "dye in buffer", "conc + water (1:10)"."""
    first, second = ents.liquids[0], ents.liquids[-1]
    return bool(_WITH.search(ents.text) or _WITH.match(ents.text[first.end : second.start]))


def detect(clause: Clause, ents: Entities) -> int | None:
    text = ents.text
    if _CURVE.search(text) or (_MAKE_STANDARDS.search(text) and not ents.volumes()):
        return 85  # (or "make BSA standards on X": a series, all of whose numbers are asked)
    if (
        ents.series is not None
        and not _LEVELLED.search(f"{clause.label} {text}")
        and (
            curve_label(clause.label or "")
            or _CURVE.search(text)
            or _SERIES_WORDS.search(text)
            or ents.liquids
        )
    ):
        return 85  # "Standard curve (ng/mL): 1000, 500, 250, ... and 0 down column 1"
    if curve_label(clause.label or "") and (
        ents.fold is not None
        or says_step(text)
        or IN_ALONG.search(ents.marked)
        or (ents.wellsets and _FINAL_SAID.search(text))  # "Std curve: X in Y, col 1, 100 uL final"
    ):
        return 85  # "Standard curve: stock 2-fold in diluent across row B, ..." (fold or not)
    if _DILUTE.search(text) and (
        _SERIAL.search(text) or (ents.wellsets and any(w.chain for w in ents.wellsets))
    ):
        return 90
    if _DILUTE.search(text) and ents.fold is not None:
        return 80
    if ents.fold is not None and _RATIO_OF.match(text):
        return 80  # "1:10 of master E5 into inter E5 using broth, 300 uL total"
    if ents.fold and ents.fold[1] == "ratio" and ents.wellsets and _FINAL_SAID.search(text):
        return 80  # "starters col 2 -> subcult col 2, 1 in 20, 800 uL final": no verb needed
    if is_recipe(ents) or (ents.fold and len(ents.liquids) >= 2 and _MIXED_IN.search(text)):
        return 80  # "200 uL of 1:10 dye in buffer", "1 part dye with 9 parts buffer", "1+100
        # (10 uL serum + 1000 uL diluent)": the parts of one dilution
    if ents.fold is not None and len({m.name for m in ents.liquids}) == 2 and _joined(ents):
        return 80  # "prepare 1:20 dye in buffer": a stock and its diluent (3 liquids: a recipe)
    if ents.fold is not None and re.search(
        r"\b(?:steps?|standards?|stds?|points?|pts)\b", text, _FLAGS
    ):
        return 78  # "1:10 steps of dye down column 4, A4 to E4 (5 standards)"
    if (
        ents.fold is not None
        and ents.wellsets
        and _SERIES_WORDS.search(text)
        and _ALONG.search(text)
    ):
        return 77  # "ethanol 1:2 down A1-F1, G1 + H1 blanks"
    if re.search(r"\b(?:serial(?:ly)?|series|ladder|titrat\w*)\b", text, _FLAGS) and ents.fold:
        return 85
    if carried_fold(text, ents):
        return 75  # "Dye: 1:2 across plate_2 row B, 100 uL final": a fold carried along a line
    if _DILUTE_VERB.match(text) and not ents.volumes():
        return 70  # "Dilute the libraries", "Titrate serum A1 along row D": how is the question
    if re.match(r"^(?:please\s+)?dilute\b", text, _FLAGS) and len(ents.volumes()) == 1:
        return 45  # "dilute dye to 1x in buffer, 200 uL per well": never a plain transfer
    if _MAKE_STRENGTH.match(text) and ents.liquids:
        return 45  # "make 70% ethanol from the ethanol with water": by how much is the question
    return None


def build(frame: Frame, p: r.Planning) -> str:
    if frame.extra.get("defer"):
        return steps_said_apart(frame, p)
    if frame.extra.get("chain_only"):
        return _chain_only(frame, p)
    label = frame.clause.label or ""
    fold = frame.ents.fold
    serial = (
        _SERIAL.search(frame.text)
        or any(w.chain for w in frame.ents.wellsets)
        or _CURVE.search(frame.text)
        or series_label(label, frame.text)
        or _SERIAL.search(label)
        or (fold is not None and fold[1] == "fold" and _ALONG.search(frame.text))
        or _STEP_ALONG.search(frame.text)
        or re.search(r"\b(column|row)\s+to\s+\1\b", frame.text, _FLAGS)  # "col 1 -> col 2 -> ..."
        or (
            frame.ents.steps and re.search(r"\b(?:steps?|points?|pts?|stds?)\b", frame.text, _FLAGS)
        )
        or _SERIES_WORDS.search(frame.text)
        or COUNTED_FOLDS.search(frame.text)
        or frame.ents.blanks  # "C12 stays diluent only", "H1 = PBS blank": a series' blank
        or (
            frame.ents.steps
            and _ALONG.search(frame.text)
            and not re.search(r"\bdilutions\b", frame.text, _FLAGS)
        )
    )
    if serial or frame.ents.fold is None or (frame.ents.fold[1] == "fold" and frame.ents.steps):
        return _serial(frame, p)
    return _ratio(frame, p)


def plain_heading(frame: Frame) -> bool:
    """ "Direct dilution into plate row A from stocks in src A1:" + a volume per well: a
    heading that names no fold, ratio, series or volume of its own; its items are what to do."""
    text = _ASIDE.sub(" ", frame.text)  # "(no serial steps)": a remark, not the series
    return (
        frame.ents.fold is None
        and not frame.ents.volumes()
        and not frame.ents.blanks
        and not (_SERIAL.search(text) or _CURVE.search(text) or _SERIES_WORDS.search(text))
    )


def _chain_only(frame: Frame, p: r.Planning) -> str:
    """The carrying steps of a serial dilution whose wells the clauses before filled: the
    volume each step carries as said ("with 100 uL transfers"), else from the fold."""
    place = frame.dest if not frame.dest.empty else frame.head
    plate = r.labware(place, p, "dilute across")
    chains = geometry.chains_of(frame, plate, p)
    diluent = p.world.well_volume(plate, chains[0][1])
    said = frame.volume if frame.ents.fold is None and len(frame.volumes) == 1 else None
    if said is None and diluent <= 0:
        raise Ask("How much should each step carry?", ["volume"], [])
    k = (diluent + said.value) / said.value if said is not None else _fold(frame)
    t = said.value if said is not None else round(diluent / (k - 1), 4)
    cycles = 0 if frame.ents.no_mix else (frame.ents.mix_times or MIX_CYCLES)
    channels = frame.ents.channels or p.channels or 1
    lh = p.world.labware(plate).instrument
    for i in range(max(len(c) for c in chains) - 1):
        ops = [
            pip.Op((plate, c[i]), (plate, c[i + 1]), t, cycles) for c in chains if i + 1 < len(c)
        ]
        pip.emit(p.world, lh, ops, channels, "per_destination")
    p.plate, p.wells = plate, [w for c in chains for w in c]
    p.policies_used.append(pip.POLICIES["per_destination"] + " along the dilution chain")
    return (
        f"{k:g}-fold serial dilution on {plate}: {fmt(t, 'uL')} carried along "
        f"{len(chains)} chain(s), mixing {cycles}x"
    )


def _serial(frame: Frame, p: r.Planning) -> str:
    world = p.world
    place = geometry.chain_place(frame)
    k = fold_asking_once(frame, _fold, *unsaid(frame, p, place))
    held = held_stock(frame, p, place)  # "serially dilute sample_plate A1 ... down assay column 1"
    plate = r.labware(place, p, "dilute across")
    chains = geometry.chains_of(geometry.without_held(frame, held, plate), plate, p)
    chains, last_blank = without_blanks(frame, chains, plate, p)
    if any(len(c) < 2 for c in chains):
        raise Refuse("a serial dilution needs at least two wells", "nothing_to_do")
    first = first_well_stock(frame, p, plate, chains[0][0]) if held is None else None
    stock = held[2] if held is not None else (first or _stock(frame, p))
    pre = prefilled_diluent(world, plate, chains)  # "RPMI already in columns 2-12"
    if pre is not None:
        try:  # (never a guess from the lab's names over the diluent already in place)
            named = said_diluent(frame, stock, p) or pre[0]
        except Ask:
            named = pre[0]
        pre = pre if named == pre[0] else None
    diluent = pre[0] if pre is not None else _diluent(frame, stock, p)
    _top_is_stock(frame, stock, first is not None or held is not None)
    if diluent == stock:
        raise Refuse(f"{stock} cannot be diluted with itself", "unsafe")
    final, t, step_said = amounts(frame, k, pre[1] if pre is not None else None, (stock, diluent))
    if pre is not None and abs(pre[1] - final) > 0.5:
        raise Ask(
            f"{plate} already holds {fmt(pre[1], 'uL')} of {diluent} in the wells after the "
            f"first, but a {k:g}-fold dilution with these volumes needs {fmt(final, 'uL')}: "
            "which is right?",
            ["lab_state"],
            [f"{fmt(pre[1], 'uL')} in each well", f"{fmt(final, 'uL')} in each well"],
        )
    room = world.labware(plate).well_max_volume_ul
    if room and final + t > room + 1e-6:
        raise Refuse(
            f"a {k:g}-fold dilution to {fmt(final, 'uL')} needs "
            f"{fmt(round(final + t, 3), 'uL')} in a "
            f"well while mixing, more than a {plate} well holds ({fmt(room, 'uL')})",
            "capacity",
        )
    cycles = 0 if frame.ents.no_mix else (frame.ents.mix_times or MIX_CYCLES)
    r.within(cycles or 1, "mix_repetitions", None, world, "mixing", "times")
    mix_volume = frame.mix_volume.value if frame.mix_volume else None
    channels = frame.ents.channels or p.channels or 1
    lh = world.labware(plate).instrument
    prefilled = bool(_PREFILLED.search(frame.text)) or first_wells_ready(
        world, plate, chains, (stock, first is not None), final + t
    )
    on_plate = {(plate, w) for c in chains for w in c}
    fill_tips = frame.ents.tips or p.tips  # (a rule said of the diluent's fill is only its own)
    tips = None if tips_for_diluent(frame.text, diluent) else fill_tips
    rest = [w for c in chains for w in c[1:]] + last_blank
    view = world.labware(plate)
    lanes = (
        {w[0] for c in chains for w in c}
        if all(len({w[0] for w in c}) == 1 for c in chains)
        else None
    )
    cols = (
        {w[1:] for c in chains for w in c}
        if all(len({w[1:] for w in c}) == 1 for c in chains)
        else None
    )
    rest += [  # a blank holds the diluent alone, at the same volume, in the chains' rows or columns
        w
        for b in p.blanks
        for w in b.expand(view.rows, view.cols)
        if (plate, w) not in on_plate
        and w not in rest
        and (lanes is None or w[0] in lanes)
        and (cols is None or w[1:] in cols)
    ]
    rest += [
        w for w in diluent_wells(frame, diluent) if (plate, w) not in on_plate and w not in rest
    ]
    if pre is not None:  # only what does not hold its diluent yet (a blank, say)
        rest = [w for w in rest if world.well_volume(plate, w) < 1e-6]
    src = r.source_of(diluent, final * len(rest), world, on_plate) if rest else ("", "")
    pip.emit(
        world,
        lh,
        [pip.Op(src, (plate, w), final) for w in _by_column(rest, channels)],
        channels,
        pip.policy_used([], fill_tips),
    )
    if not prefilled:
        firsts = [c[0] for c in chains]
        s_srcs = stock_sources(
            held,
            firsts,
            r.source_of(stock, (final + t) * len(firsts), world, on_plate)
            if held is None
            else ("", ""),
        )
        pip.emit(
            world,
            lh,
            [
                pip.Op(s, (plate, w), round(final + t, 4))
                for s, w in zip(s_srcs, firsts, strict=True)
            ],
            channels,
            pip.policy_used([], tips),
        )
    chain_policy = (
        pip.policy_used([pip.Op(("", ""), ("", ""), t, cycles)], tips)
        if cycles
        else (tips or "per_destination")
    )
    geometry.carry(p, plate, chains, (t, cycles, mix_volume), channels, chain_policy)  # type: ignore[arg-type]
    # the wells filled by what was said before ("100 uL CAMHB in A2-A12, 200 uL cipro into A1,
    # then 2-fold serial 100 uL ..."): the steps are spelled out, the last well keeps its excess
    spelled = pre is not None and prefilled and frame.final is None
    stated_final = (frame.final is not None or not step_said) and not spelled
    said_end = last_well_out(frame, plate, chains, view, t)  # "don't discard", "... the excess"
    stated_final = stated_final if said_end is None else said_end
    if stated_final:  # every well at the final volume: the last one's excess goes to waste
        ops_out = [pip.Op((plate, c[-1]), None, t) for c in chains]
        pip.emit(world, lh, ops_out, channels, "per_destination")
    # "..., H1 PBS; then 25 uL of each into ...": the standards and their blanks, line by line
    said = [w for c in chains for w in c] + [w for w in rest if (plate, w) not in on_plate]
    down = len({w[1:] for w in chains[0]}) == 1
    p.plate, p.wells = plate, _by_column(said, 8) if down else _by_row(said)
    p.chain_ends = [c[-1] for c in chains]
    p.policies_used.append(pip.POLICIES[chain_policy] + " along the chain")
    mixing = f"mixing {cycles}x after each transfer" if cycles else "no mixing"
    first = (
        "stock already in the first well"
        if prefilled
        else f"{fmt(round(final + t, 3), 'uL')} {stock} into the first well"
    )
    return (
        f"{k:g}-fold serial dilution of {stock} in {diluent} on {plate}, {len(chains)} chain(s) of "
        f"{len(chains[0])} wells ({chains[0][0]}..{chains[0][-1]}): "
        f"{fmt(final, 'uL')} {diluent} into wells "
        f"2..n, {first}, {fmt(t, 'uL')} carried along, {mixing}"
        + (f", {fmt(t, 'uL')} from the last well to waste" if stated_final else "")
        + f" ({'8 channels' if channels == 8 else '1 channel'})"
    )


def _top_is_stock(frame: Frame, stock: str, in_place: bool) -> None:
    """A series said by its concentrations starts with the stock itself: when the stock's name
    says another strength ("1000 ... ug/mL" from "BSA 2 mg/mL"), how to make the top is asked."""
    found = frame.ents.series
    said = (
        None
        if found is None or in_place
        else top_and_stock(
            f"{frame.ents.marked} {frame.clause.label or ''}", found.numbers[0], stock
        )
    )
    if said is not None and abs(said[0].value - said[1].value) > 0.01 * said[1].value:
        raise Ask(
            f"The top standard ({found.numbers[0] if found else ''}) is not the strength of "
            f"{stock}: should the first well be a dilution of it, or is the top the stock itself?",
            ["fold"],
            [f"the top is {stock} itself", "pre-dilute the stock for the top standard"],
        )


def _read_series(frame: Frame) -> None:
    """A series said by its concentrations gives the factor and the points."""
    found = frame.ents.series
    if found is not None:  # "..., 0.1 copies/uL and 0, 50 uL each": the 0 is a blank, not 0 uL
        frame.volumes = [q for q in frame.volumes if q.value > 0]
        if frame.volume is not None and frame.volume.value <= 0:
            frame.volume = frame.volumes[0] if len(frame.volumes) == 1 else None
    if found is not None and frame.ents.fold is None:
        frame.ents.fold = (found.fold, "fold")
    if found is not None and frame.ents.steps is None:
        frame.ents.steps = found.points


FAMILY = Family("dilution", detect, build, _read_series)
