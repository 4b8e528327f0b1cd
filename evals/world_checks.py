"""Checks of the simulated world at the end of a run: tips on channels, mixing cycles,
instrument status (temperatures, locks, drawers) and "the world equals the uncrashed run's".

Each returns the failures it finds, worded for a person reading the report.
"""

from __future__ import annotations

from typing import Any

from device_servers.sim.world import SimWorld
from evals.scenario import Expect

STATUS_TOLERANCE = 0.5  # a temperature within half a degree, an rpm within one half


def tips_on_channels(world: SimWorld, expect: Expect) -> list[str]:
    out = []
    for inst, allowed in expect.tips_on_channels.items():
        carrying = [i for i, c in enumerate(world.channels(inst)) if c["tip"]]
        if len(carrying) > allowed:
            out.append(f"{inst}: channels {carrying} still carry a tip, expected at most {allowed}")
    return out


def mix_cycles(world: SimWorld, expect: Expect) -> list[str]:
    """A cycle: an aspiration from a well followed, on the same channel of the same
    instrument, by a dispense back into that well."""
    counted: dict[tuple[str, str], int] = {}
    last: dict[tuple[str, int], dict[str, Any]] = {}
    for op in world.physical_ops():
        where = (str(op["instrument"]), int(op["channel"] or 0))
        before = last.get(where)
        if (
            op["op"] == "dispense"
            and before is not None
            and before["op"] == "aspirate"
            and (before["labware"], before["well"]) == (op["labware"], op["well"])
        ):
            key = (str(op["labware"]), str(op["well"]))
            counted[key] = counted.get(key, 0) + 1
        last[where] = op
    out = []
    for check in expect.mix_cycles:
        for well in check.wells:
            got = counted.get((check.labware, well), 0)
            if got != check.cycles:
                out.append(f"{check.labware}:{well} mixed {got} times, expected {check.cycles}")
    return out


def status(world: SimWorld, expect: Expect) -> list[str]:
    out = []
    for inst, wanted in expect.status.items():
        seen = world.status(inst)
        for key, value in wanted.items():
            got = seen.get(key)
            numeric = isinstance(value, int | float) and not isinstance(value, bool)
            if numeric and isinstance(got, int | float) and not isinstance(got, bool):
                same = abs(float(got) - float(value)) <= STATUS_TOLERANCE
            else:
                same = got == value
            if not same:
                out.append(f"{inst} {key} is {got!r}, expected {value!r}")
    return out


def snapshot(world: SimWorld) -> dict[str, Any]:
    """Wells (volume and contents, rounded), tips in racks, tips on channels, plates."""
    labware = [r[0] for r in world.conn.execute("SELECT DISTINCT labware FROM wells")]
    racks = [r[0] for r in world.conn.execute("SELECT DISTINCT rack FROM tips")]
    insts = [r[0] for r in world.conn.execute("SELECT DISTINCT instrument FROM channels")]
    wells = {
        f"{lw}:{name}": (
            round(cell["volume_ul"], 4),
            {k: round(v, 4) for k, v in sorted(cell["contents"].items()) if round(v, 4)},
        )
        for lw in labware
        for name, cell in world.wells(lw).items()
    }
    return {
        "wells": wells,
        "tips": {r: sorted(s for s, present in world.tips(r).items() if present) for r in racks},
        "channels": {i: [bool(c["tip"]) for c in world.channels(i)] for i in insts},
        "plates": world.plates(),
    }


def equals_uncrashed(world: SimWorld, reference: SimWorld) -> list[str]:
    got, want = snapshot(world), snapshot(reference)
    out = []
    wells = sorted(set(got["wells"]) | set(want["wells"]))
    differ = [w for w in wells if got["wells"].get(w) != want["wells"].get(w)]
    if differ:
        shown = ", ".join(
            f"{w} {got['wells'].get(w, ('-',))[0]} vs {want['wells'].get(w, ('-',))[0]} uL"
            for w in differ[:5]
        )
        out.append(f"{len(differ)} wells differ from the uncrashed run: {shown}")
    for rack in sorted(set(got["tips"]) | set(want["tips"])):
        have, ref = set(got["tips"].get(rack, [])), set(want["tips"].get(rack, []))
        if have != ref:
            out.append(
                f"tips in {rack} differ from the uncrashed run: used here only "
                f"{sorted(ref - have)}, used there only {sorted(have - ref)}"
            )
    for key in ("channels", "plates"):
        if got[key] != want[key]:
            out.append(f"{key} differ from the uncrashed run: {got[key]} vs {want[key]}")
    return out


def mentions(questions: list[str], expect: Expect) -> list[str]:
    text = "\n".join(questions).lower()
    out = []
    missing = [w for w in expect.escalation_mentions if w.lower() not in text]
    if missing:
        out.append(f"the person's questions do not mention {missing}")
    present = [w for w in expect.escalation_lacks if w.lower() in text]
    if present:
        out.append(f"the person's questions mention {present}")
    return out


def check_world(
    world: SimWorld, expect: Expect, reference: SimWorld | None, questions: list[str]
) -> list[str]:
    """Every world check the scenario asks for."""
    failures = tips_on_channels(world, expect) + mix_cycles(world, expect) + status(world, expect)
    if reference is not None:
        failures += equals_uncrashed(world, reference)
    return failures + mentions(questions, expect)
