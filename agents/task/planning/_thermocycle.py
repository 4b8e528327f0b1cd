"""Thermocycling in controlled lab English: a temperature profile on a thermocycler, a hold.

A profile is stages of steps (a temperature held for a time); a stage repeats when the
request says so ("35 cycles of 95 C for 15 s, 60 C for 30 s", "(95 C 15 s, 60 C 30 s) x 35").
Words such as "initial", "final" or "followed by" start a new stage; a clause after "then"
that holds only temperatures and times ("then 72 C for 5 min") continues the profile, and
"hold at 4 C" after it keeps the block at 4 C. The plan brings the plate to the thermocycler's
block (the block's station opens the lid), closes the lid, runs the profile and sets the hold.
The planner never picks a temperature, a time or a cycle count the request does not give.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from agents.task.planning import _resolve as r
from agents.task.planning._grammar import Lexicon, Target, target
from agents.task.planning._outcomes import Ask, Refuse
from agents.task.planning._units import WORD_NUMBERS, Quantity, fmt, fmt_duration, quantities
from agents.task.planning._world import World

_I = re.IGNORECASE
_COUNT = r"(\d+|" + "|".join(WORD_NUMBERS) + r")"
_LEADING = re.compile(
    _COUNT
    + r"\s*(?:cycles?|rounds?|repeats?)\s*(?:of|:)|(?:repeat(?:ed)?|cycle)\s+"
    + _COUNT
    + r"\s*(?:times|x)\s*:|"
    + _COUNT
    + r"\s*x\s*(?=\()",
    _I,
)
_TRAILING = re.compile(
    r"(?:x|×)\s*"
    + _COUNT
    + r"\b|\bfor\s+"
    + _COUNT
    + r"\s+cycles\b|"
    + _COUNT
    + r"\s+(?:times|cycles)\b(?!\s*(?:of|:))",
    _I,
)
_BOUNDARY = re.compile(
    r"\b(?:initial(?:ly)?|first|final(?:ly)?|followed\s+by|then|after(?:wards)?|last|end(?:ing)?"
    r"\s+with|extension|denaturation)\b",
    _I,
)
_THERMO = re.compile(r"\b(?:thermocycl\w*|pcr|cycles?\s+of|cycling|profile|x\s*\d+)\b", _I)
_HOLD = re.compile(r"^(?:hold|keep|store|cool)\b", _I)
_LID = re.compile(r"\b(?:heated\s+)?lid\b[^,;]*?(-?\d+(?:\.\d+)?)\s*(?:c|degrees?)\b", _I)
MAX_REPEATS = 200


@dataclass
class Stage:
    steps: list[tuple[float, float]] = field(default_factory=list)
    repeats: int = 1


@dataclass
class ThermocycleIntent:
    text: str
    target: Target
    stages: list[Stage]
    lid_celsius: float | None


@dataclass
class HoldIntent:
    text: str
    target: Target
    temperature: Quantity | None


def _count(word: str | None) -> int | None:
    if word is None:
        return None
    return WORD_NUMBERS.get(word.lower()) or int(word)


def _pairs(text: str, offset: int) -> list[tuple[int, float, float]]:
    """(position, C, s) of every temperature held for a time: '95 C for 15 s', '15 s at 95 C'."""
    qs = [q for q in quantities(text) if q.kind in ("temperature", "duration")]
    found, used = [], set()
    for i, q in enumerate(qs):
        if i in used or q.kind != "temperature":
            continue
        after = qs[i + 1] if i + 1 < len(qs) else None
        before = qs[i - 1] if i > 0 else None
        if (
            before is not None
            and before.kind == "duration"
            and i - 1 not in used
            and re.fullmatch(r"\s*at\s*", text[before.end : q.start], _I)
        ):
            found.append((offset + before.start, q.value, before.value))
            used |= {i, i - 1}
        elif after is not None and after.kind == "duration" and i + 1 not in used:
            found.append((offset + q.start, q.value, after.value))
            used |= {i, i + 1}
    return found


def stages_of(text: str) -> list[Stage]:
    """The stages a profile text describes, in order (an empty list: no profile here)."""
    cuts = sorted(
        {
            0,
            *(m.start() for m in _LEADING.finditer(text)),
            *(m.start() for m in _BOUNDARY.finditer(text)),
        }
    )
    stages: list[Stage] = []
    for a, b in zip(cuts, [*cuts[1:], len(text)], strict=True):
        part = text[a:b]
        pairs = _pairs(part, a)
        if not pairs:
            continue
        stage = Stage(steps=[(c, s) for _, c, s in pairs])
        lead, trail = _LEADING.match(part.lstrip()), _TRAILING.search(part)
        counted = lead or trail
        if counted:
            stage.repeats = next(c for c in map(_count, counted.groups()) if c is not None)
        stages.append(stage)
    return stages


def is_profile(clause: str) -> bool:
    """A clause that names a profile: a thermocycling word and a temperature held for a time."""
    return bool(_THERMO.search(clause)) and bool(_pairs(clause, 0))


def is_continuation(clause: str) -> bool:
    """A clause of only temperatures and times ('72 C for 5 min', 'final extension 72 C 5 min')."""
    rest = clause
    for q in sorted(quantities(clause), key=lambda q: -q.start):
        rest = rest[: q.start] + rest[q.end :]
    rest = _BOUNDARY.sub(" ", rest)
    return bool(_pairs(clause, 0)) and not re.search(
        r"\b(?:shake|read|transfer|add|move|mix|incubate|rpm|nm|ul|ml)\b", rest, _I
    )


def merge(clauses: list[str]) -> list[str]:
    """Clauses with a profile's continuations ('then 72 C for 5 min') joined to the profile."""
    out: list[str] = []
    for clause in clauses:
        if out and is_profile(out[-1]) and is_continuation(clause) and not _HOLD.match(clause):
            out[-1] = f"{out[-1]}, then {clause}"
        else:
            out.append(clause)
    return out


