"""Each stage of the rule planner on its own: normalise, clauses, quantities, well sets, lab
names, entities, frames, tip policies and channels, the coverage check."""

from __future__ import annotations

import pytest
from test_rule_planner import LAB, make_lab

from agents.task.planning import _pipetting as pip
from agents.task.planning._blanks import blank_note, split_blanks
from agents.task.planning._clauses import split
from agents.task.planning._coverage import clauses_of, problems
from agents.task.planning._entities import extract
from agents.task.planning._frames import read
from agents.task.planning._lexicon import Lexicon, closest
from agents.task.planning._normalise import normalise
from agents.task.planning._quantities import fold, quantities, steps, times
from agents.task.planning._wellsets import SelectionError, find_all
from agents.task.planning._world import World
from agents.task.planning.models import Plan, PlanStep, TraceItem
from agents.task.planning.rules import RulePlanner


def _texts(request: str) -> list[str]:
    return [c.text for c in split(normalise(request))]


# --------------------------------------------------------------------------- normalise
def test_normalise_spells_units_dashes_and_degrees_one_way() -> None:
    norm = normalise("add 50 µL to A1–A12 at 37°C — thanks")
    assert norm.text == "add 50 uL to A1-A12 at 37 C - thanks"


def test_quoted_text_is_held_aside_and_never_read_as_a_clause() -> None:
    norm = normalise('add 50 uL of "wash; then shake at 90 C" to A1')
    assert norm.quoted == ("wash; then shake at 90 C",)
    assert _texts('add 50 uL of "wash; then shake at 90 C" to A1') == ["add 50 uL of «q0» to A1"]


# --------------------------------------------------------------------------- clauses
@pytest.mark.parametrize(
    ("request_text", "expected"),
    [
        ("add 50 uL to A1, then shake for 1 min", ["add 50 uL to A1", "shake for 1 min"]),
        ("read at 450 nm; move it to hotel 1", ["read at 450 nm", "move it to hotel 1"]),
        ("add 50 uL to A1, shake it, read it", ["add 50 uL to A1", "shake it", "read it"]),
        ("A1 holds dye. Mix it 3 times.", ["A1 holds dye", "Mix it 3 times"]),
        ("1. add 5 uL to A1\n2) read OD600", ["add 5 uL to A1", "read OD600"]),
        ("- add 5 uL to A1\n* mix A1 3x", ["add 5 uL to A1", "mix A1 3x"]),
        (
            "put 100 uL buffer into A2-A12 and 200 uL dye into A1",
            ["put 100 uL buffer into A2-A12", "200 uL dye into A1"],
        ),
        ("shake 2 min followed by a read at 450 nm", ["shake 2 min", "a read at 450 nm"]),
        ("could you add 5 uL to A1? thanks!", ["add 5 uL to A1", "thanks"]),
        (
            "chain A1 -> B1 -> C1, 30 uL each, after filling B1-C1 with buffer",
            ["filling B1-C1 with buffer", "chain A1 -> B1 -> C1, 30 uL each"],
        ),
        (
            "100 uL dye to A1, 30 min RT in the dark, 100 uL buffer, read A450",
            ["100 uL dye to A1", "30 min RT in the dark", "100 uL buffer", "read A450"],
        ),
    ],
)
def test_requests_split_into_clauses_at_every_kind_of_boundary(
    request_text: str, expected: list[str]
) -> None:
    assert _texts(request_text) == expected


def test_numbers_inline_mark_items_not_sentences() -> None:
    assert _texts("1. add 5 uL dye to A1; 2. add 5 uL buffer to A2; 3. read at 600 nm") == [
        "add 5 uL dye to A1",
        "add 5 uL buffer to A2",
        "read at 600 nm",
    ]
    assert _texts("Dilute 1 in 2. Then read") == ["Dilute 1 in 2", "read"]  # one number: a sentence


def test_wells_paired_between_two_dashes_are_an_aside_and_a_spaced_range_is_not() -> None:
    said = normalise("5 uL of each - src column 1 into dst A1-A8 - mix 3x").text
    assert said == "5 uL of each (src column 1 into dst A1-A8) mix 3x"
    assert normalise("add 5 uL to A1 - A8 - mix 3x").text == "add 5 uL to A1 - A8 - mix 3x"
    assert "(" not in normalise("95C - 30s, 55C - 30s").text


