"""Turning what a frame names into things of this lab — or asking, or refusing.

Every lookup that can fail says what is missing (in the words of ``Clarification.missing``)
and offers the lab's real choices: its plates, liquids, instruments, the wells of a plate.
Limits come from the instrument's ``limits``, else from the instrument kind's defaults.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from agents.task.planning import _restated as restated
from agents.task.planning import _wellsets as ws
from agents.task.planning._bulk_sources import source_of as source_of  # re-exported: r.source_of
from agents.task.planning._bulk_sources import sources as sources  # re-exported: r.sources
from agents.task.planning._frames import Frame, Place
from agents.task.planning._lanes import lane_well
from agents.task.planning._lexicon import Lexicon, Mention
from agents.task.planning._outcomes import Ask, Refuse
from agents.task.planning._quantities import Quantity, fmt
from agents.task.planning._world import World

DEFAULT_LIMITS: dict[str, tuple[float, float]] = {
    "temperature_range_c": (4.0, 100.0),
    "rpm_range": (200, 3000),
    "wavelength_range_nm": (230, 1000),
    "duration_range_s": (1, 86_400),
    "mix_repetitions": (1, 50),
    "block_range_c": (0.0, 100.0),
    "lid_range_c": (20.0, 115.0),
}
KIND_LABEL = {
    "plate_reader": "plate reader",
    "heater_shaker": "heater-shaker",
    "plate_mover": "plate mover",
    "liquid_handler": "liquid handler",
    "thermocycler": "thermocycler",
    "magnet": "magnetic module",
    "centrifuge": "centrifuge",
    "incubator": "incubator",
    "sealer": "plate sealer",
    "washer": "plate washer",
}


@dataclass
class Planning:
    """What planning one request carries from clause to clause."""

    world: World
    lex: Lexicon
    plate: str | None = None  # the plate the last clause worked on ("then read it")
    wells: list[str] = field(default_factory=list)  # its wells ("mix them")
    joined_wells: list[str] = field(default_factory=list)  # "A1 and B1" ("then top them up")
    said_empty: list[tuple[str, str]] = field(default_factory=list)  # "100/50/0 uL": the 0
    channels: int | None = None  # said once for the whole request ("use the 8-channel")
    tips: str | None = None  # likewise ("fresh tips throughout")
    rack: str | None = None  # likewise ("use tips_50")
    named: list[str] = field(default_factory=list)  # the plates the whole request names
    fresh: dict[str, str] = field(default_factory=dict)  # "the new plate" -> the plate it was
    # What a heading ("Cherry-pick from samples into dest_plate:") or a fact ("the TMB is in
    # reservoir A3") said, for the clauses after it that leave it out.
    head_source: str | None = None
    head_dest: str | None = None
    head_wells: list[str] = field(default_factory=list)
    head_source_wells: list[str] = field(default_factory=list)
    head_volume: Quantity | None = None
    head_sentence: int = -1  # the sentence of the last heading
    head_inline: bool = False  # its body followed on its own line ("plate_1 row B: 30 uL X.")
    liquid: str | None = None
    kept: dict[str, tuple[str, str]] = field(default_factory=dict)  # "lysate_block A1 holds lysate"
    thermocycler: str | None = None  # the one a profile ran on ('then hold at 4 C')
    heater_c: float | None = None  # "pre-warm the shaker to 37 C": the next incubation's
    # Moves of consecutive transfer clauses not yet emitted: the next clause from the same
    # source carries on with the same tip (a new tip only when the source changes).
    pending: list[Any] = field(default_factory=list)
    pending_how: tuple[str, int, str] | None = None
    flushed: list[str] = field(default_factory=list)
    policies_used: list[str] = field(default_factory=list)
    fill: Fill | None = None  # "every well to 30 uL total with water added first:"
    blanks: list[Any] = field(default_factory=list)  # blank wells the request names anywhere
    chain_ends: list[str] = field(default_factory=list)  # the last well of each chain carried
    removed: dict[tuple[str, str], float] = field(default_factory=dict)  # the last removal's
    head_same: bool = False  # the heading said "same wells" ("from X to Y, same wells:")
    stock: str | None = None  # what a serial dilution's heading dilutes ("then 90 uL stock in A1")


@dataclass
class Fill:
    liquid: str
    volume: float
    first: bool
    trace_at: int  # the heading's trace item
    steps_at: int  # where the items' steps begin
    poured_at: int  # where the items' pours begin
    named: list[tuple[str, str]]  # the wells the heading names (when the items pour nothing)
    others: tuple[tuple[str, bool], ...] = ()  # every liquid the heading names, and if first


def plates(world: World) -> list[str]:
    return [lw.id for lw in world.lab.labware.values() if lw.kind == "plate"]


def work_plates(world: World) -> list[str]:
    """Plates that receive liquid: not reservoirs or troughs (one row or one column of wells;
    a 6- or 12-well culture plate, 2x3 or 3x4, is a plate)."""
    found = [
        lw.id
        for lw in world.lab.labware.values()
        if lw.kind == "plate" and lw.rows > 1 and lw.cols > 1
    ]
    return found or plates(world)


def liquids(world: World) -> list[str]:
    return sorted(world.liquids)


def unsure(m: Mention, what: str, options: list[str]) -> Ask:
    return Ask(
        f"'{m.written}' is not a {what} I know: did you mean {m.name}?", [what], [m.name, *options]
    )


def labware(
    place: Place,
    p: Planning,
    doing: str,
    *,
    implicit: list[str] | None = None,
    holding: str | None = None,
) -> str:
    """The labware a place names; else the clause before's plate, else the one plate that
    holds ``holding`` ("incubate the cells"), else the only candidate."""
    world = p.world
    if place.unknown is not None:
        raise Ask(
            f"There is no {place.unknown.written} in the lab: which plate should I {doing}?",
            ["plate"],
            plates(world),
        )
    if place.labware is not None:
        if not place.labware.sure:
            raise unsure(place.labware, "plate", plates(world))
        return place.labware.name
    candidates = implicit if implicit is not None else work_plates(world)
    if place.wells is not None:
        fits = [c for c in candidates if _fits(place, world.labware(c).rows, world.labware(c).cols)]
        if fits and len(fits) < len(candidates):
            candidates = fits  # "add 10 uL water to P24": the one plate with a row P
    if p.plate is not None and p.plate in candidates:
        return p.plate
    if holding is not None:
        held = sorted({lw for lw, _, _ in world.liquids.get(holding, []) if lw in candidates})
        candidates = held or candidates  # "incubate the cells": the one (else which) holding them
    if len(candidates) == 1:
        return candidates[0]
    named = [n for n in p.named if n in candidates]
    if len(named) == 1:  # the one plate the request names, in a clause before or after
        return named[0]
    working = [n for n in named if n in work_plates(world)]
    if len(working) == 1:  # ... leaving out the reservoirs it also names
        return working[0]
    raise Ask(f"Which plate should I {doing}?", ["plate"], candidates)


def _fits(place: Place, rows: int, cols: int) -> bool:
    try:
        return bool(place.wells and place.wells.expand(rows, cols))
    except ws.SelectionError:
        return False


_WHOLE_PLATE_VERB = re.compile(r"^(?:coat|block|fill|wash|rinse)\b(?!\s+up\b)", re.IGNORECASE)


def wells(
    place: Place, plate_id: str, p: Planning, what: str, frame: Frame | None = None
) -> list[str]:
    """The wells a place selects on a plate ('them': the wells of the clause before)."""
    lw = p.world.labware(plate_id)
    if place.wells is None:
        refers = frame is not None and frame.ents.refers_back
        if refers and p.plate == plate_id and p.wells:
            return list(p.wells)
        if lw.rows * lw.cols == 1:
            return ["A1"]
        if frame is not None and (lane := lane_well(frame.text, lw.rows, lw.cols)):
            return lane  # "trough 2", "the 2nd trough"
        if frame is not None and (
            _WHOLE_PLATE_VERB.match(frame.text) or _WHOLE_PLATE_VERB.match(frame.clause.label or "")
        ):
            # "Coat elisa_a with 100 uL ...": a plate coated, blocked or filled is every well
            return ws.WellSet((ws.Part("all"),), 0, 0, "").expand(lw.rows, lw.cols)
        raise Ask(f"Which wells of {plate_id} {what}?", ["wells"], ws.examples(lw.rows, lw.cols))
    try:
        found = restated.agreed(place.wells, lw.rows, lw.cols)
    except ws.SelectionError as exc:
        raise Refuse(f"{exc} ({plate_id} has {lw.rows * lw.cols} wells)", "plate_size") from exc
    if (
        {x.kind for x in place.wells.parts} in ({"rows"}, {"cols"})
        and p.head_dest == plate_id
        and (frame is None or heading_covers(frame, p))
    ):
        # "Standards (cols 1-2): ... diluent in B-H": those rows of the heading's columns
        found = [w for w in found if w in set(p.head_wells)] or found
    return found


def heading_covers(frame: Frame, p: Planning) -> bool:
    """Whether the last heading's wells still narrow ``frame``'s: a heading over the lines
    under it does, one said inline ("plate_1 row B: 30 uL buffer.") only in its own sentence
    (never "Then 100 uL buffer into plate_1 column 5": all of column 5, not B5)."""
    return not p.head_inline or frame.clause.sentence == p.head_sentence


def check_count(frame: Frame, plate_id: str, p: Planning) -> None:
    """'400 wells' on a 96-well plate is refused with the plate's size."""
    lw = p.world.labware(plate_id)
    count = frame.ents.well_count
    if count is not None and count > lw.rows * lw.cols:
        raise Refuse(f"{plate_id} has {lw.rows * lw.cols} wells, not {count}", "plate_size")


