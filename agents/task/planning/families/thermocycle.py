"""Thermocycling ("run 35 cycles of 95 C for 15 s, 60 C for 30 s on plate_1, then hold at
4 C") and the other instruments a request may name: a magnet, a centrifuge, a sealer, a washer.

A profile is stages of steps (a temperature held for a time); a stage repeats when the request
says so ("35 cycles of 95 C for 15 s, 60 C for 30 s", "(95 C 15 s, 60 C 30 s) x 35").
Words such as "initial", "final" or "followed by" start a new stage; a clause after "then" that
holds only temperatures and times ("then 72 C for 5 min") continues the profile, and "hold at
4 C" after it keeps the block at 4 C (both joined to the profile by the compose stage). The plan
brings the plate to the thermocycler's block (its station opens the lid), closes the lid, runs
the profile and sets the hold. A temperature, time or cycle count the request does not give is
never picked: the planner asks. A lab without the instrument gets a refusal that says so.
"""

from __future__ import annotations

import re
from typing import Any

from agents.task.planning import _resolve as r
from agents.task.planning._clauses import Clause
from agents.task.planning._entities import Entities
from agents.task.planning._frames import Frame, read
from agents.task.planning._outcomes import Ask, Refuse
from agents.task.planning._quantities import fmt, fmt_duration
from agents.task.planning.families import Family
from agents.task.planning.families import _profile as prof
from agents.task.planning.families._cycling_words import CYCLING as _CYCLING
from agents.task.planning.families._cycling_words import NAMED as _NAMED
from agents.task.planning.families._cycling_words import THERMO as _THERMO
from agents.task.planning.families._other_work import OTHER
from agents.task.planning.families._programme_parts import (
    HOLD,
    continues,
    hold_text,
    is_continuation,
    is_hold,
    part_before,
    part_text,
    programme_only,
    timed_only,
)
from agents.task.planning.families._stages import Stage

_FLAGS = re.IGNORECASE
MAX_REPEATS = 200


def is_profile(text: str) -> bool:
    """A clause that names a profile: a thermocycling word and a temperature held for a time."""
    return bool(_THERMO.search(text)) and bool(prof.steps(text))


_FOLLOWING = re.compile(
    r"\b(?:run|do|perform|use|start|set\s+up)\b.*\b(?:(?:the\s+)?following|as\s+follows|"
    r"this\s+(?:program(?:me)?|profile|protocol|cycling))\b",
    _FLAGS,
)


_RUN_VERB = re.compile(
    r"^(?:please\s+)?(?:now\s+)?(?:run|start)\b", _FLAGS
)  # "run X in the cycler"
_IT = re.compile(r"^(?:please\s+)?(?:now\s+)?cycle\s+(?:it|them|the\s+plate)\b", _FLAGS)
_CYCLE_VERB = re.compile(
    r"^(?:please\s+)?(?:now\s+)?(?:cycle\s+(?!\d)|(?:run|do|perform)\s+\d{1,3}\s+cycles\b)", _FLAGS
)
_TIMES = re.compile(r"\b(?:\d{1,3}|twice)\s*(?:times|x)\b|\bx\s*\d{1,3}\b", _FLAGS)
_MOVE_ONLY = re.compile(
    r"^(?:move|put|place|load|bring|send|take|transfer|return|carry|transport)\b", _FLAGS
)


def detect(clause: Clause, ents: Entities) -> int | None:
    text = ents.text + (f" ({clause.label})" if clause.label else "")
    if is_profile(text):
        return 80
    named = any(kind == "thermocycler" for kind, *_ in ents.instruments)
    if prof.steps(text) and (named or prof.CYCLED.search(text)):
        return 80  # "rxn_plate at 65 C for 20 min on tc1", "25 rounds of 94 C 20 s, ..."
    timed = prof.steps(text)
    if len({c for *_, c, _ in timed}) >= 2 and _TIMES.search(text) and not ents.volumes():
        return 80  # "95 C 15 s and 60 C 1 min, 40 times"
    if any(rx.search(text) for rx, _, code in _CANNOT if code != "policy_limit"):
        return 76  # "then a melt curve 65-95 C": the thermocycler's, refused for what it is
    if HOLD.match(text) and named and prof.hold_of(text) is not None:
        return 78  # "keep rt_plt at 4 C in the cycler"
    if (
        _MOVE_ONLY.match(text)
        and not (prof.CYCLED.search(text) or ents.quantities)
        and not any(rx.search(text) for rx in OTHER.values())
    ):
        return None  # "move q384 to the thermocycler": a move, no programme asked
    if _CYCLING.search(text) and (
        any(q.kind == "temperature" for q in ents.quantities)
        or _NAMED.search(text)
        or re.search(r"\bprogram(?:me)?\b|\bmethod\b", text, _FLAGS)
    ):
        return 75
    if (_CYCLE_VERB.match(text) and (ents.labware or _IT.match(text))) or (
        named and _RUN_VERB.match(text)
    ):
        return 75  # "cycle qpcr_rxn" over the programme's steps; "Run 35 cycles on X": which?
    if prof.lid_of(text) is not None or (
        _FOLLOWING.search(text) and (named or _NAMED.search(text) or "lid" in text.lower())
    ):
        return 78  # "lid temperature 105 C; ...", "run the following on rxn_plate (lid 103 C)"
    if any(rx.search(text) for rx in OTHER.values()):
        return 74
    if programme_only(text, ents):
        return 77  # "RT: 25 C 10 min, 50 C 10 min, 85 C 5 min, hold at 4 C forever"
    return None