def test_letters_inline_mark_the_items_of_a_list() -> None:
    clauses = split(
        normalise("Assay: (a) add 5 uL dye to A1 (b) add 5 uL buffer to A2, fresh tips (c) read")
    )
    assert [c.text for c in clauses][-3:] == [
        "add 5 uL dye to A1",
        "add 5 uL buffer to A2, fresh tips",
        "read",
    ]
    assert len({c.sentence for c in clauses[-3:]}) == 3  # each item its own
    assert _texts("mix (a) and (b) well") == ["mix (a) and (b) well"]  # no list


def test_a_unit_abbreviated_with_a_period_does_not_end_a_sentence() -> None:
    assert _texts("move 50 ul. of buffer to A2") == ["move 50 uL of buffer to A2"]
    assert _texts("add 50 uL. Then read") == ["add 50 uL", "read"]


def test_a_first_semicolon_piece_or_a_line_without_its_colon_can_head_a_list() -> None:
    semis = split(normalise("Pick from samples to plate_2; 10 uL each; A1 to B2; C3 to B3"))
    assert [(c.text, c.heading, c.label) for c in semis][:2] == [
        ("Pick from samples to plate_2", True, None),
        ("10 uL each", False, "Pick from samples to plate_2"),
    ]
    lines = split(normalise("Cherry-pick list, samples to plate_2\n1. A3 to A1\n2. C7 to A2"))
    assert lines[0].heading and lines[1].label and lines[2].label


def test_a_line_opener_naming_the_labs_labware_is_a_clause_not_a_label() -> None:
    text = "Fluorescence read of qc: ex 485 / em 535"
    (alone,) = split(normalise(text))
    assert alone.label == "Fluorescence read of qc"  # no lab: an opener of letters is a label
    (named,) = split(normalise(text), frozenset({"qc", "tr"}))
    assert named.label is None and named.text == text
    items = split(normalise("* tr: 60 uL PBS in B1-B4"), frozenset({"tr"}))
    assert [c.label for c in items if c.label] == []
    assert clauses_of(text, ["QC"]) == [text]


def test_a_label_opens_its_clauses_and_a_line_ending_in_a_colon_is_a_heading() -> None:
    clauses = split(normalise("ELISA step: add 100 uL TMB to row A"))
    assert [(c.label, c.text) for c in clauses] == [("ELISA step", "add 100 uL TMB to row A")]
    heading, item = split(normalise("Cherry-pick from samples into dest_plate:\n- A3 -> A1, 10 uL"))
    assert heading.heading and not item.heading and item.text == "A3 -> A1, 10 uL"


def test_decimals_and_ellipses_do_not_end_a_sentence() -> None:
    assert _texts("add 0.5 mL to A1. Then carry 50 uL H1 -> H2 -> ... -> H7") == [
        "add 0.5 mL to A1",
        "carry 50 uL H1 -> H2 -> ... -> H7",
    ]


# --------------------------------------------------------------------------- quantities
@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        ("50 uL", "volume", 50.0),
        ("0.1 mL", "volume", 100.0),
        ("fifty microliters", "volume", 50.0),
        ("1.5 ml", "volume", 1500.0),
        ("37C", "temperature", 37.0),
        ("98.6 F", "temperature", 37.0),
        ("5-min", "duration", 300.0),
        ("1 h", "duration", 3600.0),
        ("1,000 rpm", "speed", 1000.0),
        ("450nm", "wavelength", 450.0),
        ("30 deg", "temperature", 30.0),
        ("37 C/5 min", "temperature", 37.0),
        ("OD600", "wavelength", 600.0),
    ],
)
def test_quantities_are_converted_with_pint_to_one_unit_per_kind(
    text: str, kind: str, value: float
) -> None:
    q = quantities(text)[0]
    assert (q.kind, q.value) == (kind, pytest.approx(value))


def test_counts_folds_ratios_and_steps_are_read() -> None:
    assert times("mix 3x") == 3 and times("twice") == 2 and times("x5") == 5
    assert fold("a 2-fold dilution") == (2.0, "fold") and fold("1:10") == (10.0, "ratio")
    assert steps("six two-fold steps") == 6 and steps("8 points") == 8
    assert fold("mix 3x") is None


