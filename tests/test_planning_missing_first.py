"""What the planner asks or refuses names what is really missing or impossible first: an
instrument's block is not a plate, "medium" among several media asks which, a liquid said as
the destination on several plates asks which plate, a well's capacity comes before a source's
volume."""

from __future__ import annotations

import pytest

from agents.task.planning._lexicon import Lexicon
from agents.task.planning._outcomes import Refuse
from agents.task.planning._world import World
from agents.task.planning.models import Clarification, Refusal
from agents.task.planning.rules import RulePlanner
from evals.planning import Labs


def _plan(lab: str, request: str):  # type: ignore[no-untyped-def]
    return RulePlanner().plan(request, Labs()[lab].view)


@pytest.mark.parametrize("said", ["on the shaker block", "in the heat block", "the thermo block"])
def test_an_instruments_block_names_no_plate(said: str) -> None:
    found, _ = Lexicon(Labs()["r5i_microbio"].view).labware_mentions(f"let it sit {said}")
    assert found == []


def test_the_block_alone_still_names_the_one_deep_well_block() -> None:
    found, _ = Lexicon(Labs()["r5i_microbio"].view).labware_mentions("move the block to hotel 1")
    assert [m.name for m in found] == ["starter_dw"]


def test_a_block_followed_by_a_time_is_no_plate_name() -> None:
    _, unknown = Lexicon(Labs()["deepwell"].view).labware_mentions("on the shaker block 5 min")
    assert unknown == []


def test_medium_names_the_media_and_never_a_culture() -> None:
    liquids = ["LB broth", "TB", "2xYT", "PBS", "LB overnight culture"]
    assert Lexicon.named_by_word("medium", liquids) == ["2xYT", "LB broth", "TB"]


def test_medium_among_several_media_asks_which_liquid() -> None:
    result = _plan("r5i_microbio", "add 180 uL medium to od_96 column 2")
    assert isinstance(result, Clarification)
    assert result.missing == ["liquid"]
    assert set(result.options) == {"2xYT", "LB broth", "TB"}


def test_a_liquid_said_as_the_destination_on_several_plates_asks_which_plate() -> None:
    result = _plan("r5i_imaging", "add 20 uL Calcein-AM to the cells")
    assert isinstance(result, Clarification)
    assert result.missing == ["plate"]
    assert set(result.options) == {"hepg2_96", "ipsc_24"}


def test_inoculating_from_a_plate_without_a_volume_asks_the_volume() -> None:
    result = _plan("r5i_microbio", "Inoculate od_96 A5-H5 from starter_dw column 1")
    assert isinstance(result, Clarification)
    assert result.missing == ["volume"]


def test_a_weak_verb_with_a_reading_is_a_read_not_a_move() -> None:
    result = _plan("r5i_microbio", "get the A600 of od_96")
    assert result.kind == "plan"
    assert result.trace[0].understood.startswith("read absorbance at 600 nm")


def test_a_well_that_cannot_hold_the_volume_is_refused_before_the_source() -> None:
    world = World(Labs()["r5i_imaging"].view)
    with pytest.raises(Refuse) as refused:
        world.room_for_each("hepg2_96", ["B2"], 250)  # holds 150 uL of cells, 360 uL wells
    assert refused.value.code == "capacity"


@pytest.mark.parametrize(
    "request_text",
    ["Wash: 400 uL PBS into every well of od_96.", "top up each well of od_96 with 400 uL PBS"],
)
def test_capacity_is_the_reason_when_the_trough_is_short_too(request_text: str) -> None:
    result = _plan("r5i_microbio", request_text)
    assert isinstance(result, Refusal)
    assert result.code == "capacity"


# More voices of the same phenomena (kept here: the dev part is at its size limit).
@pytest.mark.parametrize(
    ("lab", "request_text", "kind", "about"),
    [
        (
            "r5i_microbio",
            "od_96: 180 µl TB into A1-H1. Let it rest 5 min on the thermo block",
            "plan",
            "",
        ),
        (
            "r5i_microbio",
            "fill od_96 row A with 200 uL 2xYT, let it sit on the shaker block 2 min, no shaking",
            "plan",
            "",
        ),
        ("r5i_microbio", "pls put 150ul of media in od_96 A1:H1", "clarification", "liquid"),
        (
            "r5i_microbio",
            "Inoculate od_96 A5-H5 from starter_dw column 1",
            "clarification",
            "volume",
        ),
        ("r5i_microbio", "grab starter_dw off the robot pls", "clarification", "location"),
        ("standard", "can you get plate_2 off the deck for me", "clarification", "location"),
        ("r5i_microbio", "rinse glyc_pcr twice with 250 ul PBS", "refusal", "capacity"),
        (
            "r5i_imaging",
            "Could you put 50 ul of Hoechst 33342 on the cells please?",
            "clarification",
            "plate",
        ),
        (
            "r5i_imaging",
            "organoid_48 is ready so basically I only need 100ul blocking buffer into A1-A8",
            "plan",
            "",
        ),
        ("r5i_imaging", "rinse the organoids twice with 300 uL HBSS", "plan", ""),
        ("r5i_imaging", "wash the cells with HBSS", "clarification", "plate"),
        ("culture_dev", "add 50 uL to the cells in plate12", "clarification", "liquid"),
        ("culture_dev", "take the cells to the shaker", "clarification", "plate"),
        ("culture_dev", "Feed the cells with 300 uL complete DMEM", "clarification", "plate"),
        ("elisa_dev", "shake std_curve at 300 and 600 rpm for 5 min", "clarification", "speed"),
        ("elisa_dev", "read std_curve at 450 and 620 nm", "plan", ""),
        (
            "assay_dev",
            "add 50 uL fresh media to the cells and put them back in the hotel",
            "clarification",
            "location",
        ),
        ("assay_dev", "read OD 405, 450 and 570 of cell_assay", "plan", ""),
    ],
)
def test_more_voices_get_the_outcome_about_what_is_missing(
    lab: str, request_text: str, kind: str, about: str
) -> None:
    result = _plan(lab, request_text)
    assert result.kind == kind
    if isinstance(result, Clarification):
        assert about in result.missing
    if isinstance(result, Refusal):
        assert result.code == about
