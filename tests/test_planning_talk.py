"""How people talk to the rule planner: social words around a request, and instruments the lab
does not have. Each rule is also tried against what must not trigger it."""

from __future__ import annotations

import pytest
from test_rule_planner import LAB

from agents.task.planning import _entity_coverage as entity_coverage
from agents.task.planning import _social
from agents.task.planning._clauses import ACTION_VERBS, split
from agents.task.planning._entities import extract
from agents.task.planning._frames import read
from agents.task.planning._labels import heading_line, label_verb, wells_label
from agents.task.planning._lexicon import Lexicon
from agents.task.planning._normalise import normalise
from agents.task.planning._outcomes import Ask
from agents.task.planning._programme_tables import programme_tables
from agents.task.planning._world import World
from agents.task.planning.families import _profile as profile
from agents.task.planning.families import thermocycle
from agents.task.planning.models import Clarification, Plan, PlanStep, Refusal, TraceItem
from agents.task.planning.rules import RulePlanner
from evals.planning import Labs


def _texts(request: str) -> list[str]:
    return [c.text for c in split(normalise(request))]


@pytest.mark.parametrize(
    "said",
    [
        "Hope you're well",
        "hello, hope your day is going well",
        "Thanks so much, really appreciate it",
        "Many thanks, Sam",
        "best, Kim",
        "Regards",
        "That would be amazing",
        "You're a star",
        "Sorry to bother you again",
        "no worries if not",
        "Thanks a bunch",
        "Just go ahead",
    ],
)
def test_a_clause_of_social_words_only_is_a_pleasantry(said: str) -> None:
    assert _social.is_pleasantry(said)


@pytest.mark.parametrize(
    "said",
    [
        "thanks, add 20 uL dye to A1",
        "hope you can read plate_1",
        "Thanks, Read",
        "Cheers - Mix",
        "sorry, shake it for 2 min",
        "great, then mix A1 3 times",
        "incubate for 1 day",
        "no rush, 50 uL buffer into A1",
        "please hold",
    ],
)
def test_a_clause_that_asks_for_something_is_never_a_pleasantry(said: str) -> None:
    assert not _social.is_pleasantry(said)


@pytest.mark.parametrize(
    ("request_text", "expected"),
    [
        (
            "Would it be possible to read plate_1 at 450 nm when you get a moment?",
            ["read plate_1 at 450 nm"],
        ),
        (
            "So basically what I need is 40 uL of buffer in column 1 of plate_1, if that's ok.",
            ["40 uL of buffer in column 1 of plate_1"],
        ),
        ("add 20 uL of dye to A1 for me please", ["add 20 uL of dye to A1"]),
        ("incubate plate_1 at 37 C for 1 day", ["incubate plate_1 at 37 C for 1 day"]),
        ("shake until done", ["shake until done"]),
    ],
)
def test_polite_openings_and_trailing_hedges_come_off_a_clause(
    request_text: str, expected: list[str]
) -> None:
    assert _texts(request_text) == expected


@pytest.mark.parametrize(
    "request_text",
    [
        "Hi! Hope you're well. Could you please add 20 uL dye to plate_1 A1 to A4? Thanks!",
        "Good morning team! I need you to add 25 uL of dye to A1-A3 of plate_1. Many thanks, Sam",
        "Kindly dispense 75 uL of buffer into plate_2 A1 through A12. Regards.",
    ],
)
def test_a_chatty_request_is_planned_with_its_pleasantries_in_the_trace(request_text: str) -> None:
    plan = RulePlanner().plan(request_text, LAB)
    assert isinstance(plan, Plan)
    assert [t.kind for t in plan.trace].count("action") == 1
    assert {t.kind for t in plan.trace} <= {"action", "pleasantry"}


def test_a_request_of_pleasantries_only_is_not_a_lab_request() -> None:
    out = RulePlanner().plan("Hi there! Hope you're well. Thanks so much!", LAB)
    assert isinstance(out, Refusal) and out.code == "not_a_lab_request"


