"""The rule planner understands thermocycling requests: profiles of stages and cycles, a final
hold, the plate brought onto the block through its station (lid opened), the lid closed."""

from __future__ import annotations

from typing import Any

import pytest
from test_rule_planner import WORKSPACE, make_lab

from agents.task.planning import Clarification, LabView, Plan, Refusal, RulePlanner
from agents.task.planning._normalise import normalise
from agents.task.planning._programme_tables import goto_lists
from agents.task.planning.families import _profile as prof
from agents.task.planning.models import InstrumentView
from device_servers.thermocycler.config import ThermocyclerConfig

BLOCK = "tc1:block"


def lab_with_tc() -> LabView:
    lab = make_lab()
    (station,) = ThermocyclerConfig(kind="thermocycler", id="tc1").stations()
    tc = InstrumentView(
        id="tc1",
        kind="thermocycler",
        commands=[
            "open_lid",
            "close_lid",
            "set_block_temperature",
            "set_lid_temperature",
            "run_profile",
            "stop",
        ],
        location=BLOCK,
        limits={"block_range_c": (0, 100), "lid_range_c": (20, 115)},
    )
    return lab.model_copy(
        update={
            "instruments": {**lab.instruments, "tc1": tc},
            "stations": {**lab.stations, BLOCK: station},
            "mover_locations": [*WORKSPACE, BLOCK],
        }
    )


LAB = lab_with_tc()


def plan(request: str, lab: LabView = LAB) -> Plan | Clarification | Refusal:
    return RulePlanner().plan(request, lab)


def commands(result: Any) -> list[str]:
    return [f"{s.instrument}.{s.command}" for s in result.steps]


def profile(result: Plan) -> dict[str, Any]:
    (step,) = [s for s in result.steps if s.command == "run_profile"]
    return dict(step.args)


def test_the_issue_request_is_planned_with_moves_lid_profile_and_hold() -> None:
    result = plan("run 35 cycles of 95 C for 15 s, 60 C for 30 s on plate_1, then hold at 4 C")
    assert isinstance(result, Plan), result
    assert commands(result) == [
        "tc1.open_lid",
        "arm1.move_plate",
        "tc1.close_lid",
        "tc1.run_profile",
        "tc1.set_block_temperature",
    ]
    assert profile(result)["stages"] == [
        {"steps": [{"celsius": 95, "hold_s": 15}, {"celsius": 60, "hold_s": 30}], "repeats": 35}
    ]
    move = result.steps[1]
    assert move.args == {"plate": "plate_1", "to_location": BLOCK}
    assert result.steps[-1].args == {"celsius": 4}
    assert result.steps[3].expect == {"facts": {"cycles_done": 35}}


def without_heater_shaker() -> LabView:
    return LAB.model_copy(
        update={"instruments": {k: v for k, v in LAB.instruments.items() if k != "hs1"}}
    )


@pytest.mark.parametrize(
    "request_",
    [
        "run 35 cycles of 95 C for 15 s, 60 C for 30 s on plate_1, then hold at 4 C",
        "plate_1: 95 C for 2 min, then 30 cycles of 95 C 10 s, 60 C 30 s, then hold at 4 C",
    ],
)
def test_holds_and_first_stages_of_a_profile_need_no_heater_shaker(request_: str) -> None:
    # Parts of the programme said as their own clauses ('then hold at 4 C', a first
    # '95 C for 2 min') are the thermocycler's; a lab without a heater-shaker plans them.
    result = plan(request_, without_heater_shaker())
    assert isinstance(result, Plan), result
    assert all(not c.startswith("hs1.") for c in commands(result))
    assert commands(result)[-1] == "tc1.set_block_temperature"
    assert result.steps[-1].args == {"celsius": 4}


def test_a_lone_incubation_still_needs_a_heater_shaker() -> None:
    result = plan("incubate plate_1 at 37 C for 10 minutes", without_heater_shaker())
    assert isinstance(result, Refusal), result
    assert result.code == "missing_instrument"


