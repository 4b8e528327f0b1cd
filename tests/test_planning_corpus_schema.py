"""The planning corpus is well formed and physically consistent with the labs it names.

Every entry uses the README's vocabularies, names a lab that loads, and (for plans) lists
actions whose wells exist, whose sources hold the named liquid when they are drawn from, and
whose end state is what the listed actions leave (to 0.01 uL) without overflowing a well. The
corpus covers every family and phenomenon; the test part stays at least 200 entries and a tenth
of the corpus while the dev part grows.
This test checks the corpus itself, never a planner.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from device_servers.lab import LabConfig, load
from device_servers.liquid_handler.catalogue import initial_liquids

CORPUS = Path(__file__).parent / "planning_corpus"
PARTS = ("dev", "test", "val")
MIN_PER_FAMILY = 8
MIN_PER_PHENOMENON = 4
# The test part was written as about 40% of the corpus; the dev part keeps growing as the
# planner's developers add new voices, so the test part must stay large in itself (at least
# MIN_TEST entries) and at least a twentieth of the corpus (it was a tenth until the dev part
# passed 2,000 entries).
TEST_SHARE = (0.05, 0.45)
MIN_TEST = 200
EPS = 0.01

# Limits of the default policies (policies/rules/*.yaml): a plan never goes beyond them.
MAX_BLOCK_C = 80
MAX_RPM = 2000
WAVELENGTH_NM = (300, 900)
MIN_VOLUME_UL = 0.5
BLOCK_C = (4, 99)  # policies/rules/thermocycler.yaml: every block temperature, profile steps too
MAX_LID_C = 110
MAX_CYCLES = 200  # the thermocycler's run_profile: repeats 1-200

TOP_KEYS = {"id", "family", "phenomena", "lab", "request", "expect", "note"}
OUTCOME_KEYS = {"plan": {"actions", "end_state"}, "clarify": {"missing"}, "refuse": {"reason"}}
ACTION_KEYS: dict[str, tuple[set[str], set[str]]] = {  # required, optional
    "transfer": ({"pairs"}, {"liquid", "channels", "tips", "ordered", "mix_after"}),
    "discard": ({"pairs"}, {"liquid", "channels", "tips"}),
    "mix": ({"wells", "cycles"}, {"volume_ul", "tips", "channels"}),
    "shake": ({"plate", "rpm", "duration_s", "temperature_c"}, set()),
    "incubate": ({"plate", "temperature_c", "duration_s"}, set()),
    "read_absorbance": ({"plate", "wavelength_nm"}, {"wells"}),
    "read_fluorescence": ({"plate", "excitation_nm", "emission_nm"}, {"wells"}),
    "read_luminescence": ({"plate"}, {"wells"}),
    "move": ({"plate", "to"}, set()),
    "thermocycle": ({"plate", "final_hold_c"}, {"stages", "cycles", "groups", "lid_c"}),
}
INSTRUMENT_FOR = {
    "shake": "heater_shaker",
    "incubate": "heater_shaker",
    "read_absorbance": "plate_reader",
    "read_fluorescence": "plate_reader",
    "read_luminescence": "plate_reader",
    "move": "plate_mover",
    "thermocycle": "thermocycler",
}
_RANGE = re.compile(r"^([A-Z]{1,2})(\d{1,2})(?:\.\.([A-Z]{1,2})(\d{1,2}))?$")


# --------------------------------------------------------------------------- reading


def vocabularies() -> dict[str, set[str]]:
    """The README's vocabularies: 'Families: a, b.' -> {'families': {'a', 'b'}}."""
    text = (CORPUS / "README.md").read_text()
    section = text.split("## Vocabularies", 1)[1]
    vocab: dict[str, set[str]] = {}
    for block in re.split(r"\n\s*\n", section.strip()):
        head, _, rest = block.partition(":")
        key = head.split("(")[0].strip().lower()
        vocab[key] = {w.strip() for w in rest.replace("\n", " ").rstrip(". ").split(",")}
    return vocab


@cache
def corpus() -> dict[str, list[dict[str, Any]]]:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    parts: dict[str, list[dict[str, Any]]] = {}
    for part in PARTS:
        entries: list[dict[str, Any]] = []
        for path in sorted((CORPUS / part).glob("*.yaml")):
            try:
                data = yaml.load(path.read_text(), Loader=loader)
            except yaml.YAMLError as exc:
                raise AssertionError(f"{part}/{path.name}: not valid YAML: {exc}") from None
            assert isinstance(data, list), f"{path.name}: a YAML list of entries"
            for entry in data:
                assert isinstance(entry, dict), f"{path.name}: an entry is a mapping"
                entry["_file"] = f"{part}/{path.name}"
                entries.append(entry)
        parts[part] = entries
    return parts


