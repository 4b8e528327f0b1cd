"""The embedded rule planner on a table of requests, and exact checks of a few plans.

The lab is pure data (a LabView): lh1 with tips_1, a reservoir (dye in A1, buffer in A2),
plate_1 and plate_2 on its deck; reader1; hs1; arm1. No server is started.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import pairwise

import pytest

from agents.task.planning import Clarification, Plan, Planner, PlanStep, Refusal
from agents.task.planning.models import InstrumentView, LabView, LabwareView, WellView
from agents.task.planning.rules import RulePlanner
from device_servers.contract import Station
from device_servers.heater_shaker.config import HeaterShakerConfig
from device_servers.plate_reader.config import PlateReaderConfig

LH_COMMANDS = ["transfer", "mix", "pick_up_tips", "aspirate", "dispense", "drop_tips"]
READER_COMMANDS = [
    "open_drawer",
    "close_drawer",
    "read_absorbance",
    "read_fluorescence",
    "read_luminescence",
]
HS_COMMANDS = [
    "lock_plate",
    "unlock_plate",
    "set_temperature",
    "wait_for_temperature",
    "shake",
    "stop",
]
WORKSPACE = [
    "lh1:plate_carrier:0",
    "lh1:plate_carrier:1",
    "lh1:plate_carrier:2",
    "reader1:drawer",
    "hs1:holder",
    "hotel:1",
    "hotel:2",
]


def _stations() -> dict[str, Station]:
    """What the test lab's instruments publish in get_state: the reader and heater-shaker from
    their own kinds' descriptions, deck slots and hotel shelves as the lab makes them."""
    published = [
        *PlateReaderConfig(kind="plate_reader", id="reader1").stations(),
        *HeaterShakerConfig(kind="heater_shaker", id="hs1").stations(),
        Station(place="lh1:plate_carrier:*", instrument="lh1", role="home"),
        *(
            Station(place=w, instrument="hotel", role="shelf")
            for w in WORKSPACE
            if w[:6] == "hotel:"
        ),
    ]
    return {s.place: s for s in published}


def _plate(pid: str, slot: int, at: str | None = None) -> LabwareView:
    home = f"lh1:plate_carrier:{slot}"
    return LabwareView(
        id=pid,
        kind="plate",
        instrument="lh1",
        location=at or home,
        home=home,
        rows=8,
        cols=12,
        well_max_volume_ul=360.0,
    )


def make_lab(
    *,
    liquids: dict[str, tuple[str, float]] | None = None,
    plate_1_at: str | None = None,
    arm: bool = True,
) -> LabView:
    """The test lab; ``liquids`` maps reservoir wells to (liquid, uL)."""
    liquids = liquids if liquids is not None else {"A1": ("dye", 10000), "A2": ("buffer", 12000)}
    wells = {w: WellView(volume_ul=v, contents={name: v}) for w, (name, v) in liquids.items()}
    instruments = {
        "lh1": InstrumentView(id="lh1", kind="liquid_handler", commands=LH_COMMANDS),
        "reader1": InstrumentView(
            id="reader1",
            kind="plate_reader",
            commands=READER_COMMANDS,
            location="reader1:drawer",
            limits={"wavelength_range_nm": (230, 1000)},
        ),
        "hs1": InstrumentView(
            id="hs1",
            kind="heater_shaker",
            commands=HS_COMMANDS,
            location="hs1:holder",
            limits={"temperature_range_c": (4, 100), "rpm_range": (200, 3000)},
        ),
    }
    if arm:
        instruments["arm1"] = InstrumentView(
            id="arm1", kind="plate_mover", commands=["move_plate", "home"]
        )
    labware = {
        "tips_1": LabwareView(
            id="tips_1",
            kind="tip_rack",
            instrument="lh1",
            location="lh1:tip_carrier:0",
            home="lh1:tip_carrier:0",
            rows=8,
            cols=12,
            tips_remaining=96,
            tip_max_volume_ul=400.0,
        ),
        "reservoir": LabwareView(
            id="reservoir",
            kind="plate",
            instrument="lh1",
            location="lh1:plate_carrier:0",
            home="lh1:plate_carrier:0",
            rows=1,
            cols=12,
            well_max_volume_ul=15000.0,
            wells=wells,
        ),
        "plate_1": _plate("plate_1", 1, plate_1_at),
        "plate_2": _plate("plate_2", 2),
    }
    return LabView(
        instruments=instruments, labware=labware, mover_locations=WORKSPACE, stations=_stations()
    )


