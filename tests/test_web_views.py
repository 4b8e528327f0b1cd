"""The page's model from a run's records: wells through the steps, budgets with their margins
(a source that would run dry and a destination that would overflow show below zero), the plan
diff after an edit, readings grouped for heatmaps and series."""

from __future__ import annotations

from typing import Any

from labwright.web import views

BEFORE: dict[str, Any] = {
    "instrument": "lh1",
    "labware": {
        "res": {
            "kind": "plate",
            "well_max_volume_ul": 1000.0,
            "wells": {"A1": {"volume_ul": 150.0, "contents": {"dye": 150.0}}},
        },
        "p1": {"kind": "plate", "well_max_volume_ul": 200.0, "wells": {}},
        "tips": {"kind": "tip_rack", "tips_present": ["A1", "B1", "C1"]},
    },
}


def ev(op: str, labware: str, well: str, volume: float) -> dict[str, Any]:
    return {
        "type": "liquid_transferred",
        "data": {
            "op": op,
            "labware": labware,
            "well": well,
            "volume_ul": volume,
            "liquids": {"dye": volume},
        },
    }


def plan_and_sim(volume: float) -> tuple[dict[str, Any], dict[str, Any]]:
    plan = {
        "steps": [
            {"id": "s1", "instrument": "lh1", "command": "transfer", "args": {"volume_ul": volume}},
            {"id": "s2", "instrument": "reader1", "command": "read_absorbance", "args": {}},
        ]
    }
    events = [{"type": "tip_picked_up", "data": {"rack": "tips", "spot": "A1"}}]
    events += [ev("aspirate", "res", "A1", volume), ev("dispense", "p1", "A1", volume)]
    events += [ev("aspirate", "res", "A1", volume), ev("dispense", "p1", "A1", volume)]
    sim = {
        "predictions": [
            {"step_id": "s1", "instrument": "lh1", "events": events},
            {"step_id": "s2", "instrument": "reader1", "events": []},
        ]
    }
    return plan, sim


def test_deck_frames_replay_each_step_s_effect_on_wells_and_tips() -> None:
    plan, sim = plan_and_sim(50.0)
    frames = views.deck_frames("lh1", BEFORE, plan, sim)
    assert frames["wells"]["res"]["A1"] == {"v": 150.0, "c": {"dye": 150.0}}
    first, second = frames["steps"]
    changed = {(w["lw"], w["well"]): w for w in first["wells"]}
    assert changed[("res", "A1")]["v"] == 50.0 and changed[("p1", "A1")]["c"] == {"dye": 100.0}
    assert first["tips"] == [{"rack": "tips", "spot": "A1"}]
    assert second == {"step": "s2", "wells": [], "tips": []}  # another instrument's step


def test_budgets_show_margins_and_go_below_zero_when_a_source_runs_dry_or_a_well_overflows() -> (
    None
):
    plan, sim = plan_and_sim(50.0)
    ok = views.budgets(BEFORE, plan, sim)
    assert ok["sources"] == [
        {
            "well": "res:A1",
            "start": 150.0,
            "drawn": 100.0,
            "added": 0.0,
            "end": 50.0,
            "margin": 50.0,
        }
    ]
    assert ok["destinations"][0]["headroom"] == 100.0
    assert ok["tips"] == [{"rack": "tips", "present": 3, "used": 1, "left": 2}]
    plan, sim = plan_and_sim(120.0)
    short = views.budgets(BEFORE, plan, sim)
    assert short["sources"][0]["margin"] == -90.0
    assert short["destinations"][0]["headroom"] == -40.0


def test_the_plan_diff_lists_removed_and_added_steps() -> None:
    old = {"steps": [{"instrument": "lh1", "command": "transfer", "args": {"wells": ["A1"]}}]}
    new = {"steps": [{"instrument": "lh1", "command": "transfer", "args": {"wells": ["A2"]}}]}
    assert [d["op"] for d in views.plan_diff(old, new)] == ["-", "+"]
    assert views.plan_diff(old, old) == [] and views.plan_diff(None, new) == []


def test_readings_are_grouped_per_plate_and_mode_with_their_series() -> None:
    report = {
        "readings": [
            {
                "plate": "p1",
                "mode": "absorbance",
                "wavelength_nm": 600,
                "values": {"A1": 0.1, "B2": 0.4},
            },
            {
                "plate": "p1",
                "mode": "absorbance",
                "wavelength_nm": 600,
                "values": {"A1": 0.2, "B2": float("nan")},
            },
        ]
    }
    (group,) = views.readings(report)
    assert (group["rows"], group["cols"]) == (["A", "B"], [1, 2])
    assert (group["low"], group["high"]) == (0.2, 0.2) and len(group["series"]) == 2