def all_entries() -> list[dict[str, Any]]:
    return [e for part in PARTS for e in corpus()[part]]


@cache
def geometry(labware_type: str) -> dict[str, Any]:
    """A PyLabRobot resource's grid and well volumes, built once per type (decks are slow)."""
    import pylabrobot.resources as plr

    from device_servers.liquid_handler.adapter import describe_resource

    return describe_resource(getattr(plr, labware_type)(name="probe"))


class Lab:
    """What a lab file gives the checks: plates with their wells, tips, instruments.

    The lab file is validated as `labwright check` reads it (the model, the labware names,
    the starting liquids against the wells); placing the labware on the deck is left to
    `labwright check` itself, which every lab passes.
    """

    def __init__(self, config: LabConfig) -> None:
        self.kinds = {inst.kind for inst in config.instruments}
        self.locations: set[str] = set()
        self.plates: dict[str, tuple[int, int, dict[str, float]]] = {}  # rows, cols, capacity
        self.start: dict[tuple[str, str], tuple[float, set[str]]] = {}
        self.tips = 0
        for inst in config.instruments:
            self.locations.update(getattr(inst, "locations", []))
            if inst.kind != "liquid_handler":
                continue
            catalogue = {lw.id: geometry(lw.type) for lw in inst.labware}
            for lw_id, item in catalogue.items():
                if item["kind"] == "tip_rack":
                    self.tips += len(item["names"])
                    continue
                self.plates[lw_id] = (item["rows"], item["cols"], dict(item["max_volumes"]))
                for n in item["names"]:
                    self.start[(lw_id, n)] = (0.0, set())
            for liq in initial_liquids(inst, catalogue):
                for n in liq["wells"]:
                    self.start[(liq["labware"], n)] = (liq["volume_ul"], {liq["liquid"]})


@cache
def lab(name: str) -> Lab:
    return Lab(load(CORPUS / "labs" / f"{name}.yaml"))


def _row(letters: str) -> int:
    return (
        ord(letters) - 65
        if len(letters) == 1
        else (ord(letters[0]) - 64) * 26 + ord(letters[1]) - 65
    )