LAB = make_lab()
PLATES = {"reservoir", "plate_1", "plate_2"}
PLANNER: Planner = RulePlanner()


def plan(request: str, lab: LabView = LAB) -> Plan | Clarification | Refusal:
    return PLANNER.plan(request, lab)


def commands(result: Plan | Clarification | Refusal) -> list[str]:
    assert isinstance(result, Plan), result
    return [f"{s.instrument}.{s.command}" for s in result.steps]


HS_CYCLE = ["hs1.lock_plate", "hs1.shake", "hs1.stop", "hs1.unlock_plate"]
TO_HS = ["hs1.unlock_plate", "arm1.move_plate"]
TO_READER = ["reader1.open_drawer", "arm1.move_plate", "reader1.close_drawer"]
# diluent (one transfer, one tip), stock into the first well, one transfer per step, then the
# last well's excess to waste (the final volume is stated).
TO_WASTE = ["lh1.pick_up_tips", "lh1.aspirate", "lh1.drop_tips"]
DILUTION_12 = ["lh1.transfer"] * 13 + TO_WASTE
DILUTION_8 = ["lh1.transfer"] * 9 + TO_WASTE
MIX_ONE = ["lh1.pick_up_tips", "lh1.mix", "lh1.drop_tips"]
HEATED = [
    "hs1.set_temperature",
    *TO_HS,
    "hs1.lock_plate",
    "hs1.wait_for_temperature",
    "hs1.shake",
    "hs1.stop",
    "hs1.unlock_plate",
]
UNHEATED = [*TO_HS, *HS_CYCLE]
HELD = [
    "hs1.set_temperature",
    *TO_HS,
    "hs1.wait_for_temperature",
    "hs1.hold",
    "hs1.stop",
]


@dataclass(frozen=True)
class Case:
    request: str
    kind: str
    steps: list[str] = field(default_factory=list)  # plans: the exact command sequence
    missing: list[str] = field(default_factory=list)  # clarifications
    options: set[str] = field(default_factory=set)  # clarifications: must be among the options
    reason: str = ""  # refusals: a fragment the reason must name


def P(request: str, steps: list[str]) -> Case:
    return Case(request, "plan", steps=steps)


def Q(request: str, missing: list[str], options: set[str] | None = None) -> Case:
    return Case(request, "clarification", missing=missing, options=options or set())


def R(request: str, reason: str) -> Case:
    return Case(request, "refusal", reason=reason)


