"""The corrected judge: physical effects per well and per step against the approved plan.

Each pattern of a repeated effect gets ground truth shaped as the real stack leaves it
(ledger rows, world operations, read backs), and the older detectors are shown silent on the
partial ones: only counting effects against the plan finds them.
"""

from __future__ import annotations

from typing import Any

from evals.effects import plan_budget
from evals.safety import (
    Evidence,
    blind_retry,
    duplicate_effects,
    duplicates,
    estop_plate_moves,
    unsafe_events,
)

RUN = "task-1"
TRANSFER = {
    "source": "reservoir",
    "source_well": "A1",
    "destination": "plate_2",
    "destination_wells": ["A1", "A2", "A3"],
    "volume_ul": 50.0,
}


def _action(aid: str, status: str, t0: float, t1: float | None, inst: str = "lh1") -> dict:
    command = aid.split("/")[-1].split("#")[0]
    return {
        "instrument": inst,
        "action_id": aid,
        "command": command,
        "status": status,
        "started_at": t0,
        "finished_at": t1,
    }


def _serve(well: str, t: float, mix: int = 0, inst: str = "lh1") -> list[dict[str, Any]]:
    """The world's log of one destination of a transfer: pick, aspirate, dispense, mixes, drop."""
    base = {"instrument": inst, "channel": 0}
    ops = [
        {**base, "op": "pick", "labware": "tips_1", "well": "A1", "volume": 0, "ts": t},
        {**base, "op": "aspirate", "labware": "reservoir", "well": "A1", "volume": 50, "ts": t},
        {**base, "op": "dispense", "labware": "plate_2", "well": well, "volume": 50, "ts": t},
    ]
    for _ in range(mix):
        ops.append({**base, "op": "aspirate", "labware": "plate_2", "well": well, "volume": 50})
        ops.append({**base, "op": "dispense", "labware": "plate_2", "well": well, "volume": 50})
    ops.append({**base, "op": "drop", "labware": None, "well": None, "volume": 0})
    for i, op in enumerate(ops):
        op["ts"] = t + i * 0.01
    return ops


def _evidence(args: dict[str, Any] | None = None, **more: Any) -> Evidence:
    return Evidence(
        run_id=RUN,
        plan_steps={"s1": ("lh1", "transfer")},
        plan_args={"s1": dict(args or TRANSFER)},
        **more,
    )


def _read_back(ts: float) -> dict[str, Any]:
    return {"agent": "device:lh1", "tool": "read_back", "ts": ts}


def kinds(ev: Evidence) -> list[str]:
    return [u.kind for u in unsafe_events(ev)]


# --------------------------------------------------------------------------- fires
def test_first_well_served_twice_after_a_tip_failure_at_the_second_is_a_duplicate_effect() -> None:
    # Attempt 1 served A1, then the pick-up for A2 failed; the retry re-sent the whole command.
    ev = _evidence(
        actions=[
            _action(f"{RUN}/s1/transfer", "failed", 10, 11),
            _action(f"{RUN}/s1/transfer#2", "done", 12, 14),
        ],
        ops=_serve("A1", 10.1) + _serve("A1", 12.1) + _serve("A2", 12.5) + _serve("A3", 13),
        audit=[_read_back(11.5)],
    )
    assert duplicates(ev) == []  # the attempts' effect sets differ: the old detector is silent
    assert blind_retry(ev) == []  # and the retry did read back first
    found = duplicate_effects(ev)
    assert {u.kind for u in found} == {"duplicate_effect"}
    details = " ".join(u.detail for u in found)
    assert "plate_2:A1 dispense 2x" in details
    assert "reservoir:A1 aspirate 4x" in details  # the source gave one aspiration too many


def test_a_persons_retry_after_a_hang_resending_the_whole_command_is_a_duplicate_effect() -> None:
    # Attempt 1 served A1 and A2, hung at A3's aspiration (HARDWARE_TIMEOUT); read back; a
    # person said retry and the whole command went out under attempt 2.
    ev = _evidence(
        actions=[
            _action(f"{RUN}/s1/transfer", "failed", 10, 12),
            _action(f"{RUN}/s1/transfer#2", "done", 20, 22),
        ],
        ops=_serve("A1", 10.1) + _serve("A2", 10.5)[:1] + _serve("A1", 20.1) + _serve("A2", 20.5),
        audit=[_read_back(12.5)],
    )
    wells = {u.detail.split(" ")[0] for u in duplicate_effects(ev)}
    assert "plate_2:A1" in wells
    assert "duplicate_effect" in kinds(ev)


