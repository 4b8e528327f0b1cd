"""The rule planner reads the instruments' part of a request as people write it: reads with
reference wavelengths and glued ex/em, repeated reads, a pair of wavelengths without a mode,
places of the hotel said every way, a liquid added without its verb in a run, a step said to
be skipped."""

from __future__ import annotations

from typing import Any

import pytest
from test_rule_planner import LAB

from agents.task.planning import Clarification, Plan, Refusal, RulePlanner


def plan(request: str) -> Plan | Clarification | Refusal:
    return RulePlanner().plan(request, LAB)


def steps(result: Any, command: str) -> list[dict[str, Any]]:
    assert isinstance(result, Plan), result
    return [dict(s.args) for s in result.steps if s.command == command]


@pytest.mark.parametrize(
    "request_",
    ["plate_1: A450 with 570 ref", "read plate_1 OD 450 (reference 570 nm)"],
)
def test_a_reference_wavelength_is_read_too(request_: str) -> None:
    reads = steps(plan(request_), "read_absorbance")
    assert [r["wavelength_nm"] for r in reads] == [450, 570]


def test_a_pair_of_wavelengths_without_a_mode_is_asked_about() -> None:
    result = plan("read plate_1 at 450/620")
    assert isinstance(result, Clarification) and result.missing == ["mode"]
    reads = steps(plan("read plate_1 absorbance 450/620"), "read_absorbance")
    assert [r["wavelength_nm"] for r in reads] == [450, 620]


def test_excitation_and_emission_glued_to_their_numbers_are_read() -> None:
    (read,) = steps(plan("Read fluorescence Ex560/Em590 on plate_2"), "read_fluorescence")
    assert (read["excitation_nm"], read["emission_nm"]) == (560, 590)


def test_a_read_said_three_times_is_three_reads() -> None:
    assert len(steps(plan("read the OD600 of plate_2, 3 times"), "read_absorbance")) == 3


@pytest.mark.parametrize(
    "request_",
    [
        "move plate_1 to hotel position #2",
        "Move plate_1 to slot 2 of the hotel",
        "move plate_1 to the 2nd hotel slot",
        "plate_1 -> hotel 2",
    ],
)
def test_a_numbered_hotel_place_is_found_however_it_is_said(request_: str) -> None:
    (move,) = steps(plan(request_), "move_plate")
    assert move["to_location"] == "hotel:2"


def test_a_liquid_without_its_verb_after_a_wait_goes_into_the_same_wells() -> None:
    result = plan("Add 50 uL dye to plate_1 A1:A6; 15 min RT; 50 uL buffer; read 450 nm")
    first, second = steps(result, "transfer")
    assert second["destination_wells"] == first["destination_wells"]
    assert (first["source_well"], second["source_well"]) == ("A1", "A2")


@pytest.mark.parametrize("skipped", ["No wash step.", "Skip the wash;", "Don't shake."])
def test_a_step_said_to_be_skipped_is_a_remark(skipped: str) -> None:
    result = plan(f"{skipped} Add 100 uL buffer to plate_1 A1:A6, then read at 450 nm")
    assert isinstance(result, Plan), result
    assert [s.command for s in result.steps if s.instrument != "arm1"][-1] == "read_absorbance"
    assert not steps(result, "shake")


def test_then_back_to_the_deck_moves_the_plate_home() -> None:
    moves = steps(plan("read plate_1 at 600 nm, then back to the deck"), "move_plate")
    assert moves[-1]["to_location"] == "lh1:plate_carrier:1"


def test_the_digits_of_a_liquid_name_are_never_a_volume() -> None:
    from agents.task.planning._liquid_names import by_phrase

    names = [name for name, rx in by_phrase(["CellTiter-Glo 2.0", "resazurin"]) if rx.search("20")]
    assert names == []


@pytest.mark.parametrize(
    "request_",
    [
        "shake plate_1 for 2 minutes at 600 rpm before reading luminescence",
        "Before reading luminescence, shake plate_1 2 min at 600 rpm",
        "read plate_1 luminescence after shaking it 2 min at 600 rpm",
    ],
)
def test_before_and_after_put_the_steps_in_the_order_they_run(request_: str) -> None:
    result = plan(request_)
    assert isinstance(result, Plan), result
    done = [s.command for s in result.steps if s.command in ("shake", "read_luminescence")]
    assert done == ["shake", "read_luminescence"]