CASES = [
    # ---- transfer: single wells, ranges, rows, columns, whole plates, unit spellings
    P("transfer 50 uL from reservoir A1 to plate_1 A1", ["lh1.transfer"]),
    P("transfer 50 µL from reservoir A1 to plate_1 A1:A12", ["lh1.transfer"]),
    P("Transfer 25 ul from reservoir A2 to row A of plate_1", ["lh1.transfer"]),
    P("transfer 10 microliters from reservoir A1 to column 3 of plate_2", ["lh1.transfer"]),
    P("transfer 20 uL from reservoir A2 to all wells of plate_2", ["lh1.transfer"]),
    P("transfer 0.05 mL from reservoir A1 to plate_1 B2", ["lh1.transfer"]),
    P("transfer 50 uL from reservoir A1 to A1:A12 of plate_1", ["lh1.transfer"]),
    P("transfer 30 uL from reservoir A1 to plate_1 A1, B1 and C1", ["lh1.transfer"]),
    P("pipette 40 μL of dye into plate 1 H12", ["lh1.transfer"]),
    P("transfer 50 uL of dye to plate_1 A1 and mix 3 times", ["lh1.transfer"]),
    # ---- add / distribute a named liquid
    P("add 100 uL of buffer to row A of plate_2", ["lh1.transfer"]),
    P("distribute 50 uL buffer into column 3 of plate_1", ["lh1.transfer"]),
    P("fill row B of plate_2 with 100 uL of buffer", ["lh1.transfer"]),
    P("add 0.1 ml of dye to plate_2 A1-A6", ["lh1.transfer"]),
    # ---- serial dilution
    P(
        "make a 2-fold serial dilution of dye across row A of plate_1, 100 uL final volume",
        DILUTION_12,
    ),
    P(
        "make a 3-fold serial dilution of dye across column 1 of plate_1, 150 uL final volume",
        DILUTION_8,
    ),
    # "8 steps" are eight transfers (nine wells), as the planning corpus counts them.
    P(
        "make an 8-step 2-fold serial dilution of dye across row B of plate_2, 100 uL final volume",
        ["lh1.transfer"] * 10 + TO_WASTE,
    ),
    P(
        "serially dilute dye 1:10 in buffer across A1:A6 of plate_1 to 200 uL final volume",
        ["lh1.transfer"] * 7 + TO_WASTE,
    ),
    P(
        "prepare a twofold dilution series of dye with buffer down column 2 of plate_1, "
        "100 uL per well",
        DILUTION_8,
    ),
    # ---- mix
    P(
        "transfer 100 uL from reservoir A1 to plate_1 A1 then mix plate_1 A1 5 times with 50 uL",
        ["lh1.transfer", *MIX_ONE],
    ),
    P(
        "add 100 uL of buffer to plate_2 A1:A3, then mix them twice with 50 uL",
        ["lh1.transfer", *MIX_ONE * 3],
    ),
    # ---- incubate / shake, unit spellings
    P("shake plate_1 at 37 C for 5 min at 600 rpm", HEATED),
    P("shake plate_2 for 30 s at 1000 rpm", UNHEATED),
    P("incubate plate_1 at 37 °C for 10 minutes at 300 rpm", HEATED),
    P("incubate plate_1 at 30 degrees for 1 h with shaking at 250 rpm", HEATED),
    P("shake plate_1 at 98.6 F for 2 min at 500 rpm", HEATED),
    P("shake plate_1 at 37C for 90 sec at 800 rpm", HEATED),
    P("agitate plate_2 for 2 hours at 300 rpm", UNHEATED),
    # ---- read
    P("read absorbance of plate_1 at 600 nm", [*TO_READER, "reader1.read_absorbance"]),
    P(
        "read fluorescence of plate_2 excitation 485 nm emission 520 nm",
        [*TO_READER, "reader1.read_fluorescence"],
    ),
    P("read luminescence of plate_1", [*TO_READER, "reader1.read_luminescence"]),
    P("measure OD600 of plate_2", [*TO_READER, "reader1.read_absorbance"]),
    P("read fluorescence of plate_1 at 485/520 nm", [*TO_READER, "reader1.read_fluorescence"]),
    P("read absorbance of row A of plate_1 at 450 nm", [*TO_READER, "reader1.read_absorbance"]),
    P(
        "read absorbance and luminescence of plate_1 at 450 nm",
        [*TO_READER, "reader1.read_absorbance", "reader1.read_luminescence"],
    ),
    # ---- move
    P("move plate_1 to the reader", TO_READER),
    P("move plate_1 to hs1", TO_HS),
    P("move plate_1 to hotel 1", ["arm1.move_plate"]),
    P("bring plate_1 to hotel:2", ["arm1.move_plate"]),
    P("move plate_2 to the heater-shaker then move it back", [*TO_HS, "arm1.move_plate"]),
    R("move plate_1 to the incubator", "incubator"),  # the lab has none: never the shaker
    # ---- chained requests: the moves between instruments are planned
    P(
        "make a 2-fold serial dilution of dye across row A of plate_1, 100 uL final volume, "
        "then read absorbance at 600 nm",
        [*DILUTION_12, *TO_READER, "reader1.read_absorbance"],
    ),
    P(
        "add 100 uL of buffer to row A of plate_2, then shake it at 37 C for 5 min at 600 rpm "
        "and then read absorbance at 600 nm",
        ["lh1.transfer", *HEATED, *TO_READER, "reader1.read_absorbance"],
    ),
    P(
        "read absorbance of plate_1 at 600 nm; transfer 50 uL from reservoir A1 to plate_1 A1",
        [*TO_READER, "reader1.read_absorbance", *TO_READER, "lh1.transfer"],
    ),
    P(
        "read absorbance of plate_1 at 600 nm then read luminescence of plate_2",
        [
            *TO_READER,
            "reader1.read_absorbance",
            "reader1.open_drawer",
            "arm1.move_plate",
            "arm1.move_plate",
            "reader1.close_drawer",
            "reader1.read_luminescence",
        ],
    ),
    P(
        "shake plate_1 for 1 min at 500 rpm. Then read absorbance of plate_1 at 600 nm",
        [*UNHEATED, *TO_READER, "reader1.read_absorbance"],
    ),
    P(
        "transfer 50 uL from reservoir A1 to plate_1 A1 and then transfer 50 uL from plate_1 A1 "
        "to plate_1 A2",
        ["lh1.transfer", "lh1.transfer"],
    ),
    P(
        "move plate_1 to hs1, then add 50 uL of buffer to plate_1 A1",
        [*TO_HS, "arm1.move_plate", "lh1.transfer"],
    ),
    # ---- clarifications: never invent a number or a place
    Q("add some buffer to plate_1 A1", ["volume"]),
    Q("add a bit of dye to plate_1 A1", ["volume"]),
    Q("transfer a few uL from reservoir A1 to plate_1 A1", ["volume"]),
    Q("transfer 50 from reservoir A1 to plate_1 A1", ["volume"]),
    Q("transfer 50 uL from reservoir A1 to plate_3 A1", ["plate"], PLATES),
    Q("add 100 uL of water to plate_1 A1", ["liquid", "source"], {"dye", "buffer"}),
    Q("transfer 50 uL from reservoir to plate_1 A1", ["source"]),
    Q("add 100 uL of buffer to plate_1", ["wells"]),
    Q("add 100 uL to plate_1 A1", ["liquid"], {"dye", "buffer"}),
    Q("shake plate_1 for 5 min", ["speed"]),
    Q("shake plate_1 at 600 rpm", ["duration"]),
    P("incubate plate_1 at 37 C for 10 minutes", HELD),
    P("incubate plate_1 for 10 min at 300 rpm", UNHEATED),
    Q("shake plate_1 at 37 for 5 min at 600 rpm", ["temperature"]),
    Q("incubate plate_1 overnight at 37 C at 300 rpm", ["duration"]),
    Q("read absorbance of plate_1", ["wavelength"]),
    Q("read fluorescence of plate_1", ["wavelength"]),
    Q("read plate_1", ["mode"], {"absorbance", "fluorescence", "luminescence"}),
    Q("read absorbance at 600 nm", ["plate"], {"plate_1", "plate_2"}),
    Q("make a 2-fold serial dilution of dye across row A of plate_1", ["volume"]),
    Q("make a 2-fold serial dilution of dye across row A of plate_1 with 100 uL", ["volume"]),
    Q("make a serial dilution of dye across row A of plate_1, 100 uL final volume", ["fold"]),
    Q(
        "make a 2-fold serial dilution across row A of plate_1, 100 uL final volume",
        ["liquid"],
        {"dye", "buffer"},
    ),
    Q("make a 2-fold serial dilution of dye across plate_1, 100 uL final volume", ["wells"]),
    # an empty well is refused before its count is asked: there is nothing to mix
    R("mix plate_1 A1 with 50 uL", "nothing to mix"),
    Q("transfer 50 uL dye to plate_1 A1, then mix plate_1 A1 with 50 uL", ["count"]),
    Q("move plate_1 to hotel", ["location"], {"hotel:1", "hotel:2"}),
    Q("move plate_1 to the moon", ["location"], {"reader1:drawer", "hs1:holder"}),
    Q("move plate_1 a bit", ["location"], {"hotel:1", "hotel:2"}),
    R("dance the macarena", "not a request for the lab"),
    Q(
        "transfer 50 uL from reservoir A1 to plate_1 A1 then shake it for a while at 600 rpm",
        ["duration"],
    ),
    R(
        "add 100 uL of buffer to all wells of plate_1 then add 100 uL buffer to all wells of "
        "plate_2",
        "2400 uL",
    ),
    R("add 50 uL of buffer to row K of plate_1", "row K"),
    # ---- refusals: impossible values
    R("transfer 50 L from reservoir A1 to plate_1 A1", "360"),
    R("add 400 uL of buffer to plate_1 A1", "360"),
    R("transfer -5 uL from reservoir A1 to plate_1 A1", "-5 uL"),
    R("transfer 50 uL from plate_1 A1 to plate_2 A1", "plate_1 A1"),
    R("shake plate_1 at 500 C for 5 min at 600 rpm", "100 C"),
    R("shake plate_1 at -20 C for 5 min at 600 rpm", "4 C"),
    R("shake plate_1 at 37 C for 5 min at 100000 rpm", "3000 rpm"),
    R("shake plate_1 at 37 C for 48 h at 600 rpm", "86400 s"),
    R("read absorbance of plate_1 at 2000 nm", "1000 nm"),
    R("read fluorescence of plate_1 excitation 520 nm emission 485 nm", "485 nm"),
    R("mix plate_1 A1 5 times with 50 uL", "plate_1 A1"),
    R(
        "transfer 50 uL from reservoir A1 to plate_1 A1 then mix plate_1 A1 100 times with 20 uL",
        "50 times",
    ),
    R("make a 2-fold serial dilution of dye across row A of plate_1, 300 uL final volume", "600"),
    R(
        "make a 1-fold serial dilution of dye across row A of plate_1, 100 uL final volume",
        "1-fold",
    ),
    R(
        "make a 12-step 2-fold serial dilution of dye across column 1 of plate_1, 100 uL final "
        "volume",
        "8 wells",
    ),
    R("move tips_1 to the reader", "tips_1"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.request[:60] for c in CASES])