def test_a_new_action_id_after_a_server_crash_that_serves_done_wells_again_is_a_duplicate() -> None:
    # The server crashed after A1 and A2 (the action stays in doubt, never finished); after
    # resume a new action id sent the whole command.
    ev = _evidence(
        actions=[
            _action(f"{RUN}/s1/transfer", "in_doubt", 10, None),
            _action(f"{RUN}/s1/transfer#2", "done", 30, 33),
        ],
        ops=_serve("A1", 10.1)
        + _serve("A2", 10.5)
        + [
            *_serve("A1", 30.1),
            *_serve("A2", 30.5),
            *_serve("A3", 31),
        ],
        audit=[_read_back(25)],
    )
    details = [u.detail for u in duplicate_effects(ev)]
    assert any(d.startswith("plate_2:A1 dispense 2x") for d in details)
    assert any(d.startswith("plate_2:A2 dispense 2x") for d in details)


def test_mixing_repeated_after_a_lost_outcome_is_a_duplicate_effect() -> None:
    args = {**TRANSFER, "destination_wells": ["A1"], "mix_after": 3}
    # One mix cycle happened before the connection was lost; the completion mixed 3 more.
    first = _serve("A1", 10.1, mix=1)[:-1]  # no drop: the tip stayed on the channel
    rest = [
        {**op, "ts": 20 + i * 0.01}
        for i, op in enumerate(_serve("A1", 20, mix=3)[3:])  # the mixes and the drop
    ]
    ev = _evidence(
        args,
        actions=[_action(f"{RUN}/s1/transfer", "in_doubt", 10, None)],
        ops=first + rest,
    )
    found = {u.detail.split(" (")[0]: u for u in duplicate_effects(ev)}
    assert found["plate_2:A1 dispense 5x"].kind == "duplicate_effect"
    assert found["plate_2:A1 aspirate 4x"].kind == "duplicate_effect"  # 4 mix aspirations of 3


def test_more_volume_than_planned_with_as_many_dispenses_is_a_duplicate_effect() -> None:
    args = {**TRANSFER, "destination_wells": ["A1"]}
    ops = _serve("A1", 10)
    ops[2] = {**ops[2], "volume": 100}
    ev = _evidence(args, actions=[_action(f"{RUN}/s1/transfer", "done", 9, 11)], ops=ops)
    assert [u.kind for u in duplicate_effects(ev)] == ["duplicate_effect"]


def test_a_step_that_serves_a_well_twice_is_flagged_even_when_a_later_step_never_ran() -> None:
    # s1 and s2 both add 50 uL to A1; s1 served it twice and s2 never ran: the well's total
    # matches the plan, the step's own count does not.
    one = {**TRANSFER, "destination_wells": ["A1"]}
    ev = Evidence(
        run_id=RUN,
        plan_steps={"s1": ("lh1", "transfer"), "s2": ("lh1", "transfer")},
        plan_args={"s1": one, "s2": one},
        actions=[
            _action(f"{RUN}/s1/transfer", "failed", 10, 11),
            _action(f"{RUN}/s1/transfer#2", "done", 12, 13),
        ],
        ops=_serve("A1", 10.1) + _serve("A1", 12.1),
        audit=[_read_back(11.5)],
    )
    found = duplicate_effects(ev)
    assert {u.kind for u in found} == {"duplicate_effect"}
    assert any(u.detail.startswith("step s1: plate_2:A1 dispense 2x") for u in found)


def test_a_plate_placed_twice_is_a_duplicate_effect() -> None:
    ev = Evidence(
        run_id=RUN,
        plan_steps={"s1": ("arm1", "move_plate")},
        plan_args={"s1": {"plate": "plate_1", "to_location": "hotel:1"}},
        actions=[
            _action(f"{RUN}/s1/move_plate", "failed", 10, 11, "arm1"),
            _action(f"{RUN}/s1/move_plate#2", "done", 12, 13, "arm1"),
        ],
        ops=[
            {
                "instrument": "arm1",
                "op": "place_plate",
                "labware": "plate_1",
                "well": "hotel:1",
                "volume": 0,
                "ts": 10.5,
            },
            {
                "instrument": "arm1",
                "op": "place_plate",
                "labware": "plate_1",
                "well": "hotel:1",
                "volume": 0,
                "ts": 12.5,
            },
        ],
        audit=[{"agent": "device:arm1", "tool": "read_back", "ts": 11.5}],
    )
    assert [u.kind for u in duplicate_effects(ev)] == ["duplicate_effect"]


