"""Which steps of a plan depend on which, and when each would run: the plan's timeline.

Derived from the simulation, never from step names. Each instrument's dry run reports, per
step, the labware its operations use (with the plate held at the instrument's stations) and
its estimated instrument seconds (the twin's footprint), and the plate moves it predicts
(``plate_moved``: plate, from, to). Steps share *resources*; a step depends on the previous
step (in plan order) that used any resource it uses:

- its instrument: an instrument does one step at a time, in plan order (its twin simulated
  them in that order: tips, volumes and locks follow from it);
- each labware it uses: a reading of a plate comes after the pipetting into it; a transfer
  from one plate into another joins their chains, so what a plate's contents depend on comes
  first as well;
- a plate move's origin and destination places, and the instruments owning them: the arm
  reaches into both, which are idle while it happens. The move comes after everything using
  the plate (and the place) at its origin and before everything using them at its destination;
  a drawer, a lid or a holder lock is its instrument's own step, so it orders with the move.

Every step starts as soon as the steps it depends on have ended, as the dispatcher starts
them, at most :data:`WINDOW` steps at a time (one graph superstep); the makespan of a plan
that fits one window is then its critical path, the longest chain of dependent steps.
Sequential runs are one chain: every step after the one before it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, Field

# Steps the dispatcher starts in one graph superstep (each its own branch); the next window
# starts when every step of this one has ended.
WINDOW = 256


@dataclass(frozen=True)
class Use:
    """What one step uses, from the simulation: its instrument, labware, places, seconds."""

    step: str
    instrument: str
    seconds: float
    labware: tuple[str, ...] = ()
    places: tuple[str, ...] = ()  # a plate move's origin and destination
    reaches: tuple[str, ...] = ()  # other instruments a plate move reaches into


class TimedStep(BaseModel):
    """One step on the timeline: when it starts and ends (simulated seconds from the start)."""

    step: str
    instrument: str
    start_s: float
    end_s: float
    after: list[str] = Field(default_factory=list)  # the steps it depends on (direct)


class Timeline(BaseModel):
    """The plan's dependency graph and estimated schedule (simulated: nothing moved)."""

    simulated: bool = True
    sequential: bool = False  # the schedule is one step after another
    makespan_s: float = 0.0  # estimated physical time of the run as scheduled
    sequential_s: float = 0.0  # the same steps one after another
    critical_path_s: float = 0.0  # the longest chain of dependent steps: a lower bound
    critical_path: list[str] = Field(default_factory=list)
    window: int = WINDOW
    steps: list[TimedStep] = Field(default_factory=list)

    def lanes(self) -> dict[str, list[TimedStep]]:
        """Per instrument, its steps in the order they run."""
        out: dict[str, list[TimedStep]] = {}
        for s in self.steps:
            out.setdefault(s.instrument, []).append(s)
        return out

    def after(self) -> dict[str, list[str]]:
        """Step id -> the steps it depends on."""
        return {s.step: s.after for s in self.steps}


def resources(use: Use) -> set[str]:
    """The resources a step holds while it runs."""
    held = {f"instrument:{use.instrument}"}
    held.update(f"instrument:{i}" for i in use.reaches)
    held.update(f"labware:{x}" for x in use.labware)
    held.update(f"place:{p}" for p in use.places)
    return held


def dependencies(uses: Sequence[Use]) -> dict[str, list[str]]:
    """Step id -> the earlier steps it directly depends on (the previous user of each of its
    resources); transitively, every earlier step that shares a resource with it."""
    last: dict[str, str] = {}
    out: dict[str, list[str]] = {}
    for use in uses:
        deps: list[str] = []
        for res in sorted(resources(use)):
            prev = last.get(res)
            if prev is not None and prev not in deps:
                deps.append(prev)
            last[res] = use.step
        out[use.step] = deps
    return out


def schedule(
    uses: Sequence[Use], after: dict[str, list[str]], window: int = WINDOW
) -> dict[str, tuple[float, float]]:
    """(start, end) of every step: as soon as what it depends on has ended, ``window`` steps
    (in plan order) at a time, each window starting when the one before has ended."""
    times: dict[str, tuple[float, float]] = {}
    barrier = 0.0
    for first in range(0, len(uses), max(1, window)):
        chunk = uses[first : first + window]
        for use in chunk:
            start = max([barrier, *(times[d][1] for d in after.get(use.step, []))])
            times[use.step] = (start, start + use.seconds)
        barrier = max(times[u.step][1] for u in chunk)
    return times


def critical_path(uses: Sequence[Use], after: dict[str, list[str]]) -> tuple[float, list[str]]:
    """The longest chain of dependent steps: its length in seconds and its steps."""
    best: dict[str, tuple[float, str | None]] = {}
    for use in uses:
        prev = max(after.get(use.step, []), key=lambda d: best[d][0], default=None)
        best[use.step] = (use.seconds + (best[prev][0] if prev else 0.0), prev)
    if not best:
        return 0.0, []
    end = max(best, key=lambda s: best[s][0])
    length = best[end][0]
    path: list[str] = []
    node: str | None = end
    while node is not None:
        path.append(node)
        node = best[node][1]
    return length, path[::-1]


def chain(uses: Sequence[Use]) -> dict[str, list[str]]:
    """A strictly sequential run: every step depends on the one before it."""
    return {u.step: [uses[i - 1].step] if i else [] for i, u in enumerate(uses)}


def timeline(uses: Sequence[Use], sequential: bool = False, window: int = WINDOW) -> Timeline:
    """The timeline of ``uses`` (plan order): dependencies, schedule, critical path."""
    after = chain(uses) if sequential else dependencies(uses)
    times = schedule(uses, after, window)
    length, path = critical_path(uses, after)
    return Timeline(
        sequential=sequential,
        makespan_s=_r(max((end for _, end in times.values()), default=0.0)),
        sequential_s=_r(sum(u.seconds for u in uses)),
        critical_path_s=_r(length),
        critical_path=path,
        window=window,
        steps=[
            TimedStep(
                step=u.step,
                instrument=u.instrument,
                start_s=_r(times[u.step][0]),
                end_s=_r(times[u.step][1]),
                after=after[u.step],
            )
            for u in uses
        ],
    )


def moves(events: Iterable[dict[str, object]]) -> list[tuple[str, str, str]]:
    """(plate, from, to) of every plate move among a step's simulated events."""
    out = []
    for ev in events:
        data = ev.get("data")
        if ev.get("type") == "plate_moved" and isinstance(data, dict):
            out.append((str(data.get("plate")), str(data.get("from")), str(data.get("to"))))
    return out


def _r(x: float) -> float:
    return round(x, 3)