@pytest.mark.parametrize(
    "request_text",
    [
        "incubate plate_1 in the incubator at 37 C for 30 minutes at 300 rpm",
        "put plate_1 in the incubator at 37 C for 2 hours",
        "add 50 uL buffer to plate_1 A1, then incubate it in the CO2 incubator at 37 C for 1 h",
        "spin plate_1 down in the centrifuge, then read it at 450 nm",
        "seal plate_1 with the plate sealer",
    ],
)
def test_an_instrument_the_lab_lacks_is_refused_never_replaced(request_text: str) -> None:
    out = RulePlanner().plan(request_text, LAB)
    assert isinstance(out, Refusal) and out.code == "missing_instrument"
    assert "hs1" in out.reason  # names what the lab has


@pytest.mark.parametrize(
    "request_text",
    [
        "incubate plate_1 at 37 C for 30 min",
        "shake plate_1 on the shaker instead of the incubator at 37 C for 10 min at 300 rpm",
        "incubate plate_1 on hs1 at 37 C for 30 min",
    ],
)
def test_the_lab_own_instruments_are_still_used(request_text: str) -> None:
    out = RulePlanner().plan(request_text, LAB)
    assert isinstance(out, Plan | Clarification)
    assert isinstance(out, Plan), out
    assert {s.instrument for s in out.steps} >= {"hs1"}


# --------------------------------------------------------------------------- per-entity coverage
def test_a_second_speed_and_time_in_one_clause_is_asked_about_never_dropped() -> None:
    out = RulePlanner().plan(
        "shake plate_1 at 37 C for 5 min at 500 rpm and at 800 rpm for 1 min", LAB
    )
    assert isinstance(out, Clarification) and out.missing == ["speed"]


def test_a_second_liquid_with_its_own_volume_is_its_own_transfer() -> None:
    plan = RulePlanner().plan("put 30 uL buffer in plate_1 A1 with 10 uL dye", LAB)
    assert isinstance(plan, Plan)
    moved = [(s.args["source_well"], s.args["volume_ul"]) for s in plan.steps]
    assert moved == [("A2", 30.0), ("A1", 10.0)]


def test_a_liquid_named_with_a_volume_that_no_step_draws_is_asked_about() -> None:
    norm = normalise("add 30 uL buffer and 10 uL dye to plate_1 A1")
    clause = split(norm)[0]
    frame = read(clause, extract(clause.text, Lexicon(LAB), norm.quoted), "transfer")
    step = PlanStep(
        id="s1",
        instrument="lh1",
        command="transfer",
        args={"source": "reservoir", "source_well": "A2", "destination": "plate_1",
              "destination_wells": ["A1"], "volume_ul": 30.0},
    )  # fmt: skip
    item = TraceItem(clause=clause.said, understood="transfer 30 uL of buffer", steps=["s1"])
    with pytest.raises(Ask) as asked:
        entity_coverage.check(frame, item, [step], World(LAB))
    assert asked.value.missing == ["liquid"]
    entity_coverage.check(frame, item.model_copy(update={"understood": "30 uL buffer, 10 uL dye"}),
                          [step], World(LAB))  # fmt: skip


@pytest.mark.parametrize(
    "request_text",
    [
        "transfer 50 uL of dye to plate_1 A1 and mix 5 times with 30 uL",
        "add 10 uL of dye to plate_1 A1 (the well with 100 uL buffer already)",
        "shake plate_1 at 600 rpm for 2 minutes",
        "incubate plate_1 at 37 C for 1 hour",
        "read plate_1 at 450 nm",
    ],
)
def test_what_a_clause_uses_is_not_asked_about(request_text: str) -> None:
    assert isinstance(RulePlanner().plan(request_text, LAB), Plan)