def _letters(index: int) -> str:
    return chr(65 + index) if index < 26 else chr(64 + index // 26) + chr(65 + index % 26)


def wells(spec: Any, the_lab: Lab) -> list[tuple[str, str]]:
    """A well set ('plate:A1', 'plate:A1..H1' or a list of them) as (labware, well) pairs."""
    items = spec if isinstance(spec, list) else [spec]
    out: list[tuple[str, str]] = []
    for item in items:
        assert isinstance(item, str) and ":" in item, f"{item!r} is not labware:WELL"
        plate, _, sel = item.partition(":")
        assert plate in the_lab.plates, f"{item}: no plate {plate!r} in the lab"
        rows, cols, _ = the_lab.plates[plate]
        m = _RANGE.match(sel)
        assert m, f"{item}: not a well or a W1..W2 range"
        r0, c0 = _row(m.group(1)), int(m.group(2))
        r1, c1 = (_row(m.group(3)), int(m.group(4))) if m.group(3) else (r0, c0)
        for r, c in ((r0, c0), (r1, c1)):
            assert r < rows and 1 <= c <= cols, f"{item}: off the {rows}x{cols} grid"
        rstep, cstep = (1 if r1 >= r0 else -1), (1 if c1 >= c0 else -1)
        out += [
            (plate, f"{_letters(r)}{c}")
            for r in range(r0, r1 + rstep, rstep)
            for c in range(c0, c1 + cstep, cstep)
        ]
    return out


# --------------------------------------------------------------------------- simulation


class Bench:
    """The lab's wells as the listed actions leave them (volumes and which liquids)."""

    def __init__(self, the_lab: Lab) -> None:
        self.lab = the_lab
        self.volume = {k: v for k, (v, _) in the_lab.start.items()}
        self.liquids = {k: set(s) for k, (_, s) in the_lab.start.items()}

    def move(
        self, src: tuple[str, str], dst: tuple[str, str] | None, ul: float, liquid: Any
    ) -> None:
        where = f"{src[0]}:{src[1]}"
        if liquid is not None:
            assert liquid in self.liquids[src], f"{where} holds no {liquid!r} when drawn from"
        assert self.volume[src] >= ul - EPS, f"{where} holds {self.volume[src]:g} uL, {ul:g} drawn"
        self.volume[src] -= ul
        if dst is None:
            return
        self.volume[dst] += ul
        self.liquids[dst] |= self.liquids[src]
        cap = self.lab.plates[dst[0]][2][dst[1]]
        assert self.volume[dst] <= cap + EPS, f"{dst[0]}:{dst[1]} overflows ({cap:g} uL max)"

    def run(self, action: dict[str, Any]) -> None:
        for pair in action["pairs"]:
            ul = float(pair["volume_ul"])
            assert ul >= MIN_VOLUME_UL, f"{ul} uL is below the policy's {MIN_VOLUME_UL} uL"
            srcs = wells(pair["from"], self.lab)
            if pair["to"] == "waste":
                for s in srcs:
                    self.move(s, None, ul, action.get("liquid"))
                continue
            dsts = wells(pair["to"], self.lab)
            if len(srcs) == 1:
                srcs = srcs * len(dsts)
            elif len(dsts) == 1:  # pooling: the same volume from each source
                dsts = dsts * len(srcs)
            assert len(srcs) == len(dsts), f"{pair}: from and to differ in length"
            for s, d in zip(srcs, dsts, strict=True):
                self.move(s, d, ul, action.get("liquid"))


# --------------------------------------------------------------------------- checks


def check_action(action: dict[str, Any], the_lab: Lab, bench: Bench) -> None:
    kind = action.get("action")
    assert kind in ACTION_KEYS, f"unknown action {kind!r}"
    required, optional = ACTION_KEYS[kind]
    keys = set(action) - {"action"}
    assert required <= keys, f"{kind}: missing {sorted(required - keys)}"
    assert keys <= required | optional, f"{kind}: unknown {sorted(keys - required - optional)}"
    needs = INSTRUMENT_FOR.get(kind)
    assert needs is None or needs in the_lab.kinds, f"{kind} needs a {needs} the lab lacks"
    if "plate" in action:
        assert action["plate"] in the_lab.plates, f"{kind}: no plate {action['plate']!r}"
    if action.get("channels") is not None:
        assert action["channels"] in (1, 8), "channels are 1 or 8"
    if "tips" in action:
        assert isinstance(action["tips"], int) and action["tips"] >= 0
    if kind in ("transfer", "discard"):
        for pair in action["pairs"]:
            assert set(pair) == {"from", "to", "volume_ul"}, f"pair keys: {sorted(pair)}"
            assert (pair["to"] == "waste") == (kind == "discard"), "waste is for discards only"
        if "mix_after" in action:
            assert set(action["mix_after"]) <= {"cycles", "volume_ul"}
            assert action["mix_after"]["cycles"] >= 1
        bench.run(action)
    elif kind == "mix":
        assert action["cycles"] >= 1
        for key in wells(action["wells"], the_lab):
            held = bench.volume[key]
            assert held > 0, f"mixing {key[0]}:{key[1]}, an empty well"
            assert action.get("volume_ul", 0) <= held + EPS, f"mixing more than {key[1]} holds"
    elif kind == "shake":
        assert 0 < action["rpm"] <= MAX_RPM and action["duration_s"] > 0
        assert action["temperature_c"] is None or action["temperature_c"] <= MAX_BLOCK_C
    elif kind == "incubate":  # temperature_c null: held at room temperature, no heating asked
        assert action["temperature_c"] is None or action["temperature_c"] <= MAX_BLOCK_C
        assert action["duration_s"] > 0
    elif kind.startswith("read_"):
        for key in ("wavelength_nm", "excitation_nm", "emission_nm"):
            if key in action:
                assert WAVELENGTH_NM[0] <= action[key] <= WAVELENGTH_NM[1], f"{key} off policy"
        if "wells" in action:
            assert wells(action["wells"], the_lab)
    elif kind == "move":
        assert action["to"] in the_lab.locations, f"move: {action['to']!r} is no arm location"
    elif kind == "thermocycle":
        check_programme(action)


def check_programme(action: dict[str, Any]) -> None:
    """A thermocycle's programme: ``stages`` + ``cycles``, or ``groups`` of them, in range."""
    one = {"stages", "cycles"} & set(action)
    assert (one == {"stages", "cycles"}) != ("groups" in action), (
        "thermocycle: stages and cycles, or groups"
    )
    if "groups" in action:
        groups = action["groups"]
    else:
        groups = [{"stages": action["stages"], "cycles": action["cycles"]}]
    assert isinstance(groups, list) and groups, "thermocycle: groups is a non-empty list"
    for group in groups:
        assert set(group) == {"stages", "cycles"}, f"group keys: {sorted(group)}"
        cycles = group["cycles"]
        assert isinstance(cycles, int) and 1 <= cycles <= MAX_CYCLES, f"cycles {cycles!r}"
        assert isinstance(group["stages"], list) and group["stages"], "a group has stages"
        for stage in group["stages"]:
            assert set(stage) == {"temperature_c", "hold_s"}, f"stage keys: {sorted(stage)}"
            assert BLOCK_C[0] <= stage["temperature_c"] <= BLOCK_C[1], f"block {stage}"
            assert stage["hold_s"] > 0, f"hold {stage}"
    hold = action["final_hold_c"]
    assert hold is None or BLOCK_C[0] <= hold <= BLOCK_C[1], f"final hold {hold}"
    assert action.get("lid_c") is None or action["lid_c"] <= MAX_LID_C, "lid over policy"


def check_entry(entry: dict[str, Any], vocab: dict[str, set[str]]) -> None:
    keys = set(entry) - {"_file"}
    outcome = entry.get("expect")
    assert outcome in OUTCOME_KEYS, f"expect: {outcome!r}"
    allowed = TOP_KEYS | OUTCOME_KEYS[outcome]
    assert keys <= allowed, f"unknown keys {sorted(keys - allowed)}"
    assert TOP_KEYS - {"note"} <= keys, f"missing {sorted(TOP_KEYS - {'note'} - keys)}"
    assert isinstance(entry["request"], str) and entry["request"].strip()
    assert entry["family"] in vocab["families"], f"family {entry['family']!r}"
    phenomena = entry["phenomena"]
    assert isinstance(phenomena, list) and len(set(phenomena)) == len(phenomena)
    unknown = set(phenomena) - vocab["phenomena"]
    assert not unknown, f"phenomena {sorted(unknown)}"
    the_lab = lab(entry["lab"])
    if outcome == "clarify":
        said = entry["missing"] if isinstance(entry["missing"], list) else [entry["missing"]]
        # a list: the question may name any of them (two things left open, either asked first)
        assert said and all(m in vocab["missing"] for m in said), f"missing {said!r}"
        return
    if outcome == "refuse":
        assert entry["reason"] in vocab["reasons"], f"reason {entry['reason']!r}"
        return
    actions = entry["actions"]
    assert isinstance(actions, list) and actions, "a plan lists its actions"
    bench = Bench(the_lab)
    for i, action in enumerate(actions):
        try:
            check_action(action, the_lab, bench)
        except AssertionError as exc:
            raise AssertionError(f"actions[{i}] ({action.get('action')}): {exc}") from None
    tips = sum(a.get("tips", 0) for a in actions)
    assert tips <= the_lab.tips, f"{tips} tips, the lab has {the_lab.tips}"
    for plate, volumes in (entry.get("end_state") or {}).items():
        for name, expected in volumes.items():
            (key,) = wells(f"{plate}:{name}", the_lab)
            got = bench.volume[key]
            assert abs(got - expected) <= EPS, (
                f"end_state {plate}:{name} {expected}, actions {got:g}"
            )


# --------------------------------------------------------------------------- tests


def test_every_lab_variant_loads_with_its_labware_and_liquids() -> None:
    names = sorted(p.stem for p in (CORPUS / "labs").glob("*.yaml"))
    assert "standard" in names and len(names) >= 8
    for name in names:
        assert lab(name).plates, f"{name}: a lab with no plates"


def test_every_entry_is_well_formed_and_physically_consistent() -> None:
    vocab = vocabularies()
    problems = []
    for entry in all_entries():
        try:
            check_entry(entry, vocab)
        except (AssertionError, KeyError, TypeError, ValueError) as exc:
            problems.append(f"{entry.get('_file')} {entry.get('id')}: {exc!s}")
    assert not problems, "\n".join(problems[:40])


def test_ids_are_unique_and_say_their_part() -> None:
    ids = Counter(e["id"] for e in all_entries())
    assert not [i for i, n in ids.items() if n > 1], "duplicate ids"
    for part, prefix in (("dev", "d-"), ("test", "t-"), ("val", "v-")):
        assert all(e["id"].startswith(prefix) for e in corpus()[part]), f"{part} ids start {prefix}"


def test_every_family_and_phenomenon_is_covered_enough() -> None:
    vocab = vocabularies()
    entries = all_entries()
    assert len(entries) >= 400
    families = Counter(e["family"] for e in entries)
    phenomena = Counter(p for e in entries for p in e["phenomena"])
    thin = {f: families[f] for f in vocab["families"] if families[f] < MIN_PER_FAMILY}
    assert not thin, f"families under {MIN_PER_FAMILY}: {thin}"
    rare = {p: phenomena[p] for p in vocab["phenomena"] if phenomena[p] < MIN_PER_PHENOMENON}
    assert not rare, f"phenomena under {MIN_PER_PHENOMENON}: {rare}"
    outcomes = Counter(e["expect"] for e in entries)
    assert all(outcomes[o] >= 40 for o in OUTCOME_KEYS), f"outcomes: {dict(outcomes)}"


def test_the_test_part_stays_large_and_each_part_covers_every_family() -> None:
    vocab = vocabularies()
    dev, test = corpus()["dev"], corpus()["test"]
    share = len(test) / (len(dev) + len(test))
    assert TEST_SHARE[0] <= share <= TEST_SHARE[1], f"test share {share:.2f}"
    assert len(test) >= MIN_TEST, f"test part has {len(test)} entries"
    for part, entries in (("dev", dev), ("test", test)):
        missing = vocab["families"] - {e["family"] for e in entries}
        assert not missing, f"{part} lacks families {sorted(missing)}"


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("plate_1:A1..A3", ["A1", "A2", "A3"]),
        ("plate_1:A1..B2", ["A1", "A2", "B1", "B2"]),
        ("plate_1:H1..F1", ["H1", "G1", "F1"]),
        (["plate_1:A1", "plate_1:C5..D5"], ["A1", "C5", "D5"]),
    ],
)
def test_well_sets_expand_row_by_row_in_the_direction_written(
    spec: Any, expected: list[str]
) -> None:
    assert [w for _, w in wells(spec, lab("standard"))] == expected


