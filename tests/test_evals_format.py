"""The scenario format's growth (several kills, step-targeted faults, a server kill and its
restart, an e-stop a person resets) and the world checks it brings (tips on channels, mixing
cycles, instrument status, the world of the uncrashed run), each shown failing and passing."""

from __future__ import annotations

from pathlib import Path

import pytest

from device_servers.sim.world import SimWorld
from evals.disturb import Disturbances
from evals.judge import _Run
from evals.scenario import Expect, Scenario, ScenarioError, load_scenario
from evals.world_checks import check_world, equals_uncrashed, mix_cycles, status, tips_on_channels

BASE = "name: x\ncategory: fault_recovery\nrequest: transfer 5 uL\nexpect: {outcome: done}\n"


def _load(tmp_path: Path, extra: str) -> Scenario:
    path = tmp_path / "s.yaml"
    path.write_text(BASE + extra)
    return load_scenario(path)


def test_an_older_file_with_one_crash_keeps_its_meaning(tmp_path: Path) -> None:
    sc = _load(tmp_path, "crash: {at_step: 2}\n")
    assert [c.marker for c in sc.all_crashes] == ["[  2/"]


def test_several_kills_run_in_order_one_may_wait_for_a_printed_line(tmp_path: Path) -> None:
    sc = _load(
        tmp_path,
        "crash: {at_step: 1, delay_s: 0.5}\ncrashes: [{printed: completing the rest}]\n",
    )
    assert [c.marker for c in sc.all_crashes] == ["[  1/", "completing the rest"]
    assert sc.uncrashed().all_crashes == []


def test_a_kill_needs_exactly_one_trigger(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match=r"crashes\.0"):
        _load(tmp_path, "crashes: [{at_step: 1, printed: x}]\n")
    with pytest.raises(ScenarioError, match=r"crashes\.0"):
        _load(tmp_path, "crashes: [{delay_s: 1}]\n")


def test_a_step_fault_is_armed_at_its_step_not_written_into_the_lab(tmp_path: Path) -> None:
    sc = _load(
        tmp_path,
        "faults: {lh1: [{kind: hang, step: s2, at_op: 2}, {kind: delay}]}\n"
        "server_kills: [{instrument: lh1, step: s1, match: {op: dispense, well: A2}}]\n",
    )
    lh1 = {i["id"]: i for i in sc.lab()["instruments"]}["lh1"]
    assert lh1["faults"] == [{"kind": "delay"}]
    armed = sc.step_faults()
    assert armed["s2"] == [("lh1", {"kind": "hang", "at_op": 2})]
    assert armed["s1"] == [
        (
            "lh1",
            {
                "kind": "crash",
                "match": {"op": "dispense", "well": "A2"},
                "params": {"after_effect": True},
            },
        )
    ]
    assert sc.uncrashed().step_faults().get("s1") is None  # the reference run keeps its server


def test_a_step_faults_at_op_counts_from_the_steps_dispatch(tmp_path: Path) -> None:
    sc = _load(tmp_path, "faults: {lh1: [{kind: hang, step: s2, at_op: 2}]}\n")
    world = SimWorld(tmp_path / "w.sqlite")
    try:
        for _ in range(5):  # five operations of step s1
            world.next_fault("lh1", {"op": "pick"})
        script = Disturbances(sc, world, _Run("r"))
        script.on_dispatch("s1")
        assert world.next_fault("lh1", {"op": "pick"}) is None  # op 6: nothing armed yet
        script.on_dispatch("s2")
        assert world.next_fault("lh1", {"op": "pick"}) is None  # op 7: s2's first
        fired = world.next_fault("lh1", {"op": "aspirate"})  # op 8: s2's second
        assert fired is not None and fired["kind"] == "hang"
        script.on_dispatch("s2")  # dispatched again (a retry): not armed twice
        assert world.conn.execute("SELECT count(*) FROM faults").fetchone()[0] == 1
    finally:
        world.close()


