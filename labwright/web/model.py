"""The run page's model: a run's records turned into what the page draws.

"Before" is what the approval is bound to: for a run waiting for approval the instruments as
they are now (checked against the question's twin hash), afterwards the states the approval
was confirmed on (kept in its audit row). Deck geometry comes from the device servers' own
catalogue code (PyLabRobot is imported only there, and only when the cache is cold).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents.task.approval import twins_hash
from device_servers.lab import LabConfig
from device_servers.liquid_handler.catalogue import load_deck_geometry
from labwright.operations import Operations
from labwright.web import views


def lab_geometry(lab: LabConfig, cache_dir: Path | None) -> dict[str, Any]:
    """Per liquid handler its deck geometry; per other instrument its kind and places."""
    out: dict[str, Any] = {}
    for inst in lab.instruments:
        kind = str(getattr(inst, "kind", "?"))
        if kind == "liquid_handler":
            out[inst.id] = {"kind": kind, "deck": load_deck_geometry(inst, cache_dir)}  # type: ignore[arg-type]
        elif kind == "plate_mover":
            out[inst.id] = {"kind": kind, "places": list(getattr(inst, "locations", []))}
        else:
            out[inst.id] = {"kind": kind}
    return out


async def before_states(ops: Operations, run: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The states the page shows as "before" and where they come from."""
    question = run.get("question") or {}
    if question.get("kind") == "approval":
        states = await ops.lab_states()
        same = twins_hash(states) == (question.get("basis") or {}).get("twins")
        return (
            states,
            "as shown for approval" if same else "as they are now (changed since planned)",
        )
    approved = ops.approved_states(run["run_id"])
    if approved is not None:
        return approved, "as approved"
    return await ops.lab_states(), "now"


async def page_model(ops: Operations, run_id: str, geometry: dict[str, Any]) -> dict[str, Any]:
    run = await ops.run(run_id)
    plan = run.get("plan") or {}
    sim = run.get("simulation") or {}
    before, before_from = await before_states(ops, run)
    decks = []
    for inst, geo in geometry.items():
        if geo["kind"] == "liquid_handler" and inst in before:
            decks.append(
                {
                    "instrument": inst,
                    "geometry": geo["deck"],
                    "view": views.deck_view(geo["deck"]),
                    "frames": views.deck_frames(inst, before[inst], plan, sim),
                    "budgets": views.budgets(before[inst], plan, sim),
                    "max": {
                        lw: float(d.get("well_max_volume_ul") or 0)
                        for lw, d in (before[inst].get("labware") or {}).items()
                    },
                }
            )
    mover = next((i for i, g in geometry.items() if g["kind"] == "plate_mover"), None)
    return {
        "run": run,
        "steps": views.steps_table(run),
        "decks": decks,
        "before_from": before_from,
        "stations": {
            "places": geometry.get(mover, {}).get("places", []) if mover else [],
            "plates": views.plate_locations(before.get(mover) if mover else None, plan, sim),
        },
        "diff": views.plan_diff(run.get("previous_plan"), plan),
        # The planner's "understood as" trace: clause -> what it was read as -> step ids.
        "understood": plan.get("trace") if isinstance(plan.get("trace"), list) else [],
        "tip_policy": plan.get("tip_policy") or "",
        "timeline": sim.get("timeline"),
        "needs_person": sim.get("needs_approval") or [],
        "readings": views.readings(run.get("report")),
        "audit": ops.events(run_id),
        "chain": ops.verify_audit(run_id),
        "estops": {i: bool(s.get("estop")) for i, s in (await ops.lab_states()).items()},
    }