_GENERIC = re.compile(
    r"(?:the\s+|some\s+|that\s+|this\s+)?(?:stuff|reagents?|liquids?|solutions?|fluids?|materials?|"
    r"things?|something|whatever|substances?|contents?|it|mixture)",
    re.IGNORECASE,
)


# What a dilution's own steps call the liquid it dilutes, once its heading has named it.
_STOCK_WORD = re.compile(
    r"(?:the\s+)?(?:stock(?:\s+solution)?|compound|cmpd|drug|top\s+(?:standard|std)|neat)",
    re.IGNORECASE,
)


def liquid(m: Mention | None, p: Planning, what: str = "liquid") -> str:
    """The lab's name of a liquid mention; ask when the lab has none of it."""
    if m is None:
        raise Ask(f"Which {what}?", ["liquid"], liquids(p.world))
    known = p.world.liquids
    if m.name in known:
        if not m.sure:
            raise unsure(m, "liquid", liquids(p.world))
        return m.name
    found = p.lex.liquid(m.name)
    if found is not None and found.sure:
        return found.name
    partial = p.lex.named_by_word(m.name, p.world.liquids)
    if len(partial) == 1 and found is None:
        return partial[0]  # "antibody": the lab's one "detection antibody"
    if len(partial) > 1 and found is None:
        raise Ask(f"Which {m.name} do you mean?", ["liquid"], sorted(partial))
    if found is not None:
        raise unsure(Mention(found.name, 0, 0, m.written, False), "liquid", liquids(p.world))
    if p.stock is not None and _STOCK_WORD.fullmatch(m.name.strip()):
        return p.stock  # "serial dilution of CMPD-7 ...: 90 uL compound in A1": its stock
    if _GENERIC.fullmatch(m.name.strip()):  # "50 uL of the stuff": no liquid named at all
        raise Ask(f"Which liquid is '{m.name}'?", ["liquid"], liquids(p.world))
    raise Ask(
        f"There is no {m.name} in the lab: where should I take it from, or which liquid do "
        "you mean?",
        ["liquid", "source"],  # the question is about either
        liquids(p.world),
    )


