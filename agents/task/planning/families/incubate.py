"""Incubate or shake a plate on the heater-shaker: at a temperature, for a time, at a speed.

Shaking is asked for by the verb ("shake", "agitate") or by a speed or "with shaking"; an
incubation without shaking holds the plate at the temperature (the heater-shaker's ``hold``).
"Room temperature" means no heating. The world moves the plate there (the holder unlocked
before the arm reaches in) and the plate is locked for shaking, then unlocked.
"""

from __future__ import annotations

import re

from agents.task.planning import _resolve as r
from agents.task.planning._clauses import Clause
from agents.task.planning._entities import Entities
from agents.task.planning._frames import Frame
from agents.task.planning._outcomes import Ask, Refuse
from agents.task.planning._quantities import fmt, fmt_duration
from agents.task.planning.families import Family, thermocycle
from agents.task.planning.families._cycler_hold import cycler_only, fits_block

_FLAGS = re.IGNORECASE
_VERB = re.compile(
    r"^(?:shake|incubate|heat|warm|agitate|hold|keep|leave|let|rest|sit|wait|cool|chill|"
    r"develop|equilibrate|allow|(?:air[\s-]?)?dry(?=\s+(?:for\s+)?\d)|"
    r"orbital|vortex|spin\s+on\s+the\s+shaker|put\s+(?:it|the\s+plate)\s+on\s+the\s+shaker|"
    r"(?:an?\s+)?(?:(?:quick|brief|short|gentle|good|vigorous)\s+)?(?:incubation|shake))\b",
    _FLAGS,
)
_SHAKING = re.compile(
    r"\b(?<!without\s)(?<!no\s)(?:shak(?:e|ing|en)|agitat\w*|orbital|vortex\w*)\b|(?<![a-z])rpm\b"
    r"|(?<!heater[\s-])(?<!heater)\b(?P<noun>shaker)\b",
    _FLAGS,
)
_NO_SHAKE = re.compile(r"\b(?:without|no|don'?t|do\s+not)\s+shak\w*|\bstatic\b|\bstill\b", _FLAGS)
# "Incubate 5 min at 37 C on the shaker": the verb says how, "the shaker" only where (as
# "on the heater-shaker" does); "put plate_1 on the shaker for 5 min" is shaking.
_STILL_VERB = re.compile(
    r"^(?:incubate|heat|warm|hold|keep|cool|chill|equilibrate|sit|stand|rest"
    r"|let\s+(?:it|them|the\s+plates?|[\w-]+)\s+(?:sit|stand|rest))\b",
    _FLAGS,
)


def _shaking(text: str) -> bool:
    """Whether ``text`` asks for shaking, not only for the shaker's heat."""
    if _NO_SHAKE.search(text):
        return False
    cues = list(_SHAKING.finditer(text))
    if cues and all(m.group("noun") for m in cues) and _STILL_VERB.match(text):
        return False
    return bool(cues)


# Verbs that say the plate is to be held at a temperature (not shaken): the open thing is which
_HEATS = re.compile(
    r"^(?:incubat\w*|heat\w*|warm\w*|cool\w*|chill\w*|hold|keep|equilibrate|an?\s+incubation)\b",
    _FLAGS,
)
_ROOM = re.compile(r"\b(?:room\s+temp(?:erature)?|rt|ambient)\b", _FLAGS)


_PUT_ON = re.compile(
    r"^(?:put|place|set|leave|pop|stick|slide|sit|take|bring|move|carry|send)\s+(?:it|them|the\s+[\w-]+|[\w-]+)"
    r"\s+(?:on|onto|in|to|into)\s+(?:the\s+)?"
    r"(?:heater[\s-]?shaker|shaker|thermo[\s-]?shaker|[\w-]+)\b",
    _FLAGS,
)


_SHAKE_AS = re.compile(
    r"^(?:give\s+(?:it|them|the\s+plate|[\w-]+)\s+an?\s+(?:\w+\s+)?shake\b"
    r"|mix\b(?=.*\b(?:on\s+the\s+(?:heater[\s-]?)?shaker|\d+\s*rpm)\b))",
    _FLAGS,
)


# "pre-warm the heater shaker to 37 C", "set the thermomixer to 37 C": no plate, the
# temperature of the incubation that follows.
_PREHEAT = re.compile(
    r"^(?:pre-?(?:warm|heat)|set|heat(?:\s+up)?|warm(?:\s+up)?|bring)\s+(?:up\s+)?(?:the\s+)?"
    r"(?:heater[\s-]?shaker|shaker|thermo[\s-]?(?:mixer|shaker)|[a-z]+\d*)\s+(?:up\s+)?to\b",
    _FLAGS,
)


