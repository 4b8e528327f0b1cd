"""The pieces of a serial dilution said apart from its sentence: the diluent and final volume
in the next sentence, the fold under a heading that names the titration, and the stock's wells
named beside it without a plate."""

from __future__ import annotations

from dataclasses import replace

import pytest

from agents.task.planning._clauses import split
from agents.task.planning._entities import extract
from agents.task.planning._lexicon import Lexicon
from agents.task.planning._normalise import normalise
from agents.task.planning._pieces import _merge_fragments
from agents.task.planning._reading import _read
from agents.task.planning.models import Plan
from agents.task.planning.rules import RulePlanner
from evals.plan_sim import simulate
from evals.planning import Labs

LABS = Labs()


def _families(request: str, lab: str = "standard") -> list[str | None]:
    """The family of each frame once the dilution's pieces are joined to it."""
    lex = Lexicon(LABS[lab].view)
    norm = normalise(request)
    clauses = split(replace(norm), frozenset(lex.labware))
    read_in = _merge_fragments([_read(c, lex, norm.quoted) for c in clauses], lex, norm)
    return [fam.name if fam else None for _, fam in read_in]


@pytest.mark.parametrize(
    "request_text",
    [
        "2-fold serial dilution of dye across plate_1 row A, A1 to A8. Buffer as diluent, "
        "100 uL final in every well.",
        "2-fold serial dilution of dye across plate_1 row A, A1 to A8. Buffer is the diluent; "
        "100 uL final per well.",
        "Titrate dye along row B of plate_1: 3-fold, B1 to B6, 120 uL final per well, buffer "
        "as diluent.",
    ],
)
def test_a_dilutions_roles_and_final_volume_said_apart_join_it(request_text: str) -> None:
    assert _families(request_text) == ["dilution"]


def test_a_next_sentence_that_fills_wells_of_its_own_stays_a_step() -> None:
    request = (
        "2-fold serial dilution of dye across plate_1 row A, A1 to A8. Add 50 uL buffer to B1."
    )
    assert len(_families(request)) == 2


def test_a_number_that_numbers_a_column_is_no_count_of_a_liquid() -> None:
    lex = Lexicon(LABS["r5s_mic"].view)
    ents = extract("dilute the column 1 inoculum across mic_B", lex, ())
    assert [m.name for m in ents.liquids] == ["E. coli inoculum"]


def _moves(request: str, lab: str) -> set[tuple[str, str | None]]:
    result = RulePlanner().plan(request, LABS[lab].view)
    assert isinstance(result, Plan), result
    return {(op.src, op.dst) for op in simulate(LABS[lab], result).ops}


@pytest.mark.parametrize(
    ("lab", "request_text", "first_step"),
    [
        (
            "standard",
            "Dye from reservoir A1, 4-fold series on plate_2 row C:\n1. 150 uL buffer into "
            "plate_2 C2-C6\n2. 200 uL dye from reservoir A1 into plate_2 C1\n3. 50 uL C1 > C2 > "
            "C3 > C4 > C5 > C6, mix each time",
            ("plate_2:C1", "plate_2:C2"),
        ),
        (
            "r5s_mic",
            "Gentamicin stock drug_tubes A3, 2-fold series in mic_B row F:\na) 100 uL CA-MHB to "
            "mic_B F2-F8\nb) 200 uL gentamicin stock from drug_tubes A3 to mic_B F1\nc) 100 uL "
            "F1 -> F2 -> F3 -> F4 -> F5 -> F6 -> F7 -> F8, mixing after each",
            ("mic_B:F1", "mic_B:F2"),
        ),
        (
            "r5s_quant",
            "lambda DNA (stds_blk A1), ten-fold ladder in quant384 row B\nstep 1: 27 uL IDTE "
            "buffer into quant384 B2-B6\nstep 2: 30 uL lambda DNA from stds_blk A1 into quant384 "
            "B1\nstep 3: 3 uL B1 -> B2 -> B3 -> B4 -> B5 -> B6, mix 5x",
            ("quant384:B1", "quant384:B2"),
        ),
    ],
)
def test_a_spelled_out_chain_under_a_series_heading_runs_on_the_series_plate(
    lab: str, request_text: str, first_step: tuple[str, str]
) -> None:
    """The heading names the stock's one well and the series' line: the chain's plate-less
    wells are on the line's plate, never the stock's."""
    moves = _moves(request_text, lab)
    assert first_step in moves
    stock_plate = {"standard": "reservoir", "r5s_mic": "drug_tubes", "r5s_quant": "stds_blk"}[lab]
    assert not any(dst and dst.startswith(stock_plate) for _, dst in moves)


