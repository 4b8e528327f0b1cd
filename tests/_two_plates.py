"""The two-plate test case: prepare, shake and read plate_1, then plate_2, on one lab.

The plan is the one the rule planner makes of "transfer 100 uL of dye to A1:A3 of plate_1,
shake plate_1 at 600 rpm for 5 minutes, read absorbance of plate_1 at 600 nm, then transfer
100 uL of dye to A1:A3 of plate_2, shake plate_2 ... and read absorbance of plate_2 at 600
nm" (22 steps), written out so the tests do not depend on the planner's phrasing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from _task_lab import DRAWER, DYE_UL, EXTRA, make_plan, step
from conftest import write_lab

from agents.task.planning.models import Plan, PlanStep

HOLDER = "hs1:holder"
HOMES = {"plate_1": "lh1:plate_carrier:1", "plate_2": "lh1:plate_carrier:2"}
WELLS = ["A1", "A2", "A3"]
VOLUME = 100.0


def two_plate_lab_file(tmp: Path, hs_time_scale: float | None = None) -> Path:
    """The task lab (lh1, reader1, hs1, arm1) with plate_2 on the liquid handler's deck too
    (``hs_time_scale``: the heater-shaker's, when not the task lab's)."""

    def patch(data: dict[str, Any]) -> None:
        lh = data["instruments"][0]
        lh["labware"].append(
            {
                "id": "plate_2",
                "type": "cor_96_wellplate_360uL_Fb",
                "carrier": "plate_carrier",
                "slot": 2,
            }
        )
        extra = [dict(i) for i in EXTRA]
        for inst in extra:
            if inst["kind"] == "plate_mover":
                inst["plates"] = ["plate_1", "plate_2"]
            if inst["kind"] == "heater_shaker" and hs_time_scale is not None:
                inst["time_scale"] = hs_time_scale
        data["instruments"].extend(extra)

    return write_lab(tmp, patch)


def two_plate_plan() -> Plan:
    """Prepare, shake and read plate_1, then plate_2 (the rule planner's 22 steps)."""
    steps: list[PlanStep] = []

    def add(instrument: str, command: str, expect: Any = None, **args: Any) -> None:
        steps.append(step(f"s{len(steps) + 1}", instrument, command, expect, **args))

    for n, plate in enumerate(("plate_1", "plate_2")):
        filled = DYE_UL - VOLUME * len(WELLS) * (n + 1)
        expect = {"wells": {f"{plate}:{w}": VOLUME for w in WELLS} | {"reservoir:A1": filled}}
        add(
            "lh1",
            "transfer",
            expect,
            source="reservoir",
            source_well="A1",
            destination=plate,
            destination_wells=WELLS,
            volume_ul=VOLUME,
            new_tip="once",
        )
        if n == 0:
            add("hs1", "unlock_plate", {"plate_lock": "unlocked"})
        add(
            "arm1",
            "move_plate",
            {"plate_location": {plate: HOLDER}},
            plate=plate,
            to_location=HOLDER,
        )
        add("hs1", "lock_plate", {"plate_lock": "locked"})
        add("hs1", "shake", {}, rpm=600, duration_s=300.0)
        add("hs1", "stop")
        add("hs1", "unlock_plate", {"plate_lock": "unlocked"})
        add("reader1", "open_drawer", {"drawer": "open"})
        if n == 1:  # plate_1 goes home first: the drawer holds one plate
            add(
                "arm1",
                "move_plate",
                {"plate_location": {"plate_1": HOMES["plate_1"]}},
                plate="plate_1",
                to_location=HOMES["plate_1"],
            )
        add(
            "arm1",
            "move_plate",
            {"plate_location": {plate: DRAWER}},
            plate=plate,
            to_location=DRAWER,
        )
        add(
            "reader1",
            "close_drawer",
            {"drawer": "closed", "plate_in_reader": plate},
            expect_plate=plate,
        )
        add(
            "reader1",
            "read_absorbance",
            {"reading": {"plate": plate, "mode": "absorbance", "wells": 96}},
            plate=plate,
            wavelength_nm=600,
        )
    return make_plan(*steps, request="prepare, shake and read plate_1 and plate_2")


def index_of(plan: Plan, instrument: str, command: str, plate: str | None = None) -> str:
    """The id of the first step of ``command`` on ``instrument`` (about ``plate``)."""
    for s in plan.steps:
        about = {s.args.get("plate"), s.args.get("destination")}
        if (
            s.instrument == instrument
            and s.command == command
            and (plate is None or plate in about)
        ):
            return s.id
    raise LookupError((instrument, command, plate))