def detect(clause: Clause, ents: Entities) -> int | None:
    text = ents.text
    if (
        _PREHEAT.match(text)
        and not (ents.labware or ents.liquids)
        and ents.quantities
        and not ents.volumes()
    ):
        return 62
    if _SHAKE_AS.match(text) and not ents.volumes() and not ents.wellsets:
        return 60  # "give plate_1 a quick shake", "mix plate_1 on the shaker at 600 rpm"
    if (
        _PUT_ON.match(text)
        and (
            any(q.kind in ("duration", "temperature", "speed") for q in ents.quantities)
            or ents.vague
        )
        and any(kind == "heater_shaker" for kind, *_ in ents.instruments)
    ):
        return 55  # "put plate_1 on the shaker for 5 min" / "at 600 rpm": shaking, not a move
    if _VERB.match(text):
        return 50
    if _plate_on_shaker(ents):
        return 55  # "elisa_P2 on the bioshake for 5 min", "P -> thermomixer, 700 rpm"
    if re.match(r"^(?:hold|keep|store)\b", text, re.IGNORECASE) and any(
        q.kind == "temperature" for q in ents.quantities
    ):
        return 50  # "hold libs at 4 C": at a temperature, for how long is the question
    kinds = {q.kind for q in ents.quantities}
    timed = "duration" in kinds or re.match(
        r"overnight|a while|a bit|a moment|briefly", ents.vague or "", _FLAGS
    )
    if timed and ({"temperature", "speed"} & kinds or _ROOM.search(text)) and not ents.volumes():
        return 35
    return None


def _plate_on_shaker(ents: Entities) -> bool:
    """A clause that opens with a plate and puts it on the heater-shaker with a setting (a
    time, a temperature or a speed) and no liquid: an incubation there, not a move."""
    return (
        bool(ents.labware)
        and ents.labware[0].start == 0
        and any(kind == "heater_shaker" for kind, *_ in ents.instruments)
        and any(q.kind in ("duration", "temperature", "speed") for q in ents.quantities)
        and not (ents.volumes() or ents.wellsets)
    )


# "on the plate reader", "in reader1", "using the liquid handler": where the person puts it
_ON = re.compile(r"\b(?:on|in|inside|using|with|via)\s+(?:the\s+|our\s+)?(?:plate\s+)?$", _FLAGS)
_CANNOT = {"plate_reader", "plate_mover", "liquid_handler"}
_DOORS = {"open_drawer", "close_drawer", "open_lid", "close_lid"}  # a move's own, not a read's


def _named_elsewhere(frame: Frame, p: r.Planning) -> None:
    """Refuse an incubation put on an instrument that neither heats nor shakes ("heat plate_1
    on the plate reader"): never done on the heater-shaker instead without a word."""
    said = [(k, i, a, b) for k, i, a, b in frame.ents.instruments if k in _CANNOT]
    if any(k == "heater_shaker" for k, *_ in frame.ents.instruments) or not said:
        return
    for kind, inst, a, b in said:
        written = frame.ents.text[a:b]
        if not _ON.search(frame.ents.text[:a]) or re.fullmatch(r"robot|deck", written, _FLAGS):
            continue  # "the robot" is the whole bench
        label = r.KIND_LABEL.get(kind, kind)
        has = [
            f"{i.id} ({r.KIND_LABEL.get(i.kind, i.kind)})"
            for i in p.world.lab.of_kind("heater_shaker")
        ]
        raise Refuse(
            f"the {label}{' ' + inst if inst else ''} cannot heat, cool or shake a plate"
            + (f"; {', '.join(has)} can: name it if it will do" if has else ""),
            "missing_instrument",
        )


def _just_put(frame: Frame, p: r.Planning) -> None:
    """Refuse an incubation told right after moving the plate onto an instrument that cannot
    heat ("move plate_1 to the plate reader and incubate at 37 C"): it is to happen there, and
    carrying the plate off to the heater-shaker would undo the move the person asked for."""
    steps = p.world.steps
    at = next((i for i in range(len(steps) - 1, -1, -1) if steps[i].command == "move_plate"), None)
    if at is None or frame.ents.instruments:
        return
    inst = str(steps[at].args.get("to_location", "")).split(":")[0]
    kind = getattr(p.world.lab.instruments.get(inst), "kind", None)
    if kind not in _CANNOT or any(s.command not in _DOORS for s in steps[at + 1 :]):
        return
    has = [
        f"{i.id} ({r.KIND_LABEL.get(i.kind, i.kind)})" for i in p.world.lab.of_kind("heater_shaker")
    ]
    raise Refuse(
        f"{steps[at].args.get('plate')} was just put in the {r.KIND_LABEL.get(kind, kind)} {inst}, "
        "which cannot heat, cool or shake a plate"
        + (f"; {', '.join(has)} can: name it if the plate should go there" if has else ""),
        "missing_instrument",
    )