def parse(clause: str, lex: Lexicon, ctx: r.Context) -> ThermocycleIntent | HoldIntent | None:
    """The thermocycling intent of a clause, or None when it is not about thermocycling."""
    if is_profile(clause):
        lid = _LID.search(clause)
        text = clause[: lid.start()] + clause[lid.end() :] if lid else clause
        return ThermocycleIntent(
            text=clause,
            target=target(re.sub(r"\d+(?:\.\d+)?\s*(?:c|s|sec|min|h)\b", " ", text, flags=_I), lex),
            stages=stages_of(text),
            lid_celsius=float(lid.group(1)) if lid else None,
        )
    if _HOLD.match(clause) and ctx.thermocycler is not None:
        temps = [q for q in quantities(clause) if q.kind == "temperature"]
        return HoldIntent(clause, target(clause, lex), temps[0] if temps else None)
    return None


def thermocycle(intent: ThermocycleIntent, world: World, ctx: r.Context) -> str:
    """Bring the plate onto the block, close the lid, run the profile."""
    tc = r.instrument("thermocycler", intent.target, world)
    plate = r.plate(intent.target, world, ctx, "thermocycle")
    if not intent.stages:
        raise Ask(
            "Which temperatures for how long, and how many cycles?",
            ["temperature", "duration"],
        )
    for stage in intent.stages:
        if stage.repeats < 1 or stage.repeats > MAX_REPEATS:
            raise Refuse(f"{stage.repeats} cycles: a stage repeats 1 to {MAX_REPEATS} times")
        for celsius, seconds in stage.steps:
            r.within(celsius, "block_range_c", tc, world, "block temperature", "C")
            if seconds <= 0:
                raise Refuse(f"a hold of {fmt_duration(seconds)} is not a step of a profile")
    if intent.lid_celsius is not None:
        r.within(intent.lid_celsius, "lid_range_c", tc, world, "lid temperature", "C")
    world.bring(plate, r.place_of(tc, world))
    world.act(tc, "close_lid", {}, {"facts": {"lid_open": False}})
    args: dict[str, Any] = {
        "stages": [
            {"steps": [{"celsius": c, "hold_s": s} for c, s in st.steps], "repeats": st.repeats}
            for st in intent.stages
        ]
    }
    if intent.lid_celsius is not None:
        args["lid_celsius"] = intent.lid_celsius
    cycles = sum(st.repeats for st in intent.stages)
    world.act(tc, "run_profile", args, {"facts": {"cycles_done": cycles}})
    ctx.plate, ctx.thermocycler = plate, tc
    said = "; ".join(
        (f"{st.repeats} x " if st.repeats > 1 else "")
        + ", ".join(f"{fmt(c, 'C')} {fmt_duration(s)}" for c, s in st.steps)
        for st in intent.stages
    )
    return f"thermocycle {plate} on {tc}: {said}"


def hold(intent: HoldIntent, world: World, ctx: r.Context) -> str:
    """Keep the block of the thermocycler the plate is on at a temperature."""
    tc = ctx.thermocycler
    assert tc is not None  # parse returns a HoldIntent only after a profile
    if intent.temperature is None:
        raise Ask(f"At what temperature (C) should {tc} hold the plate?", ["temperature"])
    celsius = intent.temperature.value
    r.within(celsius, "block_range_c", tc, world, "block temperature", "C")
    expect = {"facts": {"block_target_c": celsius}}
    world.act(tc, "set_block_temperature", {"celsius": celsius}, expect)
    return f"hold {ctx.plate or 'the plate'} at {fmt(celsius, 'C')} on {tc}"
