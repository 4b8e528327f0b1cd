"""The stages of a programme: grouped from its tokens (steps, counts, boundaries, brackets;
a count alone after parts told one a line repeats them all), then put in the order the block
runs them: a touchdown cycle ("65 C 30 s (-1 C per cycle)") unrolled into one part per cycle,
each at its own temperature, and parts told after the cycles but said to run before them
("... with 94 C 2 min initial", "preceded by 95 C 5 min") moved first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import cast

_FLAGS = re.IGNORECASE


@dataclass
class Stage:
    steps: list[tuple[float, float]] = field(default_factory=list)
    repeats: int = 1
    bracket: bool = False
    before: bool = False  # told after the cycles but run before them ("an initial ... before")
    sep: str | None = None  # what joins its steps ("/" in "95 C 15 s / 60 C 30 s")
    deltas: dict[int, float] = field(default_factory=dict)  # step -> C more each cycle
    cycle_of_touchdown: bool = False  # one cycle of a touchdown, run once
    borrowed: bool = False  # the count was told after steps, not with its own ("..., 30 cycles")
    parts: bool = False  # its count names its parts: "(95 C, 30 s)" after one is one step's


_DELTA = re.compile(  # "(-1 C per cycle)", "decreasing by 0.5 C each cycle": a touchdown
    r"\(?\s*(?P<d>[-+−]\s*\d+(?:\.\d+)?)\s*(?:°\s*)?C?\s*(?:/|per|each|every|a)\s*cycle\s*\)?"
    r"|\b(?:(?P<up>increas\w*|rais\w*)|decreas\w*|dropp?\w*|lower\w*|reduc\w*)\s+(?:by\s+)?"
    r"(?P<d2>\d+(?:\.\d+)?)\s*(?:°\s*)?C?\s*(?:/|per|each|every|a)\s*cycle",
    _FLAGS,
)


def _after_its_step(text: str, word: re.Match[str], covered: list[tuple[int, int]]) -> bool:
    """'initial' written after its step ("with 94 C 2 min initial and ..."): a step ends just
    before the word and none follows it before the next comma or "and"."""
    ends_here = any(0 <= word.start() - b <= 2 for _, b in covered)
    nxt = re.search(r"[,;]|\band\b|$", text[word.end() :])
    stop = word.end() + (nxt.start() if nxt else 0)
    return ends_here and not any(word.end() <= a < stop for a, _ in covered)


def _touchdown(stages: list[Stage]) -> list[Stage]:
    """A cycle whose step changes by a set amount each cycle ("65 C 30 s (-1 C per cycle)")
    run as one part per cycle, each at its own temperature (65, 64, 63, ...)."""
    out: list[Stage] = []
    for st in stages:
        if not st.deltas or st.repeats < 2:
            out.append(st)
            continue
        for k in range(st.repeats):
            steps = [(c + st.deltas.get(i, 0.0) * k, t) for i, (c, t) in enumerate(st.steps)]
            out.append(Stage(steps=steps, cycle_of_touchdown=True))
    return out


def _delta(m: re.Match[str]) -> float:
    if m["d"]:
        return float(re.sub(r"\s+", "", m["d"]).replace("−", "-"))
    return float(m["d2"]) * (1 if m["up"] else -1)


def _in_run_order(stages: list[Stage]) -> list[Stage]:
    """Parts told after the cycles but said to run before them go first."""
    first = next((i for i, st in enumerate(stages) if st.repeats > 1), None)
    if first is None:
        return stages
    early = [st for st in stages[first:] if st.before and st.repeats == 1]
    return [
        *stages[:first],
        *early,
        *(st for st in stages[first:] if not (st.before and st.repeats == 1)),
    ]


def _merge_back(done: list[Stage], repeats: int) -> list[Stage]:
    """Stages run once just before "do this 40 times", cycled together: the parts since the
    last cycle, less a first part said to run before or a long hot start (2 min or more)."""
    start = max((i + 1 for i, st in enumerate(done) if st.repeats > 1), default=0)
    while start < len(done) and (done[start].before or done[start].steps[0][1] >= 120):
        start += 1
    if start >= len(done):
        return done
    steps = [step for st in done[start:] for step in st.steps]
    merged = Stage(steps=steps, repeats=repeats, borrowed=True)
    return [*done[:start], merged]


DENATURE_C = 90.0  # a block at or above this melts DNA: PCR's denaturation


def pcr_shaped(stages: list[Stage]) -> bool:
    """A programme that comes back to its denaturation temperature and then anneals ("98 C
    30 s; 98 C 10 s / 60 C 20 s / 72 C 30 s; 72 C 5 min"): cycles told without their count.
    A melt that ends where it started ("95 C 15 s, 60 C 1 min, 95 C 15 s") is none."""
    temps = [c for st in stages for c, _ in st.steps]
    return any(
        c >= DENATURE_C and c in temps[:j] and any(t <= c - 20 for t in temps[j + 1 :])
        for j, c in enumerate(temps)
    )


def _lines_since_cycle(done: list[Stage]) -> int:
    """How many parts of one step each were told since the last cycled part."""
    last = max((i + 1 for i, st in enumerate(done) if st.repeats > 1), default=0)
    rest = done[last:]
    return len(rest) if all(len(st.steps) == 1 and st.repeats == 1 for st in rest) else 0


def group(tokens: list[tuple[int, str, object]]) -> list[Stage]:
    """The stages the tokens of a programme (steps, counts, boundaries, brackets) make."""
    done: list[Stage] = []
    cur: Stage | None = None
    before = False

    def close() -> None:
        nonlocal cur
        if cur is not None and cur.steps:
            done.append(cur)
        cur = None

    hard = False  # the last part ended at a line, a semicolon or a bar
    for _, kind, value in tokens:
        if kind in ("boundary", "before", "was_before", "step", "open", "close"):
            joint = kind == "boundary" and hard and str(value).lower() == "then"  # "; then "
            hard = joint or (
                kind == "boundary" and value in ("\n", ";", "|") and not (cur and cur.bracket)
            )
        if kind == "was_before" and cur is not None and cur.steps and not cur.bracket:
            cur.before = True
            close()
        elif kind in ("boundary", "before", "was_before"):
            if cur is None or not cur.bracket:
                close()
                before = before or kind == "before"
            elif kind == "before" and not cur.steps and cur.repeats == 1:
                cur.before = True  # "..., 60 C 60 s (after 95 C 10 min)": the aside runs first
        elif kind == "open":
            if cur is not None and cur.parts:
                continue  # "35 cycles of denaturation (95 C, 30 s), annealing (55 C, 30 s)"
            if cur is not None and not cur.steps:
                cur.bracket = True  # "30x (" / "35x["
            else:
                close()
                cur = Stage(bracket=True)
        elif kind == "close":
            if cur is not None and cur.bracket:
                cur.bracket = False
                close()
        elif kind == "lead_comma" and cur is not None and cur.steps:
            if cur.repeats == 1:
                cur.repeats, cur.borrowed = int(value), True  # type: ignore[call-overload]
            close()  # "95 C 15 s, 60 C 1 min, 40 cycles, 72 C 5 min": the steps before
        elif kind == "lead_comma":
            close()
            cur = Stage(repeats=int(value))  # type: ignore[call-overload]
        elif kind == "lead":
            close()
            lead = cast(tuple[int, object], value)
            cur = Stage(repeats=int(lead[0]), parts=bool(lead[1]))
        elif kind == "trail_these":  # "95 C 15 s then 60 C 1 min, do this 40 times"
            close()
            done[:] = _merge_back(done, int(value))  # type: ignore[call-overload]
        elif kind == "trail" and hard and cur is None and _lines_since_cycle(done) >= 2:
            done[:] = _merge_back(done, int(value))  # type: ignore[call-overload]
            # "Denaturation: 95 C, 30 s / Annealing: ... / Extension: ... / Cycles: 30", one a line
        elif kind == "trail":
            target = cur if cur is not None and cur.steps else (done[-1] if done else None)
            if target is not None and target.repeats == 1:
                target.repeats, target.borrowed = int(value), True  # type: ignore[call-overload]
            close()
        elif kind == "sep":
            if cur is not None and cur.steps and not cur.bracket and cur.repeats > 1:
                if cur.sep is None:
                    cur.sep = str(value)
                elif cur.sep == "/" and value == ",":
                    close()  # "35 cycles of 95 C 15 s / 60 C 30 s, 72 C 5 min": a new part
        elif kind == "delta":
            if cur is not None and cur.steps:
                cur.deltas[len(cur.steps) - 1] = float(value)  # type: ignore[arg-type]
        elif kind == "step":
            if cur is not None and cur.steps and not cur.bracket and cur.steps[-1][0] == value[0]:  # type: ignore[index]
                close()  # "..., 72 C 30 s, 72 C 5 min": one temperature twice is two parts
            if cur is None:
                cur = Stage(before=before)
                before = False
            cur.steps.append(value)  # type: ignore[arg-type]
    close()
    return _in_run_order(_touchdown(done))