# --------------------------------------------------------------------------- programmes
def test_a_programme_table_reads_as_one_line() -> None:
    table = (
        "Step | Temp | Time | Cycles\n"
        "Initial denaturation | 95 C | 3 min | 1\n"
        "Denaturation | 95 C | 15 s | 35\n"
        "Annealing | 60 C | 30 s | 35\n"
        "Final extension | 72 C | 5 min | 1\n"
        "Hold | 4 C | forever |"
    )
    assert programme_tables(table) == (
        "Initial denaturation 95 C 3 min; 35 cycles of 95 C 15 s, 60 C 30 s; "
        "Final extension 72 C 5 min; hold at 4 C"
    )


def test_a_markdown_table_with_units_in_its_header_reads_as_one_line() -> None:
    table = (
        "| Stage | Temp (C) | Time (s) | Cycles |\n|---|---|---|---|\n| Denature | 95 | 10 | 40 |\n"
    )
    assert programme_tables(table).startswith("40 cycles of 95 C 10 s")


@pytest.mark.parametrize(
    "table",
    [
        "Well | Volume\nA1 | 10 uL\nA2 | 20 uL",  # not a programme: left as it is
        "plate_1 | plate_2",  # one row
    ],
)
def test_a_table_that_is_not_a_programme_is_left_as_written(table: str) -> None:
    assert programme_tables(table) == table


def test_semicolons_inside_brackets_do_not_split_a_clause() -> None:
    assert _texts("35 cycles of [95 C, 15 s; 60 C, 30 s]; 72 C, 5 min") == [
        "35 cycles of [95 C, 15 s; 60 C, 30 s]",
        "72 C, 5 min",
    ]


@pytest.mark.parametrize(
    ("text", "stages"),
    [
        ("95 C 5 min; 25 cycles of: 94 C 30 s, 60 C 40 s", [(1, 1), (25, 2)]),
        ("95 C 3 min, then 35 cycles of denaturation at 95 C for 30 s, annealing at 57 C for 30 s",
         [(1, 1), (35, 2)]),
        ("95 C 3 min | 35 cycles: 95 C 15 s, 60 C 30 s | 72 C 5 min", [(1, 1), (35, 2), (1, 1)]),
        ("95 C 3 min, 35 cycles then 72 C 5 min", [(35, 1), (1, 1)]),  # a trailing count
    ],
)  # fmt: skip
def test_a_count_repeats_the_steps_after_it_whatever_names_them(
    text: str, stages: list[tuple[int, int]]
) -> None:
    assert [(st.repeats, len(st.steps)) for st in profile.parse(text).stages] == stages


def test_a_part_label_is_read_with_its_part() -> None:
    items = split(normalise("PCR on rxn_plate\n- Lid: 105 C\n- Hold: 4 C\n- Notes: 4 C"))
    assert [thermocycle.part_text(c) for c in items[1:]] == ["Lid 105 C", "Hold 4 C", "4 C"]


@pytest.mark.parametrize(
    "request_text",
    [
        "read plate_1 at 450 nm within 30 min",
        "add 50 uL of buffer pre-warmed to 37 C to plate_1 A1",
        "shake plate_1 for no longer than 2 min at 300 rpm",
    ],
)
def test_a_limit_or_a_description_is_not_a_setting_to_ask_about(request_text: str) -> None:
    assert isinstance(RulePlanner().plan(request_text, LAB), Plan)


# --------------------------------------------------------------------------- context
def test_a_contracted_is_reads_as_a_fact() -> None:
    assert normalise("Buffer's in the trough (A2). plate_1's empty").text == (
        "Buffer is in the trough (A2). plate_1 is empty"
    )
    assert normalise("the buffer's volume").text == "the buffer's volume"  # a possessive


def test_a_fact_with_its_labware_as_subject_is_checked_on_that_labware() -> None:
    agree = RulePlanner().plan(
        "The reservoir has 10 mL of dye in A1. Add 20 uL of dye to plate_1 B1.", LAB
    )
    assert isinstance(agree, Plan)
    disagree = RulePlanner().plan(
        "The reservoir has 5 mL of dye in A1. Add 20 uL of dye to plate_1 B1.", LAB
    )
    assert isinstance(disagree, Clarification) and disagree.missing == ["lab_state"]


