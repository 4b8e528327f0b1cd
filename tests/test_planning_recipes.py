"""Recipe tables: one line per well with the volume of each of two liquids, planned as one
transfer per liquid in the order the text before the table pours them."""

from __future__ import annotations

from agents.task.planning.rules import RulePlanner
from evals.planning import Labs

LABS = Labs()
TABLE = (
    "Normalise to 1 mg/mL, 50 µL final, lysates -> quant2 same well. "
    "RIPA buffer first, then lysate.\n"
    "well | lysate uL | RIPA uL\n"
    "A1   | 12.5      | 37.5\n"
    "B1   | 20        | 30\n"
    "C1   | 8         | 42\n"
    "D1   | 25        | 25"
)


def _plan(request: str):
    return RulePlanner().plan(request, LABS["b2_bca"].view)


def test_a_table_by_well_is_one_transfer_per_liquid_in_the_order_said() -> None:
    plan = _plan(TABLE)
    assert plan.kind == "plan", plan
    filled = [
        (s.args["wells"][0], s.args["volume_ul"]) for s in plan.steps if s.command == "dispense"
    ]
    moved = [
        (s.args["destination_wells"][0], s.args["volume_ul"], s.args["source_well"])
        for s in plan.steps
        if s.command == "transfer"
    ]
    # the RIPA buffer first, every well its own volume; then each lysate into the same well
    assert filled == [("A1", 37.5), ("B1", 30.0), ("C1", 42.0), ("D1", 25.0)]
    assert moved == [("A1", 12.5, "A1"), ("B1", 20.0, "B1"), ("C1", 8.0, "C1"), ("D1", 25.0, "D1")]
    final = {w: v for s in plan.steps for w, v in s.expect.get("wells", {}).items()}
    assert all(final[f"quant2:{w}1"] == 50.0 for w in "ABCD")


def test_a_row_carrying_more_than_volumes_is_never_dropped_silently() -> None:
    res = _plan(TABLE.replace("C1   | 8         | 42", "C1   | 8         | 42 then shake 1 min"))
    assert res.kind != "plan"


def test_every_row_of_the_table_is_in_the_trace() -> None:
    plan = _plan(TABLE)
    traced = {t.clause for t in plan.trace}
    for row in TABLE.splitlines()[2:]:
        assert any(row.split("|")[0].strip() in c for c in traced), row