def test_a_read_after_a_time_waits_that_time_first() -> None:
    result = plan("Read plate_1 at 570 nm after 30 min at 37 C")
    assert isinstance(result, Plan), result
    done = [s.command for s in result.steps if s.command in ("hold", "read_absorbance")]
    assert done == ["hold", "read_absorbance"]
    assert steps(result, "hold")[0]["duration_s"] == 1800


def test_spinning_on_the_shaker_is_shaking_not_a_centrifuge() -> None:
    assert steps(plan("spin plate_1 on the shaker at 1200 rpm for 45 s"), "shake")


def test_a_step_told_in_brackets_is_a_step_of_its_own() -> None:
    result = plan("shake plate_1 1 min at 600 rpm (then read luminescence)")
    assert steps(result, "read_luminescence")


def test_a_move_told_in_two_halves_is_one_move() -> None:
    result = plan("read plate_1 at 600 nm, then take it out of the reader and put it in hotel 2")
    assert steps(result, "move_plate")[-1]["to_location"] == "hotel:2"


def test_a_shaker_pre_warmed_gives_the_next_incubation_its_temperature() -> None:
    result = plan("pre-warm the heater shaker to 37 C, then incubate plate_1 for 1 h")
    assert steps(result, "set_temperature")[-1]["celsius"] == 37


def test_five_percent_co2_needs_an_incubator_the_lab_lacks() -> None:
    result = plan("Incubate plate_1 at 37 C, 5% CO2, for 24 h")
    assert isinstance(result, Refusal) and result.code == "missing_instrument"


def test_return_all_plates_brings_every_plate_away_from_home_back() -> None:
    result = plan(
        "move plate_1 to hotel 1 and plate_2 to hotel 2, then return all plates to the deck"
    )
    moves = [m["to_location"] for m in steps(result, "move_plate")]
    assert moves[-2:] == ["lh1:plate_carrier:1", "lh1:plate_carrier:2"]


def test_a_wait_said_after_the_last_step_runs_just_before_it() -> None:
    result = plan("Put 100 uL buffer in plate_1 A1 to A12 and read 450 nm after 5 min")
    assert isinstance(result, Plan), result
    done = [s.command for s in result.steps if s.command in ("transfer", "hold", "read_absorbance")]
    assert done == ["transfer", "hold", "read_absorbance"]


def test_a_step_said_to_be_done_by_hand_is_a_remark() -> None:
    result = plan("Wash step is done by hand. Read plate_1 at 450 nm")
    assert isinstance(result, Plan) and steps(result, "read_absorbance")


def test_developing_and_equilibrating_are_waits_and_protect_from_light_a_remark() -> None:
    result = plan(
        "Add 50 uL dye to plate_1 A1:A6, protect from light and develop for 15 min, then "
        "allow to equilibrate at room temperature for 10 min"
    )
    assert [h["duration_s"] for h in steps(result, "hold")] == [900, 600]


def test_a_spectrum_is_refused_before_its_range_is_asked_about() -> None:
    result = plan("Read plate_1 abs spectrum 400-700 nm")
    assert isinstance(result, Refusal) and result.code == "capacity"


def test_then_onto_an_instrument_named_by_its_id_moves_the_plate_there() -> None:
    moves = steps(plan("move plate_1 into hotel 2, then onto hs1"), "move_plate")
    assert [m["to_location"] for m in moves] == ["hotel:2", "hs1:holder"]


def test_a_pair_of_wavelengths_is_read_as_the_assay_label_reads() -> None:
    (read,) = steps(plan("PicoGreen assay: read plate_1 at 485/535"), "read_fluorescence")
    assert (read["excitation_nm"], read["emission_nm"]) == (485, 535)
    reads = steps(plan("BCA: read plate_1 at 562/650"), "read_absorbance")
    assert [r["wavelength_nm"] for r in reads] == [562, 650]


def test_a_read_of_those_wells_reads_the_wells_just_filled() -> None:
    (read,) = steps(
        plan("add 50 uL buffer to plate_1 A1-A6, then read those wells at 600 nm"),
        "read_absorbance",
    )
    assert read["wells"] == ["A1", "A2", "A3", "A4", "A5", "A6"]
    (whole,) = steps(
        plan("add 50 uL buffer to plate_1 A1-A6, then read it at 600 nm"), "read_absorbance"
    )
    assert "wells" not in whole


def test_a_count_of_those_wells_that_disagrees_is_asked_about() -> None:
    result = plan("add 50 uL buffer to plate_1 A1-A6, then read those 4 wells at 600 nm")
    assert isinstance(result, Clarification) and result.missing == ["wells"]
