"""How requests are written, stage by stage: markdown headings and nested list items, a label on
each sentence, ranges written every way, units and numbers in words, liquids written short."""

from __future__ import annotations

import pytest
from test_rule_planner import make_lab

from agents.task.planning._clauses import ACTION_VERBS, split
from agents.task.planning._entities import extract
from agents.task.planning._labels import heading_line
from agents.task.planning._labware_names import described
from agents.task.planning._lexicon import Lexicon
from agents.task.planning._normalise import normalise
from agents.task.planning._numberwords import digits
from agents.task.planning._social import is_pleasantry, strip
from agents.task.planning._tables import rewrite as rewrite_tables
from agents.task.planning._wellsets import find_all
from agents.task.planning.models import Clarification, Plan
from agents.task.planning.rules import RulePlanner


def _clauses(request: str) -> list[tuple[str, str | None, bool]]:
    return [(c.text, c.label, c.heading) for c in split(normalise(request))]


# --------------------------------------------------------------------------- normalise
@pytest.mark.parametrize(
    ("written", "read"),
    [
        ("## Prep", "Prep:"),
        ("**Day 1**", "Day 1:"),
        ("__Plate 2__", "Plate 2:"),
        ("### Step 2: add **50 uL** buffer to A1", "Step 2: add 50 uL buffer to A1"),
    ],
)
def test_a_markdown_heading_or_bold_line_heads_what_follows_and_bold_is_only_emphasis(
    written: str, read: str
) -> None:
    assert normalise(written).text == read


def test_a_sub_item_without_wells_or_volume_qualifies_the_item_above_it() -> None:
    text = normalise("- 50 uL buffer to B1-B12\n  - fresh tip for each well\n- 5 uL dye to B1").text
    assert text.split("\n") == [
        "- 50 uL buffer to B1-B12, fresh tip for each well",
        "- 5 uL dye to B1",
    ]


def test_an_item_over_items_of_its_own_is_their_heading() -> None:
    text = normalise("- Plate 1\n  - 50 uL buffer to A1\n- Plate 2\n  - 50 uL dye to A1").text
    assert text.split("\n")[0] == "- Plate 1:" and text.split("\n")[2] == "- Plate 2:"


@pytest.mark.parametrize(
    ("written", "read"),
    [
        ("twenty-five microlitres", "25 microlitres"),
        ("one hundred and fifty uL", "150 uL"),
        ("a hundred and twenty ul", "120 ul"),
        ("seventy five min", "75 min"),
        ("two plates", "two plates"),  # a count, not a quantity: left alone
    ],
)
def test_a_number_spelled_before_a_unit_is_written_in_digits(written: str, read: str) -> None:
    assert digits(written) == read


def test_lambda_after_a_number_is_a_microlitre_and_a_particle_after_the_verb_is_dropped() -> None:
    assert normalise("aliquot 100λ buffer").text == "aliquot 100 uL buffer"
    assert normalise("Add in 45 uL buffer").text == "Add 45 uL buffer"
    assert normalise("read at λ 450 nm").text == "read at λ 450 nm"


# --------------------------------------------------------------------------- clauses
def test_each_sentence_or_semicolon_piece_may_open_with_its_own_label() -> None:
    for joint in (". ", "; "):
        got = _clauses(f"Buffer: 60 uL to D1-D12{joint}Dye: 15 uL to D1-D4")
        assert [(t, lab) for t, lab, _ in got] == [
            ("60 uL to D1-D12", "Buffer"),
            ("15 uL to D1-D4", "Dye"),
        ]


def test_a_heading_item_replaces_the_heading_above_it_for_the_items_under_it() -> None:
    got = _clauses("- Plate 1:\n- 50 uL buffer to A1\n- Plate 2:\n- 50 uL dye to A1")
    assert got[-1] == ("50 uL dye to A1", "Plate 2", False)


@pytest.mark.parametrize(
    ("line", "heading"),
    [
        ("Plate setup for tomorrow's run", True),
        ("Plate 2", True),
        ("Day 3", True),
        ("Plate out the cells", False),  # an action
        ("Mix well", False),
        ("add 50 uL to A1", False),
    ],
)
def test_a_line_that_names_the_work_below_it_is_a_heading(line: str, heading: bool) -> None:
    assert heading_line(line, ACTION_VERBS) is heading


