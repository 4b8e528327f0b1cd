"""Standard curves as kit inserts and notebooks say them: blanks named by a row letter or by
column numbers alone, the stock's role said before the steps, "a standard curve with X"."""

from __future__ import annotations

from agents.task.planning._phrasings import rephrase
from agents.task.planning.models import Plan
from agents.task.planning.rules import RulePlanner
from evals.planning import Labs

LABS = Labs()


def _plan(request: str, lab: str) -> Plan:
    result = RulePlanner().plan(request, LABS[lab].view)
    assert isinstance(result, Plan), result
    return result


def test_a_row_letter_or_column_numbers_alone_before_blank_name_a_row_or_columns() -> None:
    assert "row H = assay buffer blank" in rephrase("A to G; H = assay buffer blank")
    assert "row H = blanks" in rephrase("100 uL final. H: blanks")
    assert "columns 11 and 12 = blank" in rephrase("100 uL final; 11 and 12 blank")
    said = "7 points, 2 blanks"  # a count of blanks, not a column
    assert rephrase(said) == said


def test_a_blank_row_under_a_heading_of_columns_runs_each_curve_down_its_column() -> None:
    plan = _plan(
        "Std curve in triplicate (std_curve cols 1-3): standard 2-fold serial in assay "
        "diluent, A-G, 100uL final, row H blank",
        "elisa_dev",
    )
    carried = [s.args for s in plan.steps if s.command == "transfer"]
    inside = [a for a in carried if a["source"] == a["destination"] == "std_curve"]
    assert {(a["source_well"], a["destination_wells"][0]) for a in inside} >= {
        ("A1", "B1"),
        ("F3", "G3"),
    }
    assert not any(a["destination_wells"][0].startswith("H") for a in inside)


def test_the_stock_said_as_the_curves_first_standard_is_no_fact_to_check() -> None:
    plan = _plan(
        "IL-6 standards S1-S7 in elisa_p1 A1-A7: S1 is the neat IL-6 calibrator 400 pg/mL, "
        "then 1:2 steps in Reagent Diluent (1X), 150 uL final; A8 blank.",
        "r7c_immuno",
    )
    first = [s.args for s in plan.steps if s.command == "transfer"][1]
    assert (first["source"], first["destination_wells"], first["volume_ul"]) == (
        "std_res",
        ["A1"],
        300.0,
    )


def test_a_standard_curve_with_a_liquid_dilutes_that_liquid() -> None:
    plan = _plan(
        "Make a standard curve with BSA 2 mg/mL, 2-fold in PBS + 0.05% Tween down bca_p2 "
        "column 3, 60 uL final",
        "r7c_immuno",
    )
    stock = [s.args for s in plan.steps if s.command == "transfer"][1]
    assert (stock["source"], stock["source_well"]) == ("std_res", "A2")


def test_a_column_number_before_a_colon_is_no_ratio_and_then_joins_a_concentration_list() -> None:
    from agents.task.planning._quantities import fold
    from agents.task.planning._series import series

    assert fold("std_curve column 1: 1000, 500, 250 pg/mL") is None
    found = series("1000, 500, 250, 125 pg/mL then 0 (blank)")
    assert found is not None and (found.fold, found.points, found.blanks) == (2.0, 4, 1)


def test_copies_per_microlitre_in_a_name_is_no_count_of_replicates() -> None:
    plan = _plan("add 100 uL gBlock std 1e7 copies/uL to dil_96 A1", "r7c_q384")
    assert [s.args["destination_wells"] for s in plan.steps if s.command == "transfer"] == [["A1"]]


def test_another_analytes_calibrator_is_not_the_labs_by_one_shared_word() -> None:
    result = RulePlanner().plan(
        "Std curve: IL-10 calibrator 2-fold in assay buffer down elisa_p1 column 1, 100 uL final",
        LABS["r7c_immuno"].view,
    )
    assert not isinstance(result, Plan)
    assert getattr(result, "missing", None) == ["liquid"]


def test_a_curve_spec_sheet_reads_as_one_line_and_other_lists_stay_as_they_are() -> None:
    from agents.task.planning._curve_specs import one_line

    sheet = "Std curve:\n- stock: BSA\n- diluent: PBS\n- plate: bca_p2, column 2\n- 2-fold"
    assert one_line(sheet) == (
        "Std curve: top standard = BSA, diluent = PBS, bca_p2, column 2, 2-fold"
    )
    steps = "Std curve:\n1. add 100 uL PBS to B1-H1\n2. tips: fresh each time"
    assert one_line(steps) == steps
