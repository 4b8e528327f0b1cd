"""Compare what an instrument reports after a step with what the plan expected.

A plan step's ``expect`` names effects the planner computed (well volumes, plate locations,
drawer and lock states, a reading, and ``facts``: what an instrument's stations depend on, as
its ``get_state`` reports them under ``facts``). Each is checked against the instrument's own
state as read back after the step; anything else in ``expect`` is not checkable here and is
skipped.
"""

from __future__ import annotations

from typing import Any

from agents.device.agent import Observation
from agents.task.planning.models import PlanStep

VOLUME_TOLERANCE_UL = 0.5


def _well_volume(state: dict[str, Any], labware: str, well: str) -> float | None:
    item = (state.get("labware") or {}).get(labware)
    if item is None or "wells" not in item:
        return None
    return float((item["wells"].get(well) or {}).get("volume_ul", 0.0))


def mismatches(step: PlanStep, obs: Observation) -> list[dict[str, Any]]:
    """Every expected effect the observed state contradicts (empty: as expected)."""
    out: list[dict[str, Any]] = []
    state = obs.state
    expect = step.expect

    def differ(what: str, expected: Any, observed: Any) -> None:
        out.append({"step": step.id, "what": what, "expected": expected, "observed": observed})

    for key, volume in (expect.get("wells") or {}).items():
        labware, _, well = key.partition(":")
        seen = _well_volume(state, labware, well)
        if seen is not None and abs(seen - float(volume)) > VOLUME_TOLERANCE_UL:
            differ(f"volume {key} (uL)", volume, round(seen, 3))
    for plate, where in (expect.get("plate_location") or {}).items():
        item = (state.get("labware") or {}).get(plate) or {}
        if "location" in item and item["location"] != where:
            differ(f"location of {plate}", where, item["location"])
    if "drawer" in expect and "drawer_open" in state:
        seen_drawer = "open" if state["drawer_open"] else "closed"
        if seen_drawer != expect["drawer"]:
            differ("drawer", expect["drawer"], seen_drawer)
    if (
        "plate_in_reader" in expect
        and "plate_in_reader" in state
        and state["plate_in_reader"] != expect["plate_in_reader"]
    ):
        differ("plate in reader", expect["plate_in_reader"], state["plate_in_reader"])
    if "plate_lock" in expect and "locked" in state:
        seen_lock = "locked" if state["locked"] else "unlocked"
        if seen_lock != expect["plate_lock"]:
            differ("plate lock", expect["plate_lock"], seen_lock)
    seen_facts = state.get("facts") or {}
    for fact, value in (expect.get("facts") or {}).items():
        if fact in seen_facts and seen_facts[fact] != value:
            differ(fact, value, seen_facts[fact])
    if "target_c" in expect and "target_c" in state and state["target_c"] != expect["target_c"]:
        differ("target temperature (C)", expect["target_c"], state["target_c"])
    if "reading" in expect:
        wanted = expect["reading"] or {}
        got = [m for m in obs.measurements if m.get("plate") == wanted.get("plate")]
        if not got:
            differ("reading", wanted, None)
        elif wanted.get("wells") and len(got[0].get("values", {})) != wanted["wells"]:
            differ("wells read", wanted["wells"], len(got[0].get("values", {})))
    return out