def build(frame: Frame, p: r.Planning) -> str:
    world, text = p.world, frame.text
    _named_elsewhere(frame, p)
    _just_put(frame, p)
    hs = r.instrument("heater_shaker", p, frame)
    named = frame.ents.labware or frame.ents.liquids  # "warm the buffer to 37 C" is no pre-warm
    if _PREHEAT.match(text) and not named and frame.temperature is not None:
        target = frame.temperature.value
        r.within(target, "temperature_range_c", hs, world, "temperature", "C")
        world.emit(hs, "set_temperature", {"celsius": target}, {"target_c": target})
        p.heater_c = target
        return f"pre-warm {hs} to {fmt(target, 'C')}"
    plate = r.labware(
        frame.head
        if not frame.head.empty
        else (frame.dest if not frame.dest.empty else frame.source),
        p,
        "incubate",
        holding=frame.liquid.name if frame.liquid else None,
    )
    shaking = _shaking(text)
    verb = "shake" if shaking else "incubate"
    celsius: float | None = None
    if frame.temperature is not None:
        celsius = frame.temperature.value
    elif p.heater_c is not None and not _ROOM.search(text):
        celsius = p.heater_c  # the temperature it was pre-warmed to
    elif _ROOM.search(text):
        celsius = None
    elif not shaking and not re.match(
        r"^(?:let|leave|rest|sit|wait|develop|allow|(?:air[\s-]?)?dry)\b", text, _FLAGS
    ):
        if frame.speed is None and not _HEATS.match(text):  # "P on the thermomixer, 5 min"
            raise Ask(
                f"Should {plate} be heated on {hs} (to what temperature) or shaken (at what "
                "speed, rpm)?",
                ["temperature", "speed"],
            )
        celsius = r.quantity(
            None, frame, f"At what temperature should I incubate {plate}?", "temperature"
        )
    elif frame.ents.bare and re.search(r"\bat\s+\d+(?:\.\d+)?\s*(?:for|$|,)", text, _FLAGS):
        celsius = r.quantity(None, frame, "At what temperature (C)?", "temperature")
    if (
        celsius is not None
        and not shaking
        and not frame.ents.instruments
        and fits_block(plate, world)
        and cycler_only(celsius, hs, world)
    ):  # "incubate rxn_plate at 95 C for 10 min": only the cycler's block reaches it
        return thermocycle.build(thermocycle._as_profile(frame), p)
    if celsius is not None:
        r.within(celsius, "temperature_range_c", hs, world, "temperature", "C")
    if frame.temperature is not None and not shaking and not frame.ents.instruments:
        _which_block(plate, frame.temperature.value, hs, p)
    if shaking and frame.speed is not None:
        r.within(frame.speed.value, "rpm_range", hs, world, "speed", "rpm")  # before asking more
    seconds = r.quantity(
        frame.duration, frame, f"For how long should I {verb} {plate}?", "duration"
    )
    r.within(seconds, "duration_range_s", None, world, "duration", "s")
    rpm = None
    if shaking:
        lo, hi = world.lab.instruments[hs].limits.get("rpm_range", r.DEFAULT_LIMITS["rpm_range"])
        rpm = r.quantity(
            frame.speed,
            frame,
            f"At what speed (rpm) should I shake {plate}?",
            "speed",
            [f"{lo:g}-{hi:g} rpm"],
        )
        r.within(rpm, "rpm_range", hs, world, "speed", "rpm")
        if rpm != int(rpm):
            raise Refuse(f"a shaking speed is a whole number of rpm, not {rpm:g}", "capacity")
    elif frame.speed is not None:
        raise Ask(
            f"Should {plate} be shaken at {frame.speed.text}, or held still?",
            ["mode"],
            ["shake", "hold still"],
        )
    if celsius is not None:
        world.emit(hs, "set_temperature", {"celsius": celsius}, {"target_c": celsius})
    world.bring(plate, r.place_of(hs, world))
    if shaking:
        world.lock_plate(hs)
    if celsius is not None:
        world.emit(hs, "wait_for_temperature", {}, {"temperature_c": celsius})
    if shaking:
        shaken = {"plate": plate, "rpm": int(rpm), "duration_s": seconds}  # type: ignore[arg-type]
        world.emit(hs, "shake", {"rpm": int(rpm), "duration_s": seconds}, {"shaken": shaken})  # type: ignore[arg-type]
    else:
        world.emit(
            hs, "hold", {"duration_s": seconds}, {"held": {"plate": plate, "duration_s": seconds}}
        )
    world.emit(hs, "stop", {}, {"shaking": False, "target_c": None})
    if shaking:
        world.unlock(hs)
    p.plate = plate
    heat = f" at {fmt(celsius, 'C')}" if celsius is not None else " unheated"
    speed = f" at {int(rpm)} rpm" if rpm is not None else " without shaking"  # type: ignore[arg-type]
    return f"{verb} {plate} on {hs}{heat} for {fmt_duration(seconds)}{speed}"


FAMILY = Family("incubate", detect, build)


def _which_block(plate: str, celsius: float, hs: str, p: r.Planning) -> None:
    """A PCR plate held warm, with no instrument named, where the lab's thermocycler could
    hold it as well as the heater-shaker: which one is asked, never picked."""
    world = p.world
    cyclers = [i.id for i in world.lab.of_kind("thermocycler")]
    view = world.labware(plate)
    pcr = view.rows * view.cols == 96 and view.well_max_volume_ul <= 250  # fits a 96 block
    if not cyclers or celsius <= 30 or not pcr:
        return
    raise Ask(
        f"Should I hold {plate} at {fmt(celsius, 'C')} on the heater-shaker {hs} or in the "
        f"thermocycler {cyclers[0]}?",
        ["instrument"],
        [hs, *cyclers],
    )