def test_a_whole_pcr_programme_has_its_initial_cycled_and_final_stages() -> None:
    result = plan(
        "PCR on plate_2: initial denaturation at 95 C for 3 min, 30 cycles of 95 C for 15 s, "
        "58 C for 20 s and 72 C for 30 s, final extension at 72 C for 5 min, then hold at 4 C"
    )
    assert isinstance(result, Plan), result
    stages = profile(result)["stages"]
    assert [(len(s["steps"]), s["repeats"]) for s in stages] == [(1, 1), (3, 30), (1, 1)]
    assert stages[0]["steps"] == [{"celsius": 95, "hold_s": 180}]
    assert stages[2]["steps"] == [{"celsius": 72, "hold_s": 300}]
    assert result.steps[-1].command == "set_block_temperature"


@pytest.mark.parametrize(
    "request_",
    [
        "thermocycle plate_1: (95 C 15 s, 60 C 30 s) x 35",
        "thermocycle plate_1 with 95 C for 15 s and 60 C for 30 s for 35 cycles",
        "run a PCR profile on plate_1: 35 cycles of 15 s at 95 C, 30 s at 60 C",
    ],
)
def test_cycle_counts_are_read_however_they_are_written(request_: str) -> None:
    result = plan(request_)
    assert isinstance(result, Plan), result
    (stage,) = profile(result)["stages"]
    assert stage["repeats"] == 35
    assert stage["steps"] == [{"celsius": 95, "hold_s": 15}, {"celsius": 60, "hold_s": 30}]


def test_a_continuation_after_then_is_part_of_the_profile() -> None:
    result = plan("run 25 cycles of 94 C for 30 s, 55 C for 30 s on plate_1, then 72 C for 7 min")
    assert isinstance(result, Plan), result
    stages = profile(result)["stages"]
    assert stages[-1] == {"steps": [{"celsius": 72, "hold_s": 420}], "repeats": 1}
    assert commands(result).count("tc1.run_profile") == 1


def test_a_heated_lid_temperature_is_used_when_the_request_gives_it() -> None:
    result = plan("run 35 cycles of 95 C for 15 s, 60 C for 30 s on plate_1 with the lid at 105 C")
    assert isinstance(result, Plan), result
    assert profile(result)["lid_celsius"] == 105
    assert "lid_celsius" not in profile(plan("run 35 cycles of 95 C for 15 s on plate_1"))


def test_which_plate_is_asked_when_the_request_does_not_say() -> None:
    result = plan("run 35 cycles of 95 C for 15 s, 60 C for 30 s")
    assert isinstance(result, Clarification) and "plate" in result.missing


def test_a_lab_without_a_thermocycler_refuses() -> None:
    result = plan("run 35 cycles of 95 C for 15 s, 60 C for 30 s on plate_1", make_lab())
    assert isinstance(result, Refusal) and "thermocycler" in result.reason


def test_temperatures_beyond_the_block_and_too_many_cycles_are_refused() -> None:
    assert isinstance(plan("run 30 cycles of 120 C for 15 s on plate_1"), Refusal)
    assert isinstance(plan("run 500 cycles of 95 C for 15 s on plate_1"), Refusal)


def test_the_plate_then_goes_on_to_the_reader_with_the_lid_opened_first() -> None:
    result = plan(
        "run 10 cycles of 95 C for 15 s, 60 C for 30 s on plate_1, then read absorbance of "
        "plate_1 at 600 nm"
    )
    assert isinstance(result, Plan), result
    after = commands(result)[commands(result).index("tc1.run_profile") + 1 :]
    assert set(after[:2]) == {"tc1.open_lid", "reader1.open_drawer"}  # both sides open first
    assert after[2] == "arm1.move_plate"