# What a programme of temperatures, times and cycles cannot be: refused with the reason.
_CANNOT = (
    (
        re.compile(
            r"\bramp(?:ing)?(?:\s+(?:rate|speed))?\b[^,;]*?\d\s*(?:C|degrees?)?\s*/\s*s", _FLAGS
        ),
        "the thermocycler runs temperatures, times and cycles: it takes no ramp rate",
        "capacity",
    ),
    (
        re.compile(r"\bmelt(?:ing)?[\s-]*curve|\bdissociation\s+curve|\bhrm\b", _FLAGS),
        "a melt curve reads the plate while the block ramps: the lab has no real-time "
        "(qPCR) instrument, only a thermocycler and a separate reader",
        "missing_instrument",
    ),
    (
        re.compile(r"\bgradient\b", _FLAGS),
        "the thermocycler holds one temperature across its block: it runs no gradient",
        "capacity",
    ),
    (
        re.compile(
            r"\blid\s+(?:off|open)\b|\b(?:without|no)\s+(?:the\s+|a\s+)?(?:heated\s+)?lid\b"
            r"|\bopen[\s-]lid\b",
            _FLAGS,
        ),
        "a profile runs with the lid closed: with it open the samples evaporate",
        "policy_limit",
    ),
)


def require(frame: Frame, p: r.Planning) -> None:
    """Refuse, before anything else is planned, what needs an instrument the lab lacks."""
    text = frame.text
    for kind, rx in OTHER.items():
        if rx.search(text) and not _CYCLING.search(text):
            if not p.world.lab.of_kind(kind):
                raise Refuse(r.lacks(kind, p.world), "missing_instrument")  # names what it has
            raise Refuse(
                f"planning for the {r.KIND_LABEL.get(kind, kind)} is not supported yet",
                "missing_instrument",
            )
    r.instrument("thermocycler", p, frame)  # refuses when the lab has none
    text = _profile_text(frame)
    for rx, why, code in _CANNOT:
        if rx.search(text):
            raise Refuse(why, code)


def has_programme(frame: Frame) -> bool:
    """A thermocycling clause that carries a programme (its own steps, parts joined to it or a
    hold), never a mere heading ("rxn_plate - 95 C 15 s, 60 C 1 min - 40 cycles - hold 4 C")."""
    return bool(frame.extra.get("continued") or frame.extra.get("hold") or prof.steps(frame.text))


def _profile_text(frame: Frame) -> str:
    """The clause and the clauses compose joined to it ('then 72 C 5 min', 'hold at 4 C')."""
    more, first = frame.extra.get("continued"), frame.extra.get("preceding")
    parts = [part_text(c) for c in first] if isinstance(first, list) else []
    own = part_text(frame.clause)
    parts += [own if own.endswith(frame.text) else frame.text]
    parts += [part_text(c) for c in more] if isinstance(more, list) else []
    held = frame.extra.get("hold")
    parts += [hold_text(held)] if isinstance(held, Clause) else []
    joined: list[str] = []
    for i, part in enumerate(parts):  # "35 cycles of:" then one step a line: its steps
        bare = _BARE_STEP.match(part)
        head = joined and _COUNT_HEAD.search(joined[-1])
        if head and not head["of"] and not _BARE_STEP.match(([*parts, ""])[i + 1]):
            bare = None  # "30 cycles, then 72 C 5 min": one step after a bare count is not its own
        if bare and joined and (head or joined[-1].endswith(",")):
            joined[-1] = joined[-1].rstrip(" ,") + (" " if _COUNT_HEAD.search(joined[-1]) else ", ")
            joined[-1] += part.strip() + ","
        else:
            joined.append(part)
    return "; then ".join(j.rstrip(",") for j in joined)