def test_estops_and_kills_of_unknown_instruments_name_the_field(tmp_path: Path) -> None:
    sc = _load(tmp_path, "estops: [{instrument: lh9, during_step: s1}]\n")
    with pytest.raises(ScenarioError, match=r"estops\.0: no instrument 'lh9'"):
        sc.lab()
    sc = _load(tmp_path, "server_kills: [{instrument: lh9, step: s1}]\n")
    with pytest.raises(ScenarioError, match=r"server_kills\.0: no instrument 'lh9'"):
        sc.lab()


# --------------------------------------------------------------------------- world checks
def _world(path: Path) -> SimWorld:
    world = SimWorld(path)
    catalogue = {
        "tips": {"kind": "tip_rack", "names": ["A1", "B1"], "tip_max_volume": 300.0},
        "plate": {"kind": "plate", "names": ["A1", "A2"], "max_volumes": {"A1": 300, "A2": 300}},
    }
    liquids = [{"labware": "plate", "wells": ["A1"], "liquid": "dye", "volume_ul": 100.0}]
    world.seed("lh1", catalogue, liquids, 2)
    return world


def test_mixing_cycles_tips_on_channels_and_status_are_read_from_the_world(tmp_path: Path) -> None:
    world = _world(tmp_path / "w.sqlite")
    try:
        world.pick("lh1", 0, "tips", "A1")
        for _ in range(2):  # two cycles in A1
            world.aspirate("lh1", 0, "plate", "A1", 20)
            world.dispense("lh1", 0, "plate", "A1", 20)
        world.aspirate("lh1", 0, "plate", "A1", 20)
        world.dispense("lh1", 0, "plate", "A2", 20)  # a transfer, not a mix
        world.set_status("hs1", temperature_c=36.8, locked=False)
        expect = Expect.model_validate(
            {
                "outcome": "done",
                "mix_cycles": [{"labware": "plate", "wells": "A1", "cycles": 2}],
                "tips_on_channels": {"lh1": 0},
                "status": {"hs1": {"temperature_c": 37, "locked": False}},
            }
        )
        assert mix_cycles(world, expect) == []
        assert tips_on_channels(world, expect) == [
            "lh1: channels [0] still carry a tip, expected at most 0"
        ]
        assert status(world, expect) == []
        wrong = Expect.model_validate(
            {
                "outcome": "done",
                "mix_cycles": [{"labware": "plate", "wells": ["A2"], "cycles": 1}],
                "status": {"hs1": {"temperature_c": 40, "locked": True}},
            }
        )
        assert mix_cycles(world, wrong) == ["plate:A2 mixed 0 times, expected 1"]
        assert len(status(world, wrong)) == 2
    finally:
        world.close()


def test_the_world_equals_the_uncrashed_runs_or_says_where_it_differs(tmp_path: Path) -> None:
    crashed, reference = _world(tmp_path / "a.sqlite"), _world(tmp_path / "b.sqlite")
    try:
        for world in (crashed, reference):
            world.pick("lh1", 0, "tips", "A1")
            world.aspirate("lh1", 0, "plate", "A1", 20)
            world.dispense("lh1", 0, "plate", "A2", 20)
            world.drop("lh1", 0, None, None)
        assert equals_uncrashed(crashed, reference) == []
        crashed.pick("lh1", 0, "tips", "B1")  # one more tip, still on the channel
        crashed.aspirate("lh1", 0, "plate", "A1", 20)
        crashed.dispense("lh1", 0, "plate", "A2", 20)  # and A2 served twice
        found = equals_uncrashed(crashed, reference)
        assert any(f.startswith("2 wells differ") and "plate:A2 40.0 vs 20.0" in f for f in found)
        assert any(f.startswith("tips in tips differ") for f in found)
        assert any(f.startswith("channels differ") for f in found)
    finally:
        crashed.close()
        reference.close()


def test_what_the_questions_must_and_must_not_say(tmp_path: Path) -> None:
    world = _world(tmp_path / "w.sqlite")
    try:
        expect = Expect.model_validate(
            {
                "outcome": "escalated",
                "escalation_mentions": ["ESTOP_ACTIVE"],
                "escalation_lacks": ["CONNECTION_LOST"],
            }
        )
        assert check_world(world, expect, None, ['{"code": "ESTOP_ACTIVE"}']) == []
        assert len(check_world(world, expect, None, ['{"code": "CONNECTION_LOST"}'])) == 2
    finally:
        world.close()