# ------------------------------------------------------------------------ how programmes are told
def groups(text: str) -> list[tuple[list[tuple[float, float]], int]]:
    return [(st.steps, st.repeats) for st in prof.parse(text).stages]


def test_a_comma_after_a_cycle_of_slashed_steps_ends_the_cycle() -> None:
    assert groups("35 cycles of 95 C 15 s / 60 C 30 s / 72 C 30 s, 72 C 5 min") == [
        ([(95, 15), (60, 30), (72, 30)], 35),
        ([(72, 300)], 1),
    ]
    assert groups("35 cycles of 95 C 15 s, 60 C 30 s and 72 C 30 s") == [
        ([(95, 15), (60, 30), (72, 30)], 35)
    ]


def test_one_temperature_twice_in_a_row_is_two_parts_of_the_programme() -> None:
    assert groups("32 cycles of 94 C 30 s, 55 C 30 s, 72 C 45 s, 72 C 7 min") == [
        ([(94, 30), (55, 30), (72, 45)], 32),
        ([(72, 420)], 1),
    ]


def test_a_count_in_brackets_before_a_colon_heads_the_steps_after_it() -> None:
    assert groups("Stage 1: 95 C 10 min; Stage 2 (40 cycles): 95 C 15 s, 60 C 1 min") == [
        ([(95, 600)], 1),
        ([(95, 15), (60, 60)], 40),
    ]


@pytest.mark.parametrize(
    "request_",
    [
        "plate_2: initial 95/3min; 35 rounds 95/15s 60/30s; 4/hold",
        "plate_2\nInitial denaturation: 95 C, 3 min\n35 cycles:\n95 C, 15 s\n60 C, 30 s\nHold: 4 C",
        "plate_2 cycling: Stage 1: 95 C 3 min. Stage 2 (35 cycles): 95 C 15 s, 60 C 30 s. "
        "Stage 3: hold 4 C",
    ],
)
def test_parts_and_a_plate_told_before_the_cycles_belong_to_the_programme(request_: str) -> None:
    result = plan(request_)
    assert isinstance(result, Plan), result
    assert [s["repeats"] for s in profile(result)["stages"]] == [1, 35]
    assert result.steps[-1].args == {"celsius": 4}


def test_a_count_said_in_a_sentence_of_its_own_counts_the_cycle_before() -> None:
    result = plan("Cycle plate_2 95 C 15 s, 60 C 30 s. Do 35 cycles.")
    assert isinstance(result, Plan), result
    assert [s["repeats"] for s in profile(result)["stages"]] == [35]


def test_timed_steps_ending_in_a_cold_hold_are_a_programme_without_a_cycling_word() -> None:
    result = plan("Digest plate_2 at 37 C for 1 h, then heat-kill at 65 C for 20 min, hold at 4 C")
    assert isinstance(result, Plan), result
    assert not any(c.startswith("hs1.") for c in commands(result))
    steps = [step for st in profile(result)["stages"] for step in st["steps"]]
    assert steps == [{"celsius": 37, "hold_s": 3600}, {"celsius": 65, "hold_s": 1200}]


def test_two_incubations_without_a_cold_hold_stay_on_the_heater_shaker() -> None:
    result = plan("incubate plate_2 at 37 C for 1 h, then 65 C for 20 min")
    assert isinstance(result, Plan), result
    assert "tc1.run_profile" not in commands(result)


def test_a_heated_lid_written_before_lid_is_the_lid_not_a_step() -> None:
    result = plan("Cycle plate_2 with a 105 C heated lid: 30x (95 C 20 s, 58 C 20 s), hold at 4")
    assert isinstance(result, Plan), result
    assert profile(result)["lid_celsius"] == 105


def test_a_number_held_for_a_time_is_a_step_in_a_programme_only() -> None:
    assert [st[2:] for st in prof.steps("35x 95 15s 60 30s")] == [(95, 15), (60, 30)]
    assert prof.steps("add 20 30 s later") == []