def test_the_consistency_checks_catch_overflow_a_missing_liquid_and_a_wrong_end_state() -> None:
    vocab = vocabularies()
    base = {
        "id": "x",
        "family": "transfer",
        "phenomena": [],
        "lab": "standard",
        "request": "r",
        "expect": "plan",
    }

    def plan(volume: float, liquid: str, end: float) -> dict[str, Any]:
        pair = {"from": "reservoir:A2", "to": "plate_1:A1", "volume_ul": volume}
        action = {"action": "transfer", "liquid": liquid, "pairs": [pair], "tips": 1}
        return {**base, "actions": [action], "end_state": {"plate_1": {"A1": end}}}

    check_entry(plan(360, "buffer", 360), vocab)  # exactly a well's capacity
    for bad in (plan(361, "buffer", 361), plan(50, "dye", 50), plan(50, "buffer", 60)):
        with pytest.raises(AssertionError):
            check_entry(bad, vocab)
    with pytest.raises(AssertionError):
        check_entry({**base, "expect": "refuse", "reason": "too_hard"}, vocab)


def _programme(**change: Any) -> dict[str, Any]:
    stages = [{"temperature_c": 95, "hold_s": 15}, {"temperature_c": 60, "hold_s": 30}]
    action = {"action": "thermocycle", "plate": "rxn_plate", "final_hold_c": 4}
    return {**action, "stages": stages, "cycles": 35, **change}