def instrument(kind: str, p: Planning, frame: Frame | None = None) -> str:
    """The instrument of a kind the clause names, or the lab's only one; else ask or refuse."""
    world = p.world
    named = [i for k, i, _, _ in (frame.ents.instruments if frame else []) if i and k == kind]
    if named:
        return named[0]
    label, found = KIND_LABEL.get(kind, kind), world.lab.of_kind(kind)
    if not found:
        raise Refuse(lacks(kind, world), "missing_instrument")
    if len(found) > 1:
        raise Ask(f"Which {label}?", ["instrument"], [i.id for i in found])
    return found[0].id


def lacks(kind: str, world: World) -> str:
    """Why a request for an instrument kind the lab lacks is refused, naming what it has."""
    has = ", ".join(
        f"{i.id} ({KIND_LABEL.get(i.kind, i.kind)})"
        for i in world.lab.instruments.values()
        if i.kind != "liquid_handler"
    )
    return f"the lab has no {KIND_LABEL.get(kind, kind)}" + (
        f"; it has {has}: name one of them if it will do" if has else ""
    )


def place_of(instrument_id: str, world: World) -> str:
    """Where a plate goes to be used by an instrument: its drawer or holder."""
    inst = world.lab.instruments[instrument_id]
    suffix = "drawer" if inst.kind == "plate_reader" else "holder"
    return inst.location or f"{instrument_id}:{suffix}"


