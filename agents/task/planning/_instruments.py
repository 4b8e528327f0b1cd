"""Instrument families: incubate/shake on a heater-shaker, read in a plate reader, move a plate.

The world inserts the moves between them (drawer opened and closed around the reader, the
heater-shaker unlocked before the arm reaches in). A heater-shaker here has no timed hold
without shaking, so an incubation needs a stated shaking speed; the planner asks for one
rather than pick a speed.
"""

from __future__ import annotations

import re

from agents.task.planning import _resolve as r
from agents.task.planning._grammar import IncubateIntent, Lexicon, MoveIntent, ReadIntent, Target
from agents.task.planning._outcomes import Ask, Refuse
from agents.task.planning._units import fmt, fmt_duration
from agents.task.planning._wells import expand
from agents.task.planning._world import World

_HOME_WORDS = re.compile(
    r"^(?:(?:the|its|their)\s+)?(?:home|deck|deck slot|slot|place|liquid handler|lh)?$", re.I
)
_READER = re.compile(r"\b(?:plate\s+)?reader\b", re.I)
_HS = re.compile(r"\b(?:heater[\s-]?shaker|shaker|incubator)\b", re.I)
_NAME = re.compile(r"[\w\-]+")
_SLOT = re.compile(r"^(?:the\s+)?([a-z][\w\-]*)\s*(?:slot|position|:)?\s*(\d+)$", re.I)


def incubate(intent: IncubateIntent, world: World, ctx: r.Context) -> str:
    """Heat and/or shake a plate on a heater-shaker, then stop and unlock it."""
    hs = r.instrument("heater_shaker", intent.target, world)
    plate = r.plate(intent.target, world, ctx, intent.verb)
    celsius = None
    if intent.temperature is not None or not intent.shaking or intent.bare:
        celsius = r.quantity(intent.temperature, intent, "At what temperature (C)?", "temperature")
        r.within(celsius, "temperature_range_c", hs, world, "temperature", "C")
    seconds = r.quantity(
        intent.duration, intent, f"For how long should I {intent.verb} {plate}?", "duration"
    )
    r.within(seconds, "duration_range_s", None, world, "duration", "s")
    lo, hi = world.lab.instruments[hs].limits.get("rpm_range", r.DEFAULT_LIMITS["rpm_range"])
    speeds = [f"{lo:g}-{hi:g} rpm"]
    if intent.speed is None and intent.shaking:
        r.quantity(None, intent, f"At what speed (rpm) should I shake {plate}?", "speed", speeds)
    if intent.speed is None:
        raise Ask(
            f"{hs} has no timed hold without shaking: at what speed (rpm) should it shake "
            f"{plate} for the {fmt_duration(seconds)} at {fmt(celsius or 0, 'C')}?",
            ["speed"],
            speeds,
        )
    rpm = intent.speed.value
    r.within(rpm, "rpm_range", hs, world, "speed", "rpm")
    if rpm != int(rpm):
        raise Refuse(f"a shaking speed is a whole number of rpm, not {rpm:g}")
    if celsius is not None:
        world.emit(hs, "set_temperature", {"celsius": celsius}, {"target_c": celsius})
    world.bring(plate, r.place_of(hs, world))
    world.lock_plate(hs)
    if celsius is not None:
        world.emit(hs, "wait_for_temperature", {}, {"temperature_c": celsius})
    shaken = {"plate": plate, "rpm": int(rpm), "duration_s": seconds}
    world.emit(hs, "shake", {"rpm": int(rpm), "duration_s": seconds}, {"shaken": shaken})
    world.emit(hs, "stop", {}, {"shaking": False, "target_c": None})
    world.unlock(hs)
    ctx.plate = plate
    heat = f" at {fmt(celsius, 'C')}" if celsius is not None else ""
    return f"{intent.verb} {plate} on {hs}{heat} for {fmt_duration(seconds)} at {int(rpm)} rpm"


def read(intent: ReadIntent, world: World, ctx: r.Context) -> str:
    """Read one or more plates in the reader, in one or more modes."""
    reader = r.instrument("plate_reader", intent.target, world)
    modes = ["absorbance", "fluorescence", "luminescence"]
    if not intent.modes:
        raise Ask("What should I read: absorbance, fluorescence or luminescence?", ["mode"], modes)
    plates = r.plate_list(intent.target, world, ctx, "read")
    settings = {mode: _optics(mode, intent, reader, world) for mode in intent.modes}
    done = []
    for plate in plates:
        lw = world.labware(plate)
        wells = (
            expand(intent.target.selection, lw.rows, lw.cols) if intent.target.selection else None
        )
        world.bring(plate, r.place_of(reader, world))
        if world.drawer.get(reader) != "closed":
            world.close_drawer(reader, plate)
        for mode, optics in settings.items():
            args = {"plate": plate, **optics, **({"wells": wells} if wells else {})}
            count = len(wells) if wells else lw.rows * lw.cols
            reading = {"plate": plate, "mode": mode, "wells": count}
            world.emit(reader, f"read_{mode}", args, {"reading": reading})
        done.append(plate)
    ctx.plate = plates[-1]
    what = ", ".join(f"{m}{_describe(o)}" for m, o in settings.items())
    return f"read {what} of {', '.join(done)} in {reader}"