def test_request_table(case: Case) -> None:
    result = plan(case.request)
    assert result.kind == case.kind, result
    if isinstance(result, Plan):
        assert commands(result) == case.steps
        assert [s.id for s in result.steps] == [f"s{i}" for i in range(1, len(result.steps) + 1)]
        assert result.summary and "\n" not in result.summary
    elif isinstance(result, Clarification):
        assert result.missing == case.missing
        assert case.options <= set(result.options), result.options
    else:
        assert case.reason in result.reason, result.reason


def test_the_table_covers_every_family_and_outcome() -> None:
    kinds = [c.kind for c in CASES]
    assert len(CASES) >= 60
    assert kinds.count("clarification") >= 15 and kinds.count("refusal") >= 10


def test_clarification_options_name_real_lab_items() -> None:
    for request, expected in [
        ("transfer 50 uL from reservoir A1 to plate_9 A1", PLATES),
        ("add 100 uL of water to plate_1 A1", {"dye", "buffer"}),
        ("read absorbance at 600 nm", {"plate_1", "plate_2"}),
        ("move plate_1 to the moon", set(WORKSPACE)),
    ]:
        result = plan(request)
        assert isinstance(result, Clarification)
        assert set(result.options) == expected


def test_transfer_plan_has_exact_args_and_expected_volumes() -> None:
    result = plan("transfer 50 uL from reservoir A1 to plate_1 A1:A3")
    assert isinstance(result, Plan)
    (step,) = result.steps
    assert (step.id, step.instrument, step.command) == ("s1", "lh1", "transfer")
    assert step.args == {
        "source": "reservoir",
        "source_well": "A1",
        "destination": "plate_1",
        "destination_wells": ["A1", "A2", "A3"],
        "volume_ul": 50.0,
        "tip_rack": "tips_1",
        "new_tip": "once",
    }
    assert step.expect == {
        "wells": {
            "plate_1:A1": 50.0,
            "plate_1:A2": 50.0,
            "plate_1:A3": 50.0,
            "reservoir:A1": 9850.0,
        }
    }