@pytest.mark.parametrize(
    ("listing", "cycles"),
    [
        ("1) 95 C 3 min\n2) 95 C 30 s\n3) 55 C 30 s\n4) go to step 2, 29 more times", 30),
        ("Step 1: 95 C 3 min\nStep 2: 95 C 30 s\nStep 3: 55 C 30 s\nStep 4: GOTO 2, 34x", 35),
        ("1. 95 C 3 min\n2. 95 C 30 s\n3. 55 C 30 s\n4. repeat steps 2-3 for 40 cycles", 40),
    ],
)
def test_a_go_to_line_of_a_numbered_programme_repeats_the_steps_it_names(
    listing: str, cycles: int
) -> None:
    first, cycled = goto_lists(listing).split("\n")
    assert first == listing.split("\n")[0]
    assert cycled.endswith(f"{cycles} cycles of 95 C 30 s, 55 C 30 s")


def test_a_go_to_among_liquid_handling_items_is_left_alone() -> None:
    listing = "1) add 5 uL to A1\n2) add 5 uL to A2\n3) go back to step 1 for plate_2"
    assert goto_lists(listing) == listing


def test_brackets_after_part_names_hold_each_part_s_step_not_the_cycle() -> None:
    text = (
        "35 cycles of denaturation (95 C, 30 s), annealing (55 C, 30 s) and extension (72 C, 1 min)"
    )
    assert groups(text) == [([(95, 30), (55, 30), (72, 60)], 35)]


def test_a_part_preceded_by_the_cycles_runs_before_them() -> None:
    text = "95 C 30 s / 58 C 30 s, 30 cycles, preceded by 95 C for 5 min and followed by 72 C 7 min"
    assert [g[1] for g in groups(text)] == [1, 30, 1]
    assert groups(text)[0][0] == [(95, 300)]


def test_a_temperature_named_before_the_steps_that_hold_it_is_no_step_of_its_own() -> None:
    text = "annealing temperature of 58 C: 35 cycles of 95 C 30 s, 58 C 30 s"
    assert prof.parse(text).untimed == []
    assert prof.parse("95 C, 58 C 30 s, 35 cycles").untimed == [95]


def test_minutes_and_seconds_written_as_primes_are_times() -> None:
    assert normalise("95°C 2', 60°C 30\"").text == "95 C 2 min, 60 C 30 s"


def test_another_step_inside_a_programme_s_clause_is_asked_about_never_dropped() -> None:
    result = plan("Run the PCR on plate_2 and park it in the hotel when finished: 30x [95 C 30 s]")
    assert isinstance(result, Clarification), result


def test_a_programme_named_but_not_given_is_asked_for() -> None:
    result = plan("Run standard cycling on plate_2")
    assert isinstance(result, Clarification) and "temperature" in result.missing


def test_a_move_to_the_thermocycler_is_a_move_and_a_hold_there_is_the_block_s() -> None:
    moved = plan("move plate_2 to the thermocycler")
    assert isinstance(moved, Plan) and "tc1.run_profile" not in commands(moved)
    held = plan("load plate_2 in the thermocycler and hold it at 4 C", without_heater_shaker())
    assert isinstance(held, Plan), held
    assert commands(held)[-1] == "tc1.set_block_temperature"


def test_a_touchdown_step_runs_each_cycle_at_its_own_temperature() -> None:
    stages = prof.parse("3 cycles of 95 C 30 s, 65 C 30 s (-1 C per cycle); 25 cycles of 95 C 30 s")
    assert [st.steps[1][0] for st in stages.stages[:3]] == [65, 64, 63]
    assert [st.repeats for st in stages.stages] == [1, 1, 1, 25]
    assert stages.vague is None