# --------------------------------------------------------------------------- well sets
@pytest.mark.parametrize(
    ("text", "count", "first", "last"),
    [
        ("A1:A12", 12, "A1", "A12"),
        ("a1-a12", 12, "A1", "A12"),
        ("B1 through H1", 7, "B1", "H1"),
        ("rows A to D", 48, "A1", "D12"),
        ("columns 2-6 and 8-12", 80, "A2", "H12"),
        ("cols 1,2,3,4", 32, "A1", "H4"),
        ("every other column", 48, "A1", "H11"),
        ("A1:A3 and A5:A7", 6, "A1", "A7"),
        ("the whole plate", 96, "A1", "H12"),
        ("column 12, rows A to D", 4, "A12", "D12"),
        ("A12-A1", 12, "A12", "A1"),
        ("C2, C4 ... C12", 6, "C2", "C12"),
        ("A1-H1 every other row", 4, "A1", "G1"),
        ("odd rows of # column 1", 4, "A1", "G1"),
        ("the inner 60 wells", 60, "B2", "G11"),
        ("the outer wells", 36, "A1", "H12"),
        ("all of #", 96, "A1", "H12"),
        ("every other column of #, columns 2-12", 48, "A2", "H12"),
        ("columns 3 to 11 of #, every other one", 40, "A3", "H11"),
        ("every other row, rows B to H", 48, "B1", "H12"),
        ("every other column of # starting with column 2, all rows", 48, "A2", "H12"),
        ("column 3, all 8 rows", 8, "A3", "H3"),
    ],
)
def test_well_sets_are_read_however_they_are_written(
    text: str, count: int, first: str, last: str
) -> None:
    (found,) = find_all(text)
    wells = found.expand(8, 12)
    assert (len(wells), wells[0], wells[-1]) == (count, first, last)


def test_arrow_chains_keep_their_order_and_fill_an_ellipsis() -> None:
    (chain,) = find_all("H1 -> H2 -> ... -> H7")
    assert chain.chain and chain.expand(8, 12) == [f"H{c}" for c in range(1, 8)]


def test_from_a_well_to_a_well_is_a_source_and_a_destination_not_a_range() -> None:
    assert [w.text for w in find_all("from A1 to B1")] == ["A1", "B1"]


def test_a_range_right_after_from_a_well_to_is_read_whole() -> None:
    sets = find_all("from ######### E1 to B1-B12 of ######")
    assert [w.text for w in sets] == ["E1", "B1-B12"]


def test_a_well_off_the_plate_is_a_selection_error() -> None:
    (found,) = find_all("row K")
    with pytest.raises(SelectionError):
        found.expand(8, 12)


# --------------------------------------------------------------------------- lab names
def test_lab_names_are_found_however_spaced_and_typos_within_the_floor_are_taken() -> None:
    lex = Lexicon(LAB)
    found, unknown = lex.labware_mentions("from the resevoir into plate 1 and palte_2, not plate_3")
    assert [m.name for m in found] == ["plate_1", "plate_2"] and [m.written for m in unknown] == [
        "plate_3"
    ]
    assert (
        lex.fix_words("trasnfer 5 uL, seriel dilution, absorbace")
        == "transfer 5 uL, serial dilution, absorbance"
    )
    assert lex.fix_words("heated lid, positive control, washed twice") == (
        "heated lid, positive control, washed twice"
    )  # real words near the vocabulary are not typos
    assert closest("bufer", ["buffer", "dye"]) == ("buffer", pytest.approx(83.3, abs=0.1), True)
    assert closest("bfr", ["buffer"]) is None


# --------------------------------------------------------------------------- entities and frames
def test_entities_say_tips_channels_mixing_and_replicates() -> None:
    lex = Lexicon(LAB)
    ents = extract(
        "add 5 uL dye to col 1 with the 8-channel, fresh tip for each, mix 3x, in triplicate",
        lex,
        (),
    )
    assert (ents.channels, ents.tips, ents.mix, ents.times, ents.replicates) == (
        8,
        "per_destination",
        True,
        3,
        3,
    )
    assert extract("one tip for the whole thing", lex, ()).tips == "once"
    assert extract("new tips every column", lex, ()).tips == "per_column"


def test_a_tip_per_source_is_the_default_policy_said_out_loud() -> None:
    lex = Lexicon(LAB)
    assert extract("pool A1-A6 into B1, one tip per source", lex, ()).tips == "per_source"


def test_a_named_tip_rack_is_a_preference_not_a_place_and_its_size_is_no_volume() -> None:
    lex = Lexicon(LAB)
    ents = extract("add 20 uL buffer to plate_1 A1 with tips_1", lex, ())
    assert ents.rack == "tips_1" and [m.name for m in ents.labware] == ["plate_1"]
    sized = extract("add 20 uL buffer to plate_1 A1 (400 uL tips please)", lex, ())
    assert sized.rack == "tips_1" and [q.value for q in sized.quantities] == [20]


def test_a_number_in_a_liquid_s_name_is_part_of_the_name_not_a_volume() -> None:
    lex = Lexicon(make_lab(liquids={"A1": ("PBS pH 7.4", 10000), "A2": ("buffer", 9000)}))
    ents = extract("PBS pH 7.4, 150 uL into plate_1 row B", lex, ())
    assert [q.value for q in ents.volumes()] == [150]
    listed = extract("PBS pH 7.4 - 20, 200 uL into plate_1 B1, B2", lex, ())
    assert [q.value for q in listed.volumes()] == [20, 200]