_COUNT_HEAD = re.compile(rf"\b{prof.COUNT_N}\s*(?:x|×|cycles?)\s*(?P<of>of|:)?\s*:?\s*$", _FLAGS)
_BARE_STEP = re.compile(r"^\s*-?\d+(?:\.\d+)?\s*C\b[^a-zA-Z]*(?:s|sec|min|h)\b\W*$", _FLAGS)


def _checked(profile: prof.Profile, tc: str, world: r.World) -> None:
    """Refuse a step, count, lid or hold the lab's rules or the block's range forbid."""
    for stage in profile.stages:
        if stage.repeats < 1 or stage.repeats > MAX_REPEATS:
            raise Refuse(
                f"{stage.repeats} cycles: a stage repeats 1 to {MAX_REPEATS} times", "capacity"
            )
        for celsius, seconds in stage.steps:
            r.within(celsius, "block_range_c", tc, world, "block temperature", "C")
            if seconds <= 0:
                raise Refuse(
                    f"a hold of {fmt_duration(seconds)} is not a step of a profile", "capacity"
                )
    if profile.lid_c is not None:
        r.within(profile.lid_c, "lid_range_c", tc, world, "lid temperature", "C")
    if profile.hold_c is not None:
        r.within(profile.hold_c, "block_range_c", tc, world, "block temperature", "C")


_OTHER_STEP = re.compile(
    r"(?<=\s)(?:read|measure|shake|park|unload|stash|transfer|dispense|incubate|move|put\s+it"
    r"|take\s+it)\b",
    _FLAGS,
)


def _unplanned(frame: Frame) -> None:
    """Ask about another step told inside the programme's clause ("... and park it in the
    hotel when finished: 94 C 2 min, ..."): a profile never silently drops it."""
    names = [(m.start, m.end) for m in frame.ents.labware + frame.ents.liquids]
    for m in _OTHER_STEP.finditer(frame.text):
        if not any(a <= m.start() < b for a, b in names):
            raise Ask(
                f"I read a thermocycling programme in '{frame.clause.said}' but not the step "
                f"'{frame.text[m.start() :]}' inside it. Could you say that step on its own, "
                "after the programme?",
                ["action"],
            )


def _cycles_own_steps(stages: list[Stage]) -> None:
    """Ask which steps a count told after one step repeats ("95 C 3 min, 30 cycles, 72 C 5
    min"): one hold repeated is a longer hold, so the count came without its own steps."""
    for st in stages:
        if st.borrowed and st.repeats > 1 and len(st.steps) == 1 and not st.deltas:
            raise Ask(
                f"I read {st.repeats} cycles but not the steps they repeat. Which steps "
                f"(temperatures and times) should each of the {st.repeats} cycles run?",
                ["temperature", "duration"],
            )


def build(frame: Frame, p: r.Planning) -> str:
    """Bring the plate onto the block, close the lid, run the profile (then the hold)."""
    require(frame, p)
    _unplanned(frame)
    world = p.world
    tc = r.instrument("thermocycler", p, frame)
    profile = prof.parse(_profile_text(frame))
    if profile.lid_c is None and frame.clause.label:
        profile.lid_c = prof.parse(frame.clause.label).lid_c  # "Cycling (heated lid 105 C):"
    stages = profile.stages
    place = next((pl for _, pl in frame.places if pl.labware or pl.unknown), frame.head)
    plate = r.labware(place, p, "thermocycle")
    if not stages and profile.hold_c is not None and not profile.untimed and is_hold(frame.text):
        return _hold_only(plate, tc, profile.hold_c, p)  # "hold amp_plt at 4 C on the cycler"
    if not stages and re.search(r"\b(?:shak(?:e|ing)|agitat\w*|vortex\w*|rpm)\b", frame.text, re.I):
        raise Refuse(  # "shake rxn_plate at 1000 rpm on the thermocycler": it has no shaker
            f"the thermocycler {tc} cannot shake a plate"
            + "".join(
                f"; {i.id} (heater-shaker) can: name it if it will do"
                for i in world.lab.of_kind("heater_shaker")
            ),
            "missing_instrument",
        )
    if not stages:
        raise Ask(
            "Which temperatures for how long, and how many cycles?", ["temperature", "duration"]
        )
    if profile.vague is not None:
        raise Ask(
            f"'{profile.vague}' is not a number of cycles I can use. How many cycles?"
            if profile.vague != "no number of cycles"
            else "How many cycles?",
            ["count"],
        )
    for celsius in profile.untimed:  # a step past the rules is refused before asking more
        r.within(celsius, "block_range_c", tc, world, "block temperature", "C")
    if profile.untimed:
        raise Ask(
            f"For how long should the block hold {fmt(profile.untimed[0], 'C')}?", ["duration"]
        )
    if isinstance(frame.extra.get("hold"), Clause) and profile.hold_c is None:
        raise Ask(
            "At what temperature (C) should the thermocycler hold the plate?", ["temperature"]
        )
    _checked(profile, tc, world)
    _cycles_own_steps(stages)  # after the refusals: a step past the rules is refused first
    hold, lid_c = profile.hold_c, profile.lid_c
    world.bring(plate, r.place_of(tc, world))
    world.act(tc, "close_lid", {}, {"facts": {"lid_open": False}})
    args: dict[str, Any] = {
        "stages": [
            {"steps": [{"celsius": c, "hold_s": s} for c, s in st.steps], "repeats": st.repeats}
            for st in stages
        ]
    }
    if lid_c is not None:
        args["lid_celsius"] = lid_c
    cycles = sum(st.repeats for st in stages)
    world.act(tc, "run_profile", args, {"facts": {"cycles_done": cycles}})
    if hold is not None:
        expect = {"facts": {"block_target_c": hold}}
        world.act(tc, "set_block_temperature", {"celsius": hold}, expect)
    p.plate, p.thermocycler = plate, tc
    said = "; ".join(
        (f"{st.repeats} x " if st.repeats > 1 else "")
        + ", ".join(f"{fmt(c, 'C')} {fmt_duration(s)}" for c, s in st.steps)
        for st in stages
    )
    then = f", then hold at {fmt(hold, 'C')}" if hold is not None else ""
    return f"thermocycle {plate} on {tc}: {said}{then}"