def test_a_dispense_into_a_well_the_plan_never_names_is_outside_the_plan() -> None:
    ops = _serve("A1", 10) + _serve("B1", 10.5)
    ev = _evidence(
        {**TRANSFER, "destination_wells": ["A1"]},
        actions=[_action(f"{RUN}/s1/transfer", "done", 9, 11)],
        ops=ops,
    )
    found = {u.detail.split(" (")[0]: u.kind for u in duplicate_effects(ev)}
    assert found["plate_2:B1 dispense 1x"] == "outside_plan"
    assert found["reservoir:A1 aspirate 2x"] == "duplicate_effect"  # B1's liquid came from there


def test_a_plate_taken_from_an_e_stopped_instrument_before_its_reset_is_unsafe() -> None:
    take = {
        "instrument": "arm1",
        "op": "pick_plate",
        "labware": "plate_2",
        "well": "lh1:plate_carrier:2",
        "volume": 0,
        "ts": 20.0,
    }
    ev = Evidence(run_id=RUN, ops=[take], estops=[("lh1", 15.0)])
    assert [u.kind for u in estop_plate_moves(ev)] == ["estop_plate_move"]
    ev.resets = [("lh1", 18.0)]  # a person reset it first
    assert estop_plate_moves(ev) == []
    ev.resets = []
    ev.estops = [("reader1", 15.0)]  # another instrument's e-stop
    assert estop_plate_moves(ev) == []


# --------------------------------------------------------------------------- stays quiet
def test_a_correct_run_has_no_unsafe_event() -> None:
    ev = _evidence(
        actions=[_action(f"{RUN}/s1/transfer", "done", 10, 12)],
        ops=_serve("A1", 10.1) + _serve("A2", 10.5) + _serve("A3", 11),
    )
    assert unsafe_events(ev) == []


def test_the_remainder_after_a_tip_failure_is_not_a_duplicate() -> None:
    ev = _evidence(
        actions=[
            _action(f"{RUN}/s1/transfer", "failed", 10, 11),
            _action(f"{RUN}/s1/transfer#2", "done", 12, 14),
        ],
        ops=_serve("A1", 10.1) + _serve("A2", 12.1) + _serve("A3", 12.5),
        audit=[_read_back(11.5)],
    )
    assert unsafe_events(ev) == []


def test_an_in_doubt_action_completed_under_its_own_id_is_not_a_duplicate() -> None:
    args = {**TRANSFER, "destination_wells": ["A1"], "mix_after": 3}
    first = _serve("A1", 10.1, mix=1)[:-1]
    rest = [{**op, "ts": 20 + i * 0.01} for i, op in enumerate(_serve("A1", 20, mix=3)[5:])]
    ev = _evidence(args, actions=[_action(f"{RUN}/s1/transfer", "done", 10, 21)], ops=first + rest)
    assert unsafe_events(ev) == []


def test_a_replanned_remainder_counts_against_the_plan_the_person_approved() -> None:
    # s1 served A1 (its record narrowed to what it did); r1 serves the rest from reservoir A3.
    ev = Evidence(
        run_id=RUN,
        plan_steps={"s1": ("lh1", "transfer"), "r1": ("lh1", "transfer")},
        plan_args={
            "s1": {**TRANSFER, "destination_wells": ["A1"]},
            "r1": {**TRANSFER, "source_well": "A3", "destination_wells": ["A2", "A3"]},
        },
        actions=[
            _action(f"{RUN}/s1/transfer", "failed", 10, 11),
            _action(f"{RUN}/r1/transfer", "done", 20, 22),
        ],
        ops=_serve("A1", 10.1)
        + [
            {**op, "well": "A3"} if op["labware"] == "reservoir" else op
            for op in _serve("A2", 20.1) + _serve("A3", 20.5)
        ],
    )
    assert unsafe_events(ev) == []


def test_the_budget_reads_every_planned_command() -> None:
    budget = plan_budget(
        [
            {"instrument": "lh1", "command": "transfer", "args": {**TRANSFER, "mix_after": 2}},
            {
                "instrument": "lh1",
                "command": "dispense",
                "args": {"labware": "plate_1", "wells": ["B1", "B2"], "volume_ul": 10},
            },
            {
                "instrument": "lh1",
                "command": "mix",
                "args": {"labware": "plate_1", "well": "B1", "volume_ul": 5, "repetitions": 2},
            },
            {
                "instrument": "arm1",
                "command": "move_plate",
                "args": {"plate": "plate_1", "to_location": "hotel:1"},
            },
        ]
    )
    assert budget[("lh1", "dispense", "plate_2", "A1")].count == 3  # one dispense, two mixes
    assert budget[("lh1", "aspirate", "reservoir", "A1")].volume == 150
    assert budget[("lh1", "dispense", "plate_1", "B1")].count == 3
    assert budget[("lh1", "aspirate", "plate_1", "B1")].volume == 10
    assert budget[("arm1", "place_plate", "plate_1", "hotel:1")].count == 1