# --------------------------------------------------------------------------- well sets
@pytest.mark.parametrize(
    "written",
    ["A1...A6", "A1 ... A6", "A1…A6", "A1 up to A6", "A1 till A6", "into wells A1 -> A6"],
)
def test_a_range_is_read_however_it_is_written(written: str) -> None:
    (found,) = find_all(written)
    assert found.expand(8, 12) == ["A1", "A2", "A3", "A4", "A5", "A6"]


def test_an_arrow_between_two_wells_without_a_destination_word_is_a_pair() -> None:
    assert [w.expand(8, 12) for w in find_all("transfer 50 uL A1 -> A6")] == [["A1"], ["A6"]]


# --------------------------------------------------------------------------- lab names
def test_liquids_written_short_are_the_lab_s_liquid_of_that_name() -> None:
    lab = make_lab(
        liquids={
            "A1": ("stop solution", 5000),
            "A2": ("capture Ab", 5000),
            "A3": ("nuclease free H2O", 5000),
            "A4": ("2x SYBR master mix", 5000),
        }
    )
    lex = Lexicon(lab)
    for written, name in [
        ("stop soln", "stop solution"),
        ("capture antibody", "capture Ab"),
        ("water", "nuclease free H2O"),
        ("ddH2O", "nuclease free H2O"),
        ("master mix", "2x SYBR master mix"),
        ("mastermix", "2x SYBR master mix"),
    ]:
        assert [m.name for m in lex.liquid_mentions(f"add 5 uL {written} to A1")] == [name]


def test_a_short_form_that_is_a_word_of_its_own_never_stands_for_a_one_word_liquid() -> None:
    lex = Lexicon(make_lab(liquids={"A1": ("antibody", 5000)}))
    assert lex.liquid_mentions("read abs at 450 nm") == []


# --------------------------------------------------------------------------- chatty voices
@pytest.mark.parametrize(
    "said",
    [
        "Could you sort that out?",
        "Can you do that for me",
        "OK here's the plan.",
        "Here is what I need",
        "I'd really appreciate it.",
        "Thanks a million",
        "Is that doable?",
    ],
)
def test_a_sentence_that_only_asks_for_the_rest_is_a_pleasantry(said: str) -> None:
    assert is_pleasantry(said.rstrip(".?"))


@pytest.mark.parametrize(
    ("said", "left"),
    [
        ("So I was thinking we put 30 uL dye in B1", "we put 30 uL dye in B1"),
        ("I think we should add 20 uL buffer to A1", "add 20 uL buffer to A1"),
        ("if it's not too much trouble - add 5 uL dye to A1", "add 5 uL dye to A1"),
    ],
)
def test_hedges_before_the_verb_are_not_part_of_the_request(said: str, left: str) -> None:
    assert strip(said) == left


def test_a_remark_in_brackets_is_set_aside_but_brackets_that_say_how_stay() -> None:
    assert normalise("75 uL buffer to E1-E6 (these are my blanks)").text == "75 uL buffer to E1-E6"
    kept = "75 uL buffer to E1-E6 (fresh tip for each)"
    assert normalise(kept).text == kept


def test_one_transfer_said_with_two_verbs_is_one_clause() -> None:
    assert _clauses("Take 40 uL of dye from the reservoir and add it to A1-A4") == [
        ("transfer 40 uL of dye from the reservoir to A1-A4", None, False)
    ]


def test_x_and_a_number_is_a_count_not_a_well() -> None:
    assert find_all("mix A1-A4 (x3)")[-1].text == "A1-A4"


# --------------------------------------------------------------------------- units and recipes
def test_a_decimal_comma_before_a_unit_is_a_decimal_point_and_thousands_stay() -> None:
    assert normalise("add 0,05 mL and 1,5 mL").text == "add 0.05 mL and 1.5 mL"
    assert normalise("shake at 1,000 rpm").text == "shake at 1,000 rpm"


@pytest.mark.parametrize("written", ["50 ul/w", "50 microL", "50 µl. buffer"])
def test_a_microlitre_is_read_however_it_is_abbreviated(written: str) -> None:
    lex = Lexicon(make_lab())
    (q,) = extract(normalise(f"add {written} to A1").text, lex, ()).volumes()
    assert q.value == 50


def test_a_word_of_a_liquid_s_name_takes_the_name_s_words_after_it_and_its_plural() -> None:
    lab = make_lab(liquids={"A1": ("2x SYBR master mix", 5000), "A2": ("primer mix F+R", 5000)})
    ents = extract("add 10 uL SYBR mix and 2 uL primers to A1", Lexicon(lab), ())
    assert [m.name for m in ents.liquids] == ["2x SYBR master mix", "primer mix F+R"]
    assert not ents.mix  # "SYBR mix" is a liquid, not a request to mix