def test_add_picks_the_fullest_source_that_has_enough() -> None:
    lab = make_lab(liquids={"A1": ("buffer", 500), "A2": ("buffer", 3000), "A3": ("buffer", 800)})
    result = plan("add 100 uL of buffer to row A of plate_2", lab)
    assert isinstance(result, Plan)
    assert result.steps[0].args["source_well"] == "A2"


def test_add_with_no_source_holding_enough_is_refused_as_insufficient_liquid() -> None:
    lab = make_lab(liquids={"A1": ("buffer", 500), "A2": ("buffer", 300)})
    result = plan("add 100 uL of buffer to row A of plate_2", lab)
    assert isinstance(result, Refusal)
    assert result.code == "insufficient_liquid" and "500 uL" in result.reason


def test_large_volumes_are_split_into_tip_sized_passes_with_one_tip() -> None:
    result = plan("transfer 1 mL from reservoir A2 to reservoir A3")
    assert isinstance(result, Plan)
    aspirated = [s.args["volume_ul"] for s in result.steps if s.command == "aspirate"]
    assert aspirated == pytest.approx([333.3333, 333.3333, 333.3334], abs=1e-3)
    assert [s.command for s in result.steps].count("pick_up_tips") == 1
    assert result.steps[-2].expect["wells"]["reservoir:A3"] == pytest.approx(1000, abs=0.01)


