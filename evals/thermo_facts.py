"""Thermocycling facts: a programme as the block runs it.

A corpus entry gives a programme as ``stages`` + ``cycles`` or as ``groups`` of them; a plan
gives it as ``run_profile`` stages of steps, each repeated. Both become the same normal form:
parts ``(steps, cycles)`` in order, each step ``(C, s)`` rounded to 0.01, where consecutive
parts that run once are one part (a "95 C 3 min" before a "72 C 5 min" written as one part
or two runs the same on the block).
"""

from __future__ import annotations

from typing import Any

Steps = tuple[tuple[float, float], ...]
Programme = tuple[tuple[Steps, int], ...]


def _merged(parts: list[tuple[Steps, int]]) -> Programme:
    out: list[tuple[Steps, int]] = []
    for steps, cycles in parts:
        if cycles == 1 and out and out[-1][1] == 1:
            out[-1] = (out[-1][0] + steps, 1)
        else:
            out.append((steps, cycles))
    return tuple(out)


def _steps(stages: list[dict[str, Any]], temp: str) -> Steps:
    return tuple((round(float(s[temp]), 2), round(float(s["hold_s"]), 2)) for s in stages)


def expected(action: dict[str, Any]) -> dict[str, Any]:
    """The entry's thermocycle action with its ``programme`` in normal form (when it gives one)."""
    if "groups" in action:
        groups = action["groups"]
        parts = [(_steps(g["stages"], "temperature_c"), int(g.get("cycles", 1))) for g in groups]
    elif "stages" in action:
        parts = [(_steps(action["stages"], "temperature_c"), int(action.get("cycles", 1)))]
    else:
        return action
    return {**action, "programme": _merged(parts)}


def ran(args: dict[str, Any]) -> Programme:
    """The programme of a ``run_profile`` command's arguments."""
    return _merged(
        [(_steps(st["steps"], "celsius"), int(st.get("repeats", 1))) for st in args["stages"]]
    )