def _band(reader: str, world: World) -> list[str]:
    lo, hi = world.lab.instruments[reader].limits.get(
        "wavelength_range_nm", r.DEFAULT_LIMITS["wavelength_range_nm"]
    )
    return [f"{lo:g}-{hi:g} nm"]


def _describe(optics: dict[str, int]) -> str:
    if "wavelength_nm" in optics:
        return f" at {optics['wavelength_nm']} nm"
    if optics:
        return f" ex {optics['excitation_nm']} / em {optics['emission_nm']} nm"
    return ""


def _optics(mode: str, intent: ReadIntent, reader: str, world: World) -> dict[str, int]:
    def nm(value: float, what: str) -> int:
        r.within(value, "wavelength_range_nm", reader, world, what, "nm")
        if value != int(value):
            raise Refuse(f"{what} must be a whole number of nm, not {value:g}")
        return int(value)

    if mode == "absorbance":
        stated = intent.od or (intent.wavelengths[0].value if intent.wavelengths else intent.at_nm)
        if stated is None:
            raise Ask(
                "At what wavelength (nm) should I read absorbance?", ["wavelength"], ["600 nm"]
            )
        return {"wavelength_nm": nm(stated, "wavelength")}
    if mode == "fluorescence":
        if intent.excitation is None or intent.emission is None:
            raise Ask(
                "At what excitation and emission wavelengths (e.g. excitation 485 nm emission "
                "520 nm)?",
                ["excitation", "emission"],
                _band(reader, world),
            )
        ex, em = nm(intent.excitation, "excitation"), nm(intent.emission, "emission")
        if em <= ex:
            raise Refuse(f"emission ({em} nm) must be longer than excitation ({ex} nm)")
        return {"excitation_nm": ex, "emission_nm": em}
    return {}


def move(intent: MoveIntent, world: World, ctx: r.Context, lex: Lexicon) -> str:
    """Move plates to an instrument, a workspace location or back to their deck slot."""
    done = []
    for plate in r.plate_list(intent.target, world, ctx, "move"):
        where = destination(intent.destination, plate, world, lex)
        world.bring(plate, where)
        done.append(f"{plate} to {where}")
        ctx.plate = plate
    return "move " + ", ".join(done)


def destination(text: str, plate: str, world: World, lex: Lexicon) -> str:
    """The location a move phrase names."""
    spot = text.strip()
    if _HOME_WORDS.match(spot):
        return world.labware(plate).home
    target = Target(
        instruments=[
            lex.instruments[t.lower()] for t in _NAME.findall(spot) if t.lower() in lex.instruments
        ]
    )
    for inst in target.instruments:
        kind = world.lab.instruments[inst].kind
        if kind in ("plate_reader", "heater_shaker"):
            return r.place_of(inst, world)
        if kind == "liquid_handler" and world.labware(plate).instrument == inst:
            return world.labware(plate).home
        raise Refuse(f"a plate cannot be moved onto {inst}")
    if _READER.search(spot):
        return r.place_of(r.instrument("plate_reader", target, world), world)
    if _HS.search(spot):
        return r.place_of(r.instrument("heater_shaker", target, world), world)
    places = world.lab.mover_locations
    by_name = {p.lower(): p for p in places}
    if spot.lower() in by_name:
        return by_name[spot.lower()]
    if (m := _SLOT.match(spot)) and f"{m.group(1)}:{m.group(2)}".lower() in by_name:
        return by_name[f"{m.group(1)}:{m.group(2)}".lower()]
    group = [p for p in places if p.lower().startswith(spot.lower().removeprefix("the ") + ":")]
    free = [p for p in group if world.occupant(p) is None] or group
    options = (
        free
        or places
        or [
            r.place_of(i.id, world)
            for i in world.lab.instruments.values()
            if i.kind in ("plate_reader", "heater_shaker")
        ]
    )
    question = (
        f"Which {spot} slot should {plate} go to?"
        if group
        else f"Where should {plate} go? '{spot}' is not a place I know."
    )
    raise Ask(question, ["location"], options)