def test_blank_wells_leave_a_dilution_s_well_sets_and_a_blank_alone_is_a_note() -> None:
    lex = Lexicon(LAB)
    ents = extract("dye 2-fold across plate_1 row B, B1 to B11, B12 blank", lex, ())
    split_blanks(ents)
    assert [b.text for b in ents.blanks] == ["B12"]
    assert all("B12" not in w.text for w in ents.wellsets)
    assert blank_note(extract("H1 is the zero standard", lex, ()))
    assert not blank_note(extract("add 100 uL buffer to H1", lex, ()))


def test_a_frame_tells_the_source_from_the_destination_by_the_words_before_them() -> None:
    lex = Lexicon(LAB)
    (clause,) = split(
        normalise("transfer 50 uL of buffer from reservoir A2 to plate_1 B1:B6, 100 uL final")
    )
    frame = read(clause, extract(clause.text, lex, ()), "transfer")
    assert frame.source.labware is not None and frame.source.labware.name == "reservoir"
    assert frame.dest.labware is not None and frame.dest.labware.name == "plate_1"
    assert frame.liquid is not None and frame.liquid.name == "buffer"
    assert frame.volume is not None and frame.volume.value == 50 and frame.final is not None


# --------------------------------------------------------------------------- tips and channels
def _ops(n: int, src: str = "A2", mix: int = 0) -> list[pip.Op]:
    return [pip.Op(("reservoir", src), ("plate_1", f"A{c}"), 20.0, mix) for c in range(1, n + 1)]


@pytest.mark.parametrize(
    ("policy", "tips"), [("per_source", 1), ("per_destination", 6), ("once", 1), ("per_column", 6)]
)
def test_one_source_into_six_wells_uses_the_tips_the_policy_says(
    policy: pip.TipPolicy, tips: int
) -> None:
    world = World(LAB)
    pip.emit(world, "lh1", _ops(6), 1, policy)
    assert world.tips_used == tips


def test_mixing_in_the_destination_makes_the_default_a_new_tip_per_destination() -> None:
    assert pip.policy_used(_ops(3, mix=3), None) == "per_destination"
    assert pip.policy_used(_ops(3), None) == "per_source"
    assert pip.policy_used(_ops(3, mix=3), "once") == "once"


def test_the_8_channel_head_moves_a_column_with_one_tip_column() -> None:
    world = World(LAB)
    ops = [
        pip.Op(("reservoir", "A2"), ("plate_1", f"{r}{c}"), 20.0)
        for c in (1, 2)
        for r in "ABCDEFGH"
    ]
    pip.emit(world, "lh1", ops, 8, "per_source")
    picks = [s for s in world.steps if s.command == "pick_up_tips"]
    dispenses = [s for s in world.steps if s.command == "dispense"]
    assert len(picks) == 1 and picks[0].args["channels"] == list(range(8))
    assert picks[0].args["spots"] == [f"{r}1" for r in "ABCDEFGH"]
    assert [d.args["wells"] for d in dispenses] == [[f"{r}{c}" for r in "ABCDEFGH"] for c in (1, 2)]


def test_a_volume_above_a_tip_is_split_into_passes_with_the_same_tip() -> None:
    world = World(LAB)
    pip.emit(
        world, "lh1", [pip.Op(("reservoir", "A2"), ("reservoir", "A3"), 500.0)], 1, "per_source"
    )
    assert world.tips_used == 1  # the test lab's tips hold 400 uL
    assert [s.args["volume_ul"] for s in world.steps if s.command == "dispense"] == [250.0, 250.0]


def test_liquid_to_waste_leaves_with_its_tip() -> None:
    lab = make_lab()
    world = World(lab)
    world.volume["plate_1", "A1"] = world.volume["plate_1", "A2"] = 100.0
    pip.emit(
        world, "lh1", [pip.Op(("plate_1", w), None, 50.0) for w in ("A1", "A2")], 1, "per_source"
    )
    assert [s.command for s in world.steps] == ["pick_up_tips", "aspirate", "drop_tips"] * 2


# --------------------------------------------------------------------------- coverage
def _plan(request: str, trace: list[TraceItem]) -> Plan:
    step = PlanStep(id="s1", instrument="lh1", command="transfer")
    return Plan(request=request, summary="x", steps=[step], trace=trace)