_ONCE = {"stages": [{"temperature_c": 95, "hold_s": 180}], "cycles": 1}


@pytest.mark.parametrize(
    "bad",
    [
        _programme(stages=[{"temperature_c": 105, "hold_s": 15}]),  # a step above 99 C
        _programme(stages=[{"temperature_c": 2, "hold_s": 15}]),  # below 4 C
        _programme(final_hold_c=0),  # a hold below 4 C
        _programme(lid_c=115),  # the lid above 110 C
        _programme(cycles=0),
        _programme(cycles=500),
        _programme(stages=[{"temperature_c": 95, "hold_s": 0}]),
        _programme(stages=[{"temperature_c": 95}]),
        _programme(groups=[_ONCE]),  # both forms at once
        {"action": "thermocycle", "plate": "rxn_plate", "final_hold_c": 4, "cycles": 3},
        {"action": "thermocycle", "plate": "rxn_plate", "final_hold_c": 4, "groups": []},
        {
            "action": "thermocycle",
            "plate": "rxn_plate",
            "final_hold_c": 4,
            "groups": [_ONCE, {**_ONCE, "stages": [{"temperature_c": 100, "hold_s": 60}]}],
        },
    ],
)
def test_a_thermocycling_programme_outside_the_rules_or_malformed_is_caught(
    bad: dict[str, Any],
) -> None:
    the_lab = lab("thermo")
    check_action(_programme(), the_lab, Bench(the_lab))  # the well-formed one passes
    groups = {k: v for k, v in _programme().items() if k not in ("stages", "cycles")}
    check_action({**groups, "groups": [_ONCE, _ONCE], "lid_c": 110}, the_lab, Bench(the_lab))
    with pytest.raises(AssertionError):
        check_action(bad, the_lab, Bench(the_lab))
