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
from dataclasses import dataclass, field
from typing import Any

from agents.task.planning import _resolve as r
from agents.task.planning._clauses import Clause
from agents.task.planning._entities import Entities
from agents.task.planning._frames import Frame
from agents.task.planning._outcomes import Ask, Refuse
from agents.task.planning._quantities import WORD_NUMBERS, fmt, fmt_duration, quantities
from agents.task.planning.families import Family

_FLAGS = re.IGNORECASE
_COUNT = r"(\d+|" + "|".join(WORD_NUMBERS) + r")"
_LEADING = re.compile(
    _COUNT
    + r"\s*(?:cycles?|rounds?|repeats?)\s*(?:of|:)|(?:repeat(?:ed)?|cycle)\s+"
    + _COUNT
    + r"\s*(?:times|x)\s*:|"
    + _COUNT
    + r"\s*x\s*(?=\()",
    _FLAGS,
)
_TRAILING = re.compile(
    r"(?:x|×)\s*"
    + _COUNT
    + r"\b|\bfor\s+"
    + _COUNT
    + r"\s+cycles\b|"
    + _COUNT
    + r"\s+(?:times|cycles)\b(?!\s*(?:of|:))",
    _FLAGS,
)
_BOUNDARY = re.compile(
    r"\b(?:initial(?:ly)?|first|final(?:ly)?|followed\s+by|then|after(?:wards)?|last|end(?:ing)?"
    r"\s+with|extension|denaturation)\b",
    _FLAGS,
)
_THERMO = re.compile(r"\b(?:thermocycl\w*|pcr|cycles?\s+of|cycling|profile|x\s*\d+)\b", _FLAGS)
HOLD = re.compile(r"^(?:hold|keep|store|cool)\b", _FLAGS)
_LID = re.compile(r"\b(?:heated\s+)?lid\b[^,;]*?(-?\d+(?:\.\d+)?)\s*(?:c|degrees?)\b", _FLAGS)
MAX_REPEATS = 200

# Words for thermocycling without a usable profile (refused when the lab has no thermocycler).
_CYCLING = re.compile(
    r"\bthermo[\s-]?cycl\w*|\bpcr\s+(?:program|profile|run|cycling)\b|\b\d+\s*(?:x|cycles?)\b\s*(?:of|\()"
    r"|\bcycle\s+\d+\s+times\b|\brun\s+\d+\s+cycles\b|\b(?:denatur|anneal)\w*\b"
    r"|\b(?:run|do|start|perform)\s+(?:an?\s+|the\s+)?(?:[\w-]+\s+)?pcr\b|\b\d+\s+cycles\b"
    r"|\bcycle\s+(?:it|them|the)\b"
    r"|\bamplif\w*|\bthermal[\s-]?cycl\w*|\bcycl\w*\b[^.;]{0,40}?\b\d+\s*(?:x|times)\b"
    r"|\b(?:denaturation|annealing|extension|elongation)\b",
    _FLAGS,
)
_NAMED = re.compile(
    r"\bthermo[\s-]?cycl\w*|\bthermal[\s-]?cycl\w*|\bpcr\b|\bdenatur\w*|\banneal\w*|\bamplif\w*",
    _FLAGS,
)
_OTHER = {
    "magnet": re.compile(
        r"\bmagnet\w*|\bmag[\s-]?deck\b|\bpull\s+down\s+the\s+beads\b|\bbead\s+separation\b", _FLAGS
    ),
    "centrifuge": re.compile(
        r"\bcentrifug\w*|\bspin\s+(?:down|it|the\s+plate|\w+\s+at\s+\d)|\b\d+\s*(?:x\s*)?g\s+for\b",
        _FLAGS,
    ),
    "sealer": re.compile(r"^(?:heat[\s-]?)?seal\b|\bplate\s+sealer\b", _FLAGS),
    "washer": re.compile(r"\bplate\s+washer\b", _FLAGS),
}