_POLICY_ARGS = {
    "wavelength_range_nm": {"wavelength": "wavelength_nm", "excitation": "excitation_nm",
                            "emission": "emission_nm"},
    "temperature_range_c": {"temperature": "celsius"},
    "rpm_range": {"speed": "rpm"},
    "block_range_c": {"block temperature": "celsius"},
    "lid_range_c": {"lid temperature": "lid_celsius"},
}  # fmt: skip


def within(
    value: float, key: str, instrument_id: str | None, world: World, what: str, unit: str
) -> None:
    """Refuse a value the lab's policy forbids (policy_limit), then one outside the
    instrument's physical range or the defaults (capacity)."""
    inst = world.lab.instruments.get(instrument_id) if instrument_id else None
    arg = _POLICY_ARGS.get(key, {}).get(what)
    for rule in inst.policy if inst and arg else []:
        high = rule.get("max") is not None and value > float(rule["max"])
        low = rule.get("min") is not None and value < float(rule["min"])
        if (
            rule.get("type") == "limit"
            and rule.get("arg") == arg
            and rule.get("verdict", "DENY") == "DENY"
            and (high or low)
        ):
            raise Refuse(
                f"{what} {fmt(round(value, 3), unit)}: the lab's policy forbids it — "
                f"{rule.get('reason') or rule.get('id')}",
                "policy_limit",
            )
    limits = world.lab.instruments[instrument_id].limits if instrument_id else {}
    lo, hi = limits.get(key, DEFAULT_LIMITS[key])
    if not lo <= value <= hi:
        owner = f"{instrument_id}'s" if instrument_id else "the"
        raise Refuse(
            f"{what} {fmt(round(value, 3), unit)} is outside {owner} range "
            f"{fmt(lo, unit)} to {fmt(hi, unit)}",
            "capacity",
        )


def quantity(
    q: Quantity | None, frame: Frame, question: str, missing: str, options: list[str] | None = None
) -> float:
    """A stated quantity's value, or a question that says why it cannot be used."""
    if q is not None:
        return q.value
    ents = frame.ents
    if ents.vague:
        raise Ask(f"'{ents.vague}' is not a number I can use. {question}", [missing], options or [])
    if ents.bare:
        raise Ask(f"'{ents.bare[0]}' has no unit. {question}", [missing], options or [])
    raise Ask(question, [missing], options or [])


def positive_volume(value: float, text: str) -> float:
    if value == 0:
        raise Refuse(f"{text or '0 uL'} moves nothing: there is nothing to do", "nothing_to_do")
    if value < 0:
        raise Refuse(
            f"{text} is not a volume that can be pipetted: it must be more than 0 uL", "capacity"
        )
    return value
