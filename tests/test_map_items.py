"""A plate map said on one line is cut into its items, each with its own wells and volume;
work whose pieces belong together (a series, a level, a pick list with each well's volume,
a head or tips said for all) is never cut."""

from __future__ import annotations

import pytest

from agents.task.planning._map_colons import map_items


@pytest.mark.parametrize(
    ("line", "items"),
    [
        ("plate_2 A1-A6: 50 uL buffer, B1-B6: 50 uL dye", 2),  # wells, colon, what
        ("plate_2 B7-B12: 100 uL buffer and plate_2 D4: 40 uL buffer", 2),  # plate first
        ("Into plate_1: buffer 30 uL -> E7-E12, buffer 25 uL -> D1, D2, D3.", 2),  # volume first
        ("plate_1 - col 9 buffer 75 uL | row C buffer 60 uL", 2),  # a bar between
        ("On plate_1: F1 to F4 - 50 uL buffer and D1, D2, D3 - 25 uL dye", 2),  # wells lists
        ("On plate_1: dye 20 uL -> row C and buffer 25 uL -> col 9", 2),
        ("A1-A6: 10 uL dye, B1-B6: 20 uL dye, C1-C6: 30 uL dye", 3),
        ("add 50 uL buffer to A1 and B1, 30 uL dye to C1", 2),  # B1 stays with the first
    ],
)
def test_a_map_line_is_cut_into_its_items(line: str, items: int) -> None:
    cut = map_items(line).split("; ")
    assert len(cut) == items
    assert all("uL" in item for item in cut)


def test_the_wells_between_stay_with_their_item() -> None:
    assert map_items("On plate_1: F1 to F4 - 50 uL buffer and D1, D2, D3 - 25 uL dye") == (
        "On plate_1: F1 to F4 - 50 uL buffer; D1, D2, D3 - 25 uL dye"
    )
    assert map_items("add 50 uL buffer to A1 and B1, 30 uL dye to C1") == (
        "add 50 uL buffer to A1 and B1; 30 uL dye to C1"
    )


@pytest.mark.parametrize(
    "line",
    [
        "add 50 uL buffer to A1, A2, A3",  # one volume
        "Add 100 uL buffer to A1-A6, mix 3x with 50 uL",  # a mix, no wells of its own
        "200 uL dye in A1, 100 uL buffer in A2-A12, then 2-fold across",  # a series
        "Bring dna_plate column 1 to 50 uL with water and column 2 to 70 uL",  # levels
        "Fill columns 1-6 with 100 uL dye and columns 7-12 with 100 uL buffer, 8-channel",
        "Pick samples A12 (25 uL), B11 (25 uL) and C10 (40 uL) into dest_plate A1-A3",
        "There is 12 mL of buffer in reservoir A2 and 5 mL of water in A1",  # facts
        "buffer to plate_1 (A1, 20 uL | B1, 30 uL)",  # items inside brackets
    ],
)
def test_one_piece_of_work_is_never_cut(line: str) -> None:
    assert map_items(line) == line