@pytest.mark.parametrize(
    ("request_", "code"),
    [
        ("plate_2: 40 cycles of 95 C 15 s, 60 C 1 min, ramp rate 1.6 C/s", "capacity"),
        ("plate_2: 40x (95 C 15 s, 60 C 1 min), then a melt curve 65-95 C", "missing_instrument"),
        ("plate_2 gradient PCR, annealing 55-65 C: 30x (95 C 30 s, 60 C 30 s)", "capacity"),
        ("Run plate_2 30 cycles of 95 C 15 s, 60 C 30 s with the lid off", "policy_limit"),
    ],
)
def test_what_a_programme_of_temperatures_and_times_cannot_be_is_refused(
    request_: str, code: str
) -> None:
    result = plan(request_)
    assert isinstance(result, Refusal) and result.code == code, result


def test_initial_said_after_its_step_runs_that_step_first() -> None:
    text = "30 cycles (94 C 30 s, 58 C 30 s) with 94 C 2 min initial and 72 C 5 min final extension"
    assert [g[0] for g in groups(text)] == [[(94, 120)], [(94, 30), (58, 30)], [(72, 300)]]


def test_a_reaction_volume_among_a_programme_s_lines_is_part_of_it() -> None:
    result = plan(
        "Cycling conditions (plate_2)\nReaction volume: 25 uL\n30x (95 C 15 s, 60 C 30 s)"
    )
    assert isinstance(result, Plan), result
    assert [s["repeats"] for s in profile(result)["stages"]] == [30]


@pytest.mark.parametrize(
    "text",
    [
        "95 C 15 s and 60 C 1 min; cycle number 40",
        "40 cycles total of 95 C 15 s / 60 C 1 min",
        "cycle 40 times between 95 C (15 s) and 60 C (1 min)",
        "2-step: 40 cycles, 95 C 15 s, 60 C 1 min",
    ],
)
def test_a_cycle_count_is_read_however_it_is_placed(text: str) -> None:
    assert groups(text) == [([(95, 15), (60, 60)], 40)]


def test_a_count_after_steps_and_before_another_part_counts_the_steps_before_it() -> None:
    assert groups("95 C 15 s, 60 C 1 min, 40 cycles, 72 C 5 min") == [
        ([(95, 15), (60, 60)], 40),
        ([(72, 300)], 1),
    ]


def test_do_this_n_times_repeats_the_steps_before_it_but_not_a_hot_start() -> None:
    assert groups("95 C 15 s then 60 C 1 min, do this 40 times") == [([(95, 15), (60, 60)], 40)]
    assert groups("95 C 3 min, then 95 C 15 s, then 60 C 1 min, repeat these 40 times") == [
        ([(95, 180)], 1),
        ([(95, 15), (60, 60)], 40),
    ]


def test_a_count_told_after_one_step_asks_which_steps_it_repeats() -> None:
    result = plan("thermocycle plate_1: 95 C 3 min, then 30 cycles, then 72 C 5 min")
    assert isinstance(result, Clarification), result
    assert set(result.missing) == {"temperature", "duration"}


def test_a_count_told_with_its_one_step_is_planned_as_said() -> None:
    assert isinstance(plan("run 35 cycles of 95 C for 15 s on plate_1"), Plan)


@pytest.mark.parametrize(
    ("text", "stages"),
    [
        ("25 cycles: 95 C 20 s | 60 C 20 s", [(2, 25)]),  # the count's steps, split by pipes
        ("95 C 3 min | 40 cycles: 95 C 15 s, 60 C 1 min | 4 C hold", [(1, 1), (2, 40)]),
        ("95 C 2 min | 30x (95 C 15 s, 58 C 30 s) | 72 C 5 min", [(1, 1), (2, 30), (1, 1)]),
    ],
)
def test_pipes_split_a_programmes_parts_unless_they_split_its_counts_steps(
    text: str, stages: list[tuple[int, int]]
) -> None:
    parsed = prof.parse(text)
    assert [(len(s.steps), s.repeats) for s in parsed.stages] == stages