def test_of_it_after_a_fact_takes_from_the_well_the_fact_named() -> None:
    plan = RulePlanner().plan(
        "reservoir A2 holds 12 mL of buffer. Move 30 uL of it to plate_1 B1.", LAB
    )
    assert isinstance(plan, Plan)
    assert [(s.args["source"], s.args["source_well"]) for s in plan.steps] == [("reservoir", "A2")]


# --------------------------------------------------------------------------- labels and lists
def test_wells_in_a_label_are_where_its_clause_works() -> None:
    assert wells_label("Blanks (H11, H12): 100 uL buffer into plate_1") == (
        "Blanks: 100 uL buffer into plate_1 (H11, H12)"
    )
    said = "Blanks (H11, H12): add 100 uL buffer to H11 and H12"
    assert wells_label(said) == said  # the clause names its own wells


@pytest.mark.parametrize(
    ("line", "heading"),
    [
        ("Buffer prep", True),
        ("Assay prep", True),
        ("add buffer", False),  # an action
        ("rxn_plate PCR program", False),  # a programme, not a label
        ("Read plate_1", False),
    ],
)
def test_a_short_line_over_list_items_is_their_heading(line: str, heading: bool) -> None:
    assert heading_line(line, ACTION_VERBS) is heading


@pytest.mark.parametrize(
    ("label", "verb"),
    [("Reading", "read"), ("Shaking step", "shake"), ("Detection/readout", "read"),
     ("Read", "Read"), ("ELISA step", None), ("Mixing and reading", None)],
)  # fmt: skip
def test_a_label_naming_one_action_stands_for_its_verb(label: str, verb: str | None) -> None:
    assert label_verb(label) == verb


def test_roman_numeral_items_are_list_items() -> None:
    assert _texts("i. 30 uL dye into A1\nii. 30 uL dye into A2") == [
        "30 uL dye into A1",
        "30 uL dye into A2",
    ]


# --------------------------------------------------------------------------- two values offered
@pytest.mark.parametrize(
    ("request_text", "missing", "options"),
    [
        ("add 10-20 uL of dye to plate_1 A1", ["volume"], ["10 uL", "20 uL"]),
        ("add 10 or 20 uL dye to plate_1 A1", ["volume"], ["10 uL", "20 uL"]),
        ("incubate plate_1 at 37 C for 5-10 min", ["duration"], ["5 min", "10 min"]),
        ("add 50 uL dye or buffer to plate_1 A1", ["liquid"], ["dye", "buffer"]),
    ],
)
def test_two_values_offered_for_one_setting_are_asked_never_picked(
    request_text: str, missing: list[str], options: list[str]
) -> None:
    out = RulePlanner().plan(request_text, LAB)
    assert isinstance(out, Clarification)
    assert (out.missing, out.options) == (missing, options)


@pytest.mark.parametrize(
    "request_text",
    [
        "add 10 uL dye to plate_1 A1-A12",
        "shake plate_1 2 min - 500 rpm",
        "with the 8-channel, top up plate_1 column 3 - 200 uL with buffer",
        "add 2 and 5 uL of dye to plate_1 A1 and A2",
    ],
)
def test_ranges_of_wells_and_two_settings_are_not_two_values(request_text: str) -> None:
    out = RulePlanner().plan(request_text, LAB)
    assert not (isinstance(out, Clarification) and "two values" in out.question)


def test_a_place_alone_after_then_is_a_move_of_the_plate_before() -> None:
    plan = RulePlanner().plan("read plate_1 at 450 nm, then into hotel 2", LAB)
    assert isinstance(plan, Plan)
    moves = [s.args for s in plan.steps if s.command == "move_plate"]
    assert moves[-1] == {"plate": "plate_1", "to_location": "hotel:2"}


