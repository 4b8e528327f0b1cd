"""Replanning the rest of a run from the observed state (the rule planner's ``replan``).

The remaining steps are kept as they are where the observed lab still allows them. A transfer
whose source no longer holds enough for it (less liquid than believed, found mid-run) takes
its liquid from another well that holds enough of the same liquid, the fullest first; when
no well does, the answer is a refusal that says how much is missing. Volume expectations of
the transfers are recomputed from what the instruments report, never from the old belief.
"""

from __future__ import annotations

from typing import Any

from agents.task.planning.models import LabView, Plan, PlanStep, Refusal

_EPS = 1e-6


def replan_rest(request: str, lab: LabView, previous: Plan, errors: list[str]) -> Plan | Refusal:
    """``previous`` (the remaining steps) replanned on ``lab`` as observed now."""
    volumes = {
        (lw.id, name): (well.volume_ul, dict(well.contents))
        for lw in lab.labware.values()
        for name, well in lw.wells.items()
    }
    steps: list[PlanStep] = []
    changed: list[str] = []
    for step in previous.steps:
        if step.command != "transfer":
            steps.append(step)
            continue
        args = dict(step.args)
        wells = list(args.get("destination_wells") or [])
        need = float(args.get("volume_ul") or 0) * len(wells)
        source = (str(args.get("source")), str(args.get("source_well")))
        have, contents = volumes.get(source, (0.0, {}))
        if have + _EPS < need:
            liquid = max(contents, key=lambda k: contents[k]) if contents else None
            if liquid is None:
                return Refusal(
                    request=request,
                    reason=f"insufficient_liquid: {source[0]}:{source[1]} is empty and holds "
                    f"no liquid to look for elsewhere; {step.id} needs {need:g} uL",
                )
            other = _fullest(volumes, liquid, need, exclude=source)
            if other is None:
                return Refusal(
                    request=request,
                    reason=f"insufficient_liquid: {source[0]}:{source[1]} holds {have:g} uL of "
                    f"{liquid}; {step.id} needs {need:g} uL and no other well holds that much",
                )
            changed.append(
                f"{step.id}: {liquid} from {other[0]}:{other[1]} instead of "
                f"{source[0]}:{source[1]} ({have:g} uL left there)"
            )
            source = other
            args.update(source=other[0], source_well=other[1])
        steps.append(step.model_copy(update={"args": args, "expect": _expect(step, args, volumes)}))
        _take(volumes, source, need)
        for w in wells:
            _pour(volumes, (str(args["destination"]), str(w)), float(args["volume_ul"]))
    summary = "the rest, replanned from the observed state"
    summary += f": {'; '.join(changed)}" if changed else " (unchanged)"
    return Plan(request=request, summary=summary, steps=steps)


def _fullest(
    volumes: dict[tuple[str, str], tuple[float, dict[str, float]]],
    liquid: str,
    need: float,
    exclude: tuple[str, str],
) -> tuple[str, str] | None:
    found = [
        (vol, key)
        for key, (vol, contents) in volumes.items()
        if key != exclude
        and contents
        and max(contents, key=lambda k: contents[k]) == liquid
        and vol + _EPS >= need
    ]
    return max(found)[1] if found else None


def _take(volumes: dict[tuple[str, str], Any], key: tuple[str, str], amount: float) -> None:
    vol, contents = volumes.get(key, (0.0, {}))
    share = amount / vol if vol > 0 else 0.0
    volumes[key] = (
        max(vol - amount, 0.0),
        {k: v * (1 - share) for k, v in contents.items()},
    )


def _pour(volumes: dict[tuple[str, str], Any], key: tuple[str, str], amount: float) -> None:
    vol, contents = volumes.get(key, (0.0, {}))
    volumes[key] = (vol + amount, contents)


def _expect(
    step: PlanStep,
    args: dict[str, Any],
    volumes: dict[tuple[str, str], tuple[float, dict[str, float]]],
) -> dict[str, Any]:
    """The transfer's expected volumes after it, from the observed volumes before it."""
    expect = {k: v for k, v in step.expect.items() if k != "wells"}
    wells = list(args.get("destination_wells") or [])
    volume = float(args.get("volume_ul") or 0)
    source = (str(args["source"]), str(args["source_well"]))
    after = {
        f"{source[0]}:{source[1]}": round(
            volumes.get(source, (0.0, {}))[0] - volume * len(wells), 3
        )
    }
    for w in wells:
        key = (str(args["destination"]), str(w))
        after[f"{key[0]}:{key[1]}"] = round(volumes.get(key, (0.0, {}))[0] + volume, 3)
    expect["wells"] = after
    return expect