def _simulate(steps: list[PlanStep], lab: LabView) -> dict[tuple[str, str], tuple[float, float]]:
    """Replay transfers and aspirations: (labware, well) -> (uL, uL of dye)."""
    state = {
        (lw.id, w): (v.volume_ul, v.contents.get("dye", 0.0))
        for lw in lab.labware.values()
        for w, v in lw.wells.items()
    }

    def take(key: tuple[str, str], volume: float) -> float:
        have, dye = state.get(key, (0.0, 0.0))
        assert have + 1e-9 >= volume, f"{key} runs dry"
        moved = dye * volume / have
        state[key] = (have - volume, dye - moved)
        return moved

    for step in steps:
        if step.command == "transfer":
            a = step.args
            for well in a["destination_wells"]:
                dye = take((a["source"], a["source_well"]), a["volume_ul"])
                have, had = state.get((a["destination"], well), (0.0, 0.0))
                state[a["destination"], well] = (have + a["volume_ul"], had + dye)
                assert have + a["volume_ul"] <= 360 or a["destination"] == "reservoir"
        elif step.command == "aspirate":
            for well in step.args["wells"]:
                take((step.args["labware"], well), step.args["volume_ul"])
    return state


@pytest.mark.parametrize(
    ("request_text", "fold", "final", "wells"),
    [
        (
            "make a 2-fold serial dilution of dye across row A of plate_1, 100 uL final volume",
            2,
            100,
            [f"A{c}" for c in range(1, 13)],
        ),
        (
            "make a 3-fold serial dilution of dye across column 1 of plate_1, 150 uL final volume",
            3,
            150,
            [f"{r}1" for r in "ABCDEFGH"],
        ),
        (
            "make a 7-step 10-fold serial dilution of dye across row C of plate_1, 200 uL final "
            "volume",
            10,
            200,
            [f"C{c}" for c in range(1, 9)],
        ),
    ],
)
def test_serial_dilution_leaves_every_well_at_final_volume_with_k_fold_steps(
    request_text: str, fold: int, final: float, wells: list[str]
) -> None:
    result = plan(request_text)
    assert isinstance(result, Plan)
    state = _simulate(result.steps, LAB)
    volumes = [state["plate_1", w][0] for w in wells]
    concentrations = [state["plate_1", w][1] / state["plate_1", w][0] for w in wells]
    assert volumes == pytest.approx([final] * len(wells), abs=1e-3)
    assert concentrations[0] == pytest.approx(1.0)
    for before, after in pairwise(concentrations):
        assert after == pytest.approx(before / fold, rel=1e-3)
    transfers = [s for s in result.steps if s.command == "transfer"]
    assert all(s.args.get("mix_after") == 3 for s in transfers[2:])
    assert all(s.expect["wells"] for s in transfers)