@dataclass
class Stage:
    steps: list[tuple[float, float]] = field(default_factory=list)
    repeats: int = 1


def _count(word: str | None) -> int | None:
    if word is None:
        return None
    return int(WORD_NUMBERS.get(word.lower()) or int(word))


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
            and re.fullmatch(r"\s*at\s*", text[before.end : q.start], _FLAGS)
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


def is_profile(text: str) -> bool:
    """A clause that names a profile: a thermocycling word and a temperature held for a time."""
    return bool(_THERMO.search(text)) and bool(_pairs(text, 0))


def is_continuation(text: str) -> bool:
    """A clause of only temperatures and times ('72 C for 5 min', 'final extension 72 C 5 min')."""
    rest = text
    for q in sorted(quantities(text), key=lambda q: -q.start):
        rest = rest[: q.start] + rest[q.end :]
    rest = _BOUNDARY.sub(" ", rest)
    return bool(_pairs(text, 0)) and not re.search(
        r"\b(?:shake|read|transfer|add|move|mix|incubate|rpm|nm|ul|ml)\b", rest, _FLAGS
    )


def detect(clause: Clause, ents: Entities) -> int | None:
    text = ents.text + (f" ({clause.label})" if clause.label else "")
    if is_profile(text):
        return 80
    if _CYCLING.search(text) and (
        any(q.kind == "temperature" for q in ents.quantities) or _NAMED.search(text)
    ):
        return 75
    if any(rx.search(text) for rx in _OTHER.values()):
        return 74
    return None


def require(frame: Frame, p: r.Planning) -> None:
    """Refuse, before anything else is planned, what needs an instrument the lab lacks."""
    text = frame.text
    for kind, rx in _OTHER.items():
        if rx.search(text) and not _CYCLING.search(text):
            if not p.world.lab.of_kind(kind):
                raise Refuse(
                    f"the lab has no {r.KIND_LABEL.get(kind, kind)}: "
                    f"it cannot {frame.clause.said!r}",
                    "missing_instrument",
                )
            raise Refuse(
                f"planning for the {r.KIND_LABEL.get(kind, kind)} is not supported yet",
                "missing_instrument",
            )
    r.instrument("thermocycler", p, frame)  # refuses when the lab has none


def _profile_text(frame: Frame) -> str:
    more = frame.extra.get("continued")
    parts = [frame.text] + [c.text for c in more] if isinstance(more, list) else [frame.text]
    return ", then ".join(parts)


def build(frame: Frame, p: r.Planning) -> str:
    """Bring the plate onto the block, close the lid, run the profile (then the hold)."""
    require(frame, p)
    world = p.world
    tc = r.instrument("thermocycler", p, frame)
    text = _profile_text(frame)
    lid = _LID.search(text)
    stages = stages_of(text[: lid.start()] + text[lid.end() :] if lid else text)
    place = next((pl for _, pl in frame.places if pl.labware or pl.unknown), frame.head)
    plate = r.labware(place, p, "thermocycle")
    if not stages:
        raise Ask(
            "Which temperatures for how long, and how many cycles?", ["temperature", "duration"]
        )
    for stage in stages:
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
    lid_c = float(lid.group(1)) if lid else None
    if lid_c is not None:
        r.within(lid_c, "lid_range_c", tc, world, "lid temperature", "C")
    hold = _hold_of(frame)
    if hold is not None:
        r.within(hold, "block_range_c", tc, world, "block temperature", "C")
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


def _hold_of(frame: Frame) -> float | None:
    """The temperature of a 'then hold at 4 C' joined to the profile; ask when it has none."""
    held = frame.extra.get("hold")
    if not isinstance(held, Clause):
        return None
    temps = [q for q in quantities(held.text) if q.kind == "temperature"]
    if not temps:
        raise Ask(
            "At what temperature (C) should the thermocycler hold the plate?", ["temperature"]
        )
    return temps[0].value


FAMILY = Family("thermocycle", detect, build)