@pytest.mark.parametrize(
    ("lab", "request_text", "diluent", "step"),
    [
        (
            "standard",
            "Serial dilution: 20 uL dye into 200 uL final, plate_1 A1 to A6, buffer as diluent",
            180,
            20,
        ),
        (
            "r5s_mic",
            "Serial dilution: 10 uL gentamicin stock from drug_tubes A4 into 100 uL final, mic_A "
            "row G, G1 to G6, CA-MHB as diluent",
            90,
            10,
        ),
        (
            "r5s_quant",
            "Std curve - lambda DNA 100 ng/uL in IDTE buffer, quant384 D1-D5, 5 uL into 50 uL "
            "total each step",
            45,
            5,
        ),
    ],
)
def test_x_into_y_final_is_a_step_made_at_y_and_never_a_plain_transfer(
    lab: str, request_text: str, diluent: float, step: float
) -> None:
    """ "20 uL into 200 uL final": 180 uL of diluent per well, 20 uL carried along; the step is
    spelled out, so the last well keeps its 200 uL (nothing goes to waste)."""
    result = RulePlanner().plan(request_text, LABS[lab].view)
    assert isinstance(result, Plan), result
    volumes = {s.args["volume_ul"] for s in result.steps if s.command == "transfer"}
    assert {diluent, step} <= volumes
    assert not any(s.command == "aspirate" for s in result.steps)  # no excess to waste


def test_x_into_y_final_that_disagrees_with_the_fold_said_is_asked() -> None:
    result = RulePlanner().plan(
        "2-fold serial dilution of dye in buffer, plate_2 row A A1 to A5, 20 uL into 200 uL final",
        LABS["standard"].view,
    )
    assert result.kind == "clarification" and "fold" in result.missing


@pytest.mark.parametrize(
    ("lab", "request_text", "blank", "last_carried_to"),
    [
        (
            "assay_dev",
            "8-point 1:3 curve of BSA standard in PBS down dil_plate column 1, 150 uL final, "
            "last well buffer only",
            "dil_plate:H1",
            "dil_plate:G1",
        ),
        (
            "standard",
            "6 point 2-fold series of dye in buffer along plate_1 row D, 100 uL final; the last "
            "one gets just buffer",
            "plate_1:D6",
            "plate_1:D5",
        ),
    ],
)
def test_a_last_well_said_to_hold_diluent_alone_is_a_blank_not_a_point(
    lab: str, request_text: str, blank: str, last_carried_to: str
) -> None:
    moves = _moves(request_text, lab)
    assert any(dst == blank for _, dst in moves)  # filled with the diluent
    assert not any(
        src == blank or (dst == blank and src and src.split(":")[0] == blank.split(":")[0])
        for src, dst in moves
    )
    assert any(
        dst == last_carried_to and src and src.split(":")[0] == blank.split(":")[0]
        for src, dst in moves
    )


@pytest.mark.parametrize(
    ("lab", "request_text", "last_step"),
    [
        (
            "standard",
            "put 200 uL dye in plate_1 A1 and 100 uL buffer in A2-A8, then transfer 100 uL from "
            "A1 into the buffer in A2, mix, and continue to A8",
            ("plate_1:A7", "plate_1:A8"),
        ),
        (
            "assay_dev",
            "150 uL compound into dil_plate A5, 100 uL DMSO in B5 through H5. Take 50 uL from A5 "
            "into the DMSO in B5, mix, and carry on to H5.",
            ("dil_plate:G5", "dil_plate:H5"),
        ),
    ],
)
def test_a_step_into_what_a_well_holds_carried_on_is_a_chain(
    lab: str, request_text: str, last_step: tuple[str, str]
) -> None:
    """ "into the buffer in A2" names what A2 holds, not a liquid to move: "continue to A8"
    carries the step on along the line."""
    assert last_step in _moves(request_text, lab)


def test_a_line_named_after_the_stock_and_its_diluent_is_where_the_series_runs() -> None:
    moves = _moves(
        "twofold titration of gentamicin stock from drug_tubes A2 in CA-MHB, mic_B C1-C8, "
        "100 ul final volume.",
        "r5s_mic",
    )
    assert ("drug_tubes:A2", "mic_B:C1") in moves and ("mic_B:C7", "mic_B:C8") in moves