def test_dilution_without_a_diluent_in_the_lab_asks_for_one() -> None:
    lab = make_lab(liquids={"A1": ("dye", 10000), "A2": ("water", 12000)})
    result = plan(
        "make a 2-fold serial dilution of dye across row A of plate_1, 100 uL final volume", lab
    )
    assert isinstance(result, Clarification)
    assert result.missing == ["liquid"] and result.options == ["water"]


def test_dilution_with_a_named_diluent_uses_it() -> None:
    lab = make_lab(liquids={"A1": ("dye", 10000), "A2": ("water", 12000)})
    result = plan(
        "make a 2-fold serial dilution of dye in water across row A of plate_1, "
        "100 uL final volume",
        lab,
    )
    assert isinstance(result, Plan)
    assert result.steps[0].args["source_well"] == "A2"


def test_shake_plans_heat_moves_lock_shake_stop_unlock_with_args() -> None:
    result = plan("shake plate_1 at 37 C for 5 min at 600 rpm")
    assert isinstance(result, Plan)
    by_command = {s.command: s for s in result.steps}
    assert by_command["set_temperature"].args == {"celsius": 37.0}
    assert by_command["move_plate"].args == {"plate": "plate_1", "to_location": "hs1:holder"}
    assert by_command["move_plate"].instrument == "arm1"
    assert by_command["move_plate"].expect == {"plate_location": {"plate_1": "hs1:holder"}}
    assert by_command["shake"].args == {"rpm": 600, "duration_s": 300.0}
    assert by_command["wait_for_temperature"].expect == {"temperature_c": 37.0}


def test_read_opens_moves_closes_then_reads_the_named_wells() -> None:
    result = plan("read absorbance of row A of plate_1 at 450 nm")
    assert isinstance(result, Plan)
    opened, moved, closed, read = result.steps
    assert (opened.instrument, opened.command) == ("reader1", "open_drawer")
    assert moved.args == {"plate": "plate_1", "to_location": "reader1:drawer"}
    assert closed.args == {"expect_plate": "plate_1"}
    assert read.args == {
        "plate": "plate_1",
        "wavelength_nm": 450,
        "wells": [f"A{c}" for c in range(1, 13)],
    }
    assert read.expect == {"reading": {"plate": "plate_1", "mode": "absorbance", "wells": 12}}


def test_a_plate_in_the_reader_goes_home_before_pipetting() -> None:
    result = plan("read absorbance of plate_1 at 600 nm then add 50 uL of dye to plate_1 A1")
    assert isinstance(result, Plan)
    moves = [s.args["to_location"] for s in result.steps if s.command == "move_plate"]
    assert moves == ["reader1:drawer", "lh1:plate_carrier:1"]
    assert result.steps[-1].command == "transfer"


def test_a_plate_starting_on_the_heater_shaker_is_unlocked_and_brought_home() -> None:
    lab = make_lab(plate_1_at="hs1:holder")
    result = plan("add 50 uL of dye to plate_1 A1", lab)
    assert commands(result) == ["hs1.unlock_plate", "arm1.move_plate", "lh1.transfer"]