# --------------------------------------------------------------------------- ELISA steps
def test_a_verbless_incubation_after_a_transfer_is_its_own_clause() -> None:
    assert _texts("add 200 uL buffer to plate_1 A1:A3, 1 h at 37 C, shaking at 300 rpm") == [
        "add 200 uL buffer to plate_1 A1:A3",
        "1 h at 37 C, shaking at 300 rpm",
    ]
    # without a liquid moved before it, a time is not cut off: "shake 5 min, 2 min at 37 C"
    assert _texts("shake plate_1 at 300 rpm, 5 min") == ["shake plate_1 at 300 rpm, 5 min"]


def test_then_a_liquid_per_well_goes_into_the_same_wells() -> None:
    plan = RulePlanner().plan(
        "add 100 uL buffer per well to plate_1 B1:B4; incubate 15 min at RT; 50 uL dye per well",
        LAB,
    )
    assert isinstance(plan, Plan)
    last = [s for s in plan.steps if s.command == "transfer"][-1]
    assert (last.args["source_well"], last.args["destination_wells"]) == (
        "A1",
        ["B1", "B2", "B3", "B4"],
    )


def test_each_plate_heading_sends_its_items_to_that_plate() -> None:
    plan = RulePlanner().plan(
        "* plate_1: 60 uL buffer in B1-B4\n* plate_2: 60 uL buffer in B1-B4\n* read both at 450 nm",
        LAB,
    )
    assert isinstance(plan, Plan)
    into = [s.args["destination"] for s in plan.steps if s.command == "transfer"]
    read = [s.args["plate"] for s in plan.steps if s.command == "read_absorbance"]
    assert (into, read) == (["plate_1", "plate_2"], ["plate_1", "plate_2"])


@pytest.mark.parametrize(
    "request_text",
    [
        "Remind me to read plate_1 at 450 nm tomorrow",
        "Write a python script that adds buffer to plate_1",
        'Translate "add 50 uL buffer" into German',
        "Hi! Could you email me the results? Thanks",
    ],
)
def test_lab_words_inside_a_request_for_something_else_are_not_a_lab_request(
    request_text: str,
) -> None:
    out = RulePlanner().plan(request_text, LAB)
    assert isinstance(out, Refusal) and out.code == "not_a_lab_request"


def test_a_lab_action_beside_an_off_bench_wish_is_not_refused_as_not_lab() -> None:
    out = RulePlanner().plan("add 50 uL buffer to plate_1 A1, then email me the results", LAB)
    assert not (isinstance(out, Refusal) and out.code == "not_a_lab_request")


@pytest.mark.parametrize(
    ("said", "written"),
    [
        ("for 1 hr 30 min", "for 90 min"),
        ("for 1h30 at 37 C", "for 90 min at 37 C"),
        ("2 min 30 s", "150 s"),
        ("shake 1 h 300 rpm", "shake 1 h 300 rpm"),  # a speed after the hours, not minutes
        ("1 h 30 C", "1 h 30 C"),
    ],
)
def test_a_time_in_hours_and_minutes_is_one_time(said: str, written: str) -> None:
    assert normalise(said).text == written


def test_a_plate_number_before_a_well_is_not_hours() -> None:
    assert normalise("pipette 40 uL of dye into plate 1 H12").text == (
        "pipette 40 uL of dye into plate 1 H12"
    )


def test_a_count_heading_repeats_the_step_lines_under_it() -> None:
    lab = Labs()["thermo"].view
    plan = RulePlanner().plan(
        "PCR program for rxn_plate:\nInitial denaturation 95 C 3 min\n35 cycles of:\n"
        "  95 C 30 s\n  55 C 30 s\nFinal extension 72 C 5 min\nHold 4 C",
        lab,
    )
    assert isinstance(plan, Plan)
    run = next(s for s in plan.steps if s.command == "run_profile")
    assert [(len(st["steps"]), st["repeats"]) for st in run.args["stages"]] == [
        (1, 1),
        (2, 35),
        (1, 1),
    ]