def test_volumes_and_liquids_listed_after_the_wells_are_one_transfer_each() -> None:
    result = RulePlanner().plan("plate_1 A1-A3: 20 uL dye, 80 uL buffer", make_lab())
    assert isinstance(result, Plan)
    assert [t.understood.split(" (")[0] for t in result.trace] == [
        "transfer 20 uL of dye",
        "transfer 80 uL of buffer",
    ]


@pytest.mark.parametrize(
    ("said", "read"),
    [
        ("get plate_1 read at 450 nm", "read plate_1 at 450 nm"),
        ("have plate_1 shaken for 2 min", "shake plate_1 for 2 min"),
        ("plate_1 needs to be read at 450 nm", "read plate_1 at 450 nm"),
        ("I want plate_1 read at 600 nm", "read plate_1 at 600 nm"),
        ("plate_1 read 0.4 at 600 nm", "plate_1 read 0.4 at 600 nm"),  # a result, no command
    ],
)
def test_work_said_of_its_plate_as_a_wish_or_in_the_passive_is_a_command(
    said: str, read: str
) -> None:
    assert normalise(said).text == read


@pytest.mark.parametrize(
    ("written", "wells"),
    [("B1 ~ B6", "B1..B6"), ("B1-thru-B6", "B1..B6"), ("the first 6 wells of row B", "B1..B6")],
)
def test_more_ways_to_write_a_range(written: str, wells: str) -> None:
    (found,) = find_all(normalise(written).text)
    got = found.expand(8, 12)
    assert f"{got[0]}..{got[-1]}" == wells and len(got) == 6


@pytest.mark.parametrize(
    "said", ["no need to mix", "mixing not required", "doesn't need to be mixed", "don't mix"]
)
def test_saying_not_to_mix_is_never_a_mix(said: str) -> None:
    ents = extract(f"add 50 uL buffer to A1-A6, {said}", Lexicon(make_lab()), ())
    assert ents.no_mix and not ents.mix


def test_a_plate_is_named_by_a_word_of_its_id_when_no_other_has_it() -> None:
    plates = [make_lab().labware[n] for n in ("plate_1", "plate_2", "reservoir")]
    assert described("from the reservoir to the plate", plates, []) == [("reservoir", 5, 18)]
    sera = plates[0].model_copy(update={"id": "sera_plt"})
    assert described("the sera plate", [sera, *plates[1:]], []) == [("sera_plt", 0, 14)]


@pytest.mark.parametrize("quoted", ["`a; b`", "«a; b»", "‚a; b‘", "‹a; b›"])
def test_backticks_and_guillemets_quote_a_name(quoted: str) -> None:
    norm = normalise(f"add 5 uL of {quoted} to A1")
    assert norm.quoted == ("a; b",) and ";" not in norm.text


def test_a_tip_sentence_inside_a_list_item_belongs_to_that_item() -> None:
    text = normalise("1. Add 50 uL PBS to A1-A6. Use a fresh tip each time.\n2. Add DMSO").text
    assert text.split("\n")[0] == "1. Add 50 uL PBS to A1-A6, Use a fresh tip each time."


def test_a_liquid_s_form_is_one_sentence() -> None:
    form = "Plate: elisa_A\nWells: A1-A6\nReagent: TMB\nVolume: 100 uL"
    assert rewrite_tables(form) == "Add 100 uL TMB to elisa_A A1-A6"
    assert rewrite_tables("Reagent = PBS-T; volume = 150 uL; wells = B1-B12") == (
        "Add 150 uL PBS-T to  B1-B12"
    )


def test_a_liquid_is_named_by_its_initials_and_a_plate_by_the_liquid_it_holds() -> None:
    lab = make_lab(liquids={"A1": ("nuclease-free water", 5000), "A2": ("dye", 5000)})
    assert [m.name for m in Lexicon(lab).liquid_mentions("20 uL NFW")] == ["nuclease-free water"]
    assert normalise("Using the library plate, put 5 uL from A2 into E2").text == (
        "put 5 uL from the library plate A2 into E2"
    )


def test_wells_between_two_liquids_are_not_dropped_for_the_wells_after_them() -> None:
    said = "add 20 uL dye to plate_1 A1-A4 5) 10 uL buffer to plate_1 B1-B4"
    result = RulePlanner().plan(said, make_lab())
    assert isinstance(result, Clarification)  # never the dye into B1-B4 alone