def programme_runs(read_in: list[tuple[Frame | None, Any]], kinds: set[str]) -> None:
    """Read a run of clauses of one sentence holding only temperatures and times as one
    programme on the thermocycler when it ends in an open-ended cold hold ("Digest at 37 C for
    1 h, then heat-kill at 65 C for 20 min and hold at 4 C": a heater-shaker never holds a plate
    cold for good), or when the lab has a thermocycler and no heater-shaker. Its first clause
    becomes the profile; compose joins the rest to it."""
    if "thermocycler" not in kinds:
        return
    i = 0
    while i < len(read_in):
        frame, family = read_in[i]
        if frame is None or family is None or family.name != "incubate" or not timed_only(frame):
            i += 1
            continue
        j = i + 1
        while j < len(read_in):
            nxt, fam = read_in[j]
            if (
                nxt is None
                or (fam is None and not is_hold(part_text(nxt.clause)))  # "then to 4 C"
                or (fam is not None and fam.name not in ("incubate", "thermocycle"))
                or nxt.clause.sentence != frame.clause.sentence
                or not (timed_only(nxt) or is_hold(part_text(nxt.clause)))
            ):
                break
            j += 1
        last = read_in[j - 1][0]
        assert last is not None
        held = is_hold(part_text(last.clause)) and last.duration is None
        nxt = read_in[j][0] if j < len(read_in) else None
        counted = (  # "95 C 15 s and 60 C 1 min; cycle number 40": the count makes it cycles
            nxt is not None
            and not prof.steps(nxt.text)
            and continues(nxt, frame)
            and (j - i >= 2 or len(prof.steps(frame.text)) >= 2)
        )
        if (j - i >= 2 and (held or "heater_shaker" not in kinds)) or counted:
            read_in[i] = (_as_profile(frame), FAMILY)
        i = j


def _as_profile(frame: Frame) -> Frame:
    again = read(frame.clause, frame.ents, "thermocycle")
    again.extra.update({k: v for k, v in frame.extra.items() if k in ("lex", "quoted")})
    return again


def _hold_only(plate: str, tc: str, celsius: float, p: r.Planning) -> str:
    """The plate on the block, the lid closed, the block held at ``celsius``: no programme."""
    r.within(celsius, "block_range_c", tc, p.world, "block temperature", "C")
    p.world.bring(plate, r.place_of(tc, p.world))
    p.world.act(tc, "close_lid", {}, {"facts": {"lid_open": False}})
    p.world.act(
        tc, "set_block_temperature", {"celsius": celsius}, {"facts": {"block_target_c": celsius}}
    )
    p.plate, p.thermocycler = plate, tc
    return f"hold {plate} on {tc} at {fmt(celsius, 'C')}"


FAMILY = Family("thermocycle", detect, build)
__all__ = ["FAMILY", "HOLD", "continues", "is_continuation", "is_hold", "part_before", "part_text"]