def test_the_coverage_check_finds_a_dropped_clause_and_a_step_of_no_clause() -> None:
    request = "add 5 uL dye to A1, then shake it for 1 min at 300 rpm"
    assert clauses_of(request) == ["add 5 uL dye to A1", "shake it for 1 min at 300 rpm"]
    dropped = _plan(request, [TraceItem(clause="add 5 uL dye to A1", understood="t", steps=["s1"])])
    assert problems(dropped) == ["the clause 'shake it for 1 min at 300 rpm' is not in the plan"]
    stray = _plan(request, [
        TraceItem(clause="add 5 uL dye to A1", understood="t", steps=[]),
        TraceItem(clause="shake it for 1 min at 300 rpm", kind="fact", understood="f"),
    ])  # fmt: skip
    assert len(problems(stray)) == 2  # an action without steps, a step without a clause


def test_every_rule_plan_passes_its_own_coverage_check_and_traces_each_clause() -> None:
    result = RulePlanner().plan(
        "A reservoir A2 holds buffer. Add 50 uL buffer to plate_1 A1:A3 and mix twice, "
        "then read absorbance at 600 nm. Thanks!",
        LAB,
    )
    assert isinstance(result, Plan), result
    assert problems(result) == []
    assert [t.kind for t in result.trace] == ["fact", "action", "action", "action", "pleasantry"]
    assert "a new tip" in result.tip_policy or "fresh tip" in result.tip_policy


def test_a_count_times_a_volume_is_the_volume_of_each_aliquot_and_the_other_the_total() -> None:
    lex = Lexicon(make_lab())
    clause = split(normalise("split 4 mL of buffer into 8 x 500 uL aliquots in plate_1 column 1"))[
        0
    ]
    frame = read(clause, extract(clause.text, lex, ()), "transfer")
    assert frame.volume is not None and frame.volume.value == 500
    assert frame.total is not None and frame.total.value == 4000
    assert frame.extra["aliquots"] == 8


def test_a_well_set_after_a_finished_pair_starts_a_pair_of_its_own() -> None:
    found = find_all("pool # row A (A1-A4) into # A1 and row B (B1-B4) into # B1")
    assert [w.text for w in found] == ["row A", "A1-A4", "A1", "row B", "B1-B4", "B1"]


def test_a_verb_inside_brackets_starts_no_clause() -> None:
    assert _texts("add 5 uL dye to A1 (8 channel, mix 3x), then read at 450 nm") == [
        "add 5 uL dye to A1 (8 channel, mix 3x)",
        "read at 450 nm",
    ]


def test_a_plate_and_wells_before_a_colon_head_the_moves_after_it() -> None:
    said = split(normalise("plate_1 A1-A6: remove 40 uL, then add 50 uL buffer"))
    assert [(c.text, c.heading) for c in said][:2] == [
        ("plate_1 A1-A6", True),
        ("remove 40 uL", False),
    ]
    assert len(split(normalise("plate_1 A2: 12 uL"))) == 1  # a well and its volume


def test_a_name_said_without_its_generic_last_word_names_the_liquid_in_its_own_case() -> None:
    from agents.task.planning._liquid_names import without_tail

    found = dict((name, rx) for name, rx in without_tail(["0.5x MS medium", "1x TE buffer"]))
    assert found["0.5x MS medium"].search("top up with 0.5x MS")
    assert not found["0.5x MS medium"].search("a 0.5x ms pulse")
    assert without_tail(["MS medium", "MS salts"]) == []


def test_rows_of_two_wells_under_a_heading_that_says_from_where_to_where_are_pairs() -> None:
    from agents.task.planning._tables import bare_pairs

    assert bare_pairs(["pick, src -> dst, 5 uL each", "B03  A1", "D07 B1 10"]) == [
        "pick, src -> dst, 5 uL each:",
        "- B03 -> A1",
        "- D07 -> B1 10 uL",
    ]
    kept = ["pick 5 uL from src into dst column 1:", "A1 B2"]  # the heading names its wells
    assert bare_pairs(kept) == kept
    assert bare_pairs(["these wells of src", "B03  A1"]) == ["these wells of src", "B03  A1"]


def test_a_head_chosen_per_liquid_after_the_work_sets_that_liquids_moves() -> None:
    result = RulePlanner().plan(
        "add 50 uL buffer to plate_1 A1-H2, then 5 uL dye into the same wells. "
        "The buffer goes in with a single channel; the dye goes with the 8-channel.",
        LAB,
    )
    assert isinstance(result, Plan), result
    assert [s.command for s in result.steps][:2] == ["transfer", "pick_up_tips"]  # one channel
    dye = next(s for s in result.steps if s.command == "aspirate")
    assert len(dye.args["channels"]) == 8