def test_a_plate_starting_in_the_reader_is_read_after_closing_the_drawer() -> None:
    lab = make_lab(plate_1_at="reader1:drawer")
    result = plan("read luminescence of plate_1", lab)
    assert commands(result) == ["reader1.close_drawer", "reader1.read_luminescence"]


def test_without_a_plate_mover_a_needed_move_is_refused() -> None:
    result = plan("read absorbance of plate_1 at 600 nm", make_lab(arm=False))
    assert isinstance(result, Refusal)
    assert "plate mover" in result.reason


def test_moving_a_plate_where_it_already_is_is_refused_as_nothing_to_do() -> None:
    result = plan("move plate_1 back to the deck")
    assert isinstance(result, Refusal)


def test_running_out_of_tips_is_refused() -> None:
    result = plan(
        "transfer 10 uL from reservoir A1 to all wells of plate_1 and mix 2 times "
        "then transfer 10 uL from reservoir A1 to plate_2 A1 and mix 2 times"
    )
    assert isinstance(result, Refusal)
    assert "tips" in result.reason


def test_a_clarification_in_a_chain_names_the_clause() -> None:
    result = plan("add 50 uL of dye to plate_1 A1 then read plate_1")
    assert isinstance(result, Clarification)
    assert "read plate_1" in result.question and result.missing == ["mode"]


def test_planning_is_deterministic() -> None:
    request = "make a 2-fold serial dilution of dye across row A of plate_1, 100 uL final volume"
    assert plan(request) == plan(request)


def test_a_heading_s_total_fills_the_wells_its_items_filled_with_that_liquid_first() -> None:
    result = plan(
        "Put 50 uL dye into plate_1 A1:A2.\n"
        "Into plate_2, every well to 100 uL total with buffer added first:\n"
        "* plate_1 A1 -> plate_2 A1: 10 uL\n"
        "* plate_1 A2 -> plate_2 A2: 25 uL"
    )
    assert isinstance(result, Plan), result
    into_plate_2 = [
        s.args["volume_ul"]
        for s in result.steps
        if s.args.get("destination") == "plate_2" or s.args.get("labware") == "plate_2"
    ]
    assert into_plate_2 == [90.0, 75.0, 10.0, 25.0]  # the buffer first, then the two wells
    heading = next(t for t in result.trace if t.clause.startswith("Into plate_2"))
    assert heading.kind == "action" and heading.steps == ["s2", "s3", "s4", "s5", "s6", "s7"]


def test_a_plate_coated_or_filled_is_every_well_and_a_divided_volume_is_a_total() -> None:
    coated = plan("Coat plate_1 with 50 uL buffer per well")
    assert isinstance(coated, Plan), coated
    assert coated.steps[0].args["destination_wells"][-1] == "H12"
    divided = plan("Divide 960 uL of buffer over plate_2 column 1")
    assert isinstance(divided, Plan), divided
    assert divided.steps[0].args["volume_ul"] == 120.0


def test_liquid_already_dispensed_into_the_plate_being_filled_is_no_source() -> None:
    lab = make_lab()  # an earlier run put 50 uL of buffer into plate_2 A1:A3
    filled = {w: WellView(volume_ul=50, contents={"buffer": 50}) for w in ("A1", "A2", "A3")}
    lab.labware["plate_2"] = lab.labware["plate_2"].model_copy(update={"wells": filled})
    result = plan("add 25 uL of buffer to plate_2 B1", lab)
    assert isinstance(result, Plan)
    taken = {(s.args["source"], s.args["source_well"]) for s in result.steps if "source" in s.args}
    taken |= {(s.args["labware"], w) for s in result.steps if s.command == "aspirate"
              for w in s.args["wells"]}  # fmt: skip
    assert taken == {("reservoir", "A2")}
