"""The planning corpus and its facts checker: is a planner's answer the one a careful engineer
expects, and does a plan do exactly what the entry says?

Any planner's answer is judged by the same code. The outcome is right when its kind matches the
entry's (a plan, a question about what the entry says is missing, a refusal for the entry's
reason). A plan's facts are judged on what it does when simulated on the lab's twins
(:mod:`evals.plan_sim`): per expected action, the volume moved per (source, destination) well
pair (to 0.01 uL), the liquid, the channels working together, the tips, the mixing after each
dispense, the order of a chain; shakes, holds, readings and plate moves with their settings;
the wells' final volumes. How a plan encodes its steps does not matter; what it physically
does, does. The corpus format is ``tests/planning_corpus/README.md``.
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from agents.task.planning._coverage import problems as coverage
from agents.task.planning.models import Clarification, Plan, Refusal
from evals import thermo_facts
from evals.plan_sim import LiquidOp, SimLab, Simulated, simulate
from evals.verdicts import Verdict

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "planning_corpus"
_TOL = 0.01


@dataclass
class Entry:
    """One request of the corpus with its expected outcome and facts."""

    id: str
    family: str
    phenomena: list[str]
    lab: str
    request: str
    expect: str
    actions: list[dict[str, Any]] = field(default_factory=list)
    end_state: dict[str, dict[str, float]] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    reason: str | None = None


def load_entries(part: str, root: Path = CORPUS) -> list[Entry]:
    """Every entry of one part of the corpus ('dev' or 'test'), in file order."""
    entries = []
    for path in sorted((root / part).glob("*.yaml")):
        for raw in yaml.safe_load(path.read_text()) or []:
            missing = raw.get("missing") or []
            entries.append(
                Entry(
                    id=raw["id"],
                    family=raw["family"],
                    phenomena=list(raw.get("phenomena") or []),
                    lab=raw["lab"],
                    request=raw["request"],
                    expect=raw["expect"],
                    actions=list(raw.get("actions") or []),
                    end_state=dict(raw.get("end_state") or {}),
                    missing=[missing] if isinstance(missing, str) else list(missing),
                    reason=raw.get("reason"),
                )
            )
    return entries


class Labs:
    """The corpus labs, each loaded once."""

    def __init__(self, root: Path = CORPUS) -> None:
        self.root = root
        self._labs: dict[str, SimLab] = {}

    def __getitem__(self, name: str) -> SimLab:
        if name not in self._labs:
            self._labs[name] = SimLab.load(self.root / "labs" / f"{name}.yaml")
        return self._labs[name]


def wells(spec: str | list[str], lab: SimLab | None) -> list[str]:
    """``plate_1:B1..H1`` (or a list of such) as ``plate_1:B1``, ... listed row by row."""
    if isinstance(spec, list):
        return [w for s in spec for w in wells(s, lab)]
    if spec == "waste":
        return ["waste"]
    labware, _, sel = spec.partition(":")
    if ".." not in sel:
        return [f"{labware}:{sel.upper()}"]
    a, b = (s.strip().upper() for s in sel.split(".."))
    r0, r1 = sorted((ord(a[0]), ord(b[0])))
    c0, c1 = sorted((int(a[1:]), int(b[1:])))
    return [f"{labware}:{chr(r)}{c}" for r in range(r0, r1 + 1) for c in range(c0, c1 + 1)]


def _pairs(action: dict[str, Any], lab: SimLab) -> list[tuple[str, str, float]]:
    out = []
    for pair in action.get("pairs") or []:
        src, dst, vol = wells(pair["from"], lab), wells(pair["to"], lab), float(pair["volume_ul"])
        if len(src) == 1:
            out += [(src[0], d, vol) for d in dst]
        elif len(dst) == 1:
            out += [(s, dst[0], vol) for s in src]
        else:
            out += [(s, d, vol) for s, d in zip(src, dst, strict=True)]
    return out


def judge(entry: Entry, result: Plan | Clarification | Refusal, lab: SimLab) -> Verdict:
    """The verdict on ``result`` for ``entry`` (simulating plans on ``lab``'s twins)."""
    got = result.kind
    want = {"plan": "plan", "clarify": "clarification", "refuse": "refusal"}[entry.expect]
    problems: list[str] = []
    about = ",".join(sorted(getattr(result, "missing", []))) or getattr(result, "code", "") or ""
    if got != want:
        detail = getattr(result, "question", None) or getattr(result, "reason", None) or ""
        problem = f"expected {want}, got {got}: {detail}"
        return Verdict(entry.id, False, None, [problem], got, about=about)
    if isinstance(result, Clarification):
        ok = not entry.missing or bool(set(entry.missing) & set(result.missing))
        if not ok:
            problems.append(f"asked about {result.missing}, expected {entry.missing}")
        return Verdict(entry.id, ok, None, problems, got, about=about)
    if isinstance(result, Refusal):
        ok = entry.reason is None or result.code == entry.reason
        if not ok:
            problems.append(
                f"refused as {result.code or '?'} ({result.reason}), expected {entry.reason}"
            )
        return Verdict(entry.id, ok, None, problems, got, about=about)
    assert isinstance(result, Plan)
    sim = simulate(lab, result)
    if not sim.ok:
        return Verdict(entry.id, True, False, [f"the plan fails on the twins: {sim.error}"], got)
    problems = facts(entry, sim, lab)
    return Verdict(
        entry.id, True, not problems, problems, got, bool(coverage(result, lab.view.labware))
    )


def facts(entry: Entry, sim: Simulated, lab: SimLab) -> list[str]:
    """Every way the simulated plan differs from the entry's facts (empty: all right)."""
    problems: list[str] = []
    liquid_actions = [a for a in entry.actions if a["action"] in ("transfer", "discard")]
    claimed = _assign(liquid_actions, sim.ops, lab, problems)
    first_step: dict[int, int] = {}
    for i, action in enumerate(entry.actions):
        if action["action"] in ("transfer", "discard"):
            ops = claimed.get(id(action), [])
            problems += _liquid_facts(action, ops, sim)
            if ops:
                first_step[i] = min(o.step for o in ops)
        elif action["action"] == "mix":
            step = _mix_facts(action, sim, lab, problems)
            if step is not None:
                first_step[i] = step
    problems += _instrument_facts(entry.actions, sim, first_step)
    problems += _order(entry.actions, first_step, lab)
    for plate, expected in entry.end_state.items():
        for well, volume in expected.items():
            seen = sim.final.get(plate, {}).get(well.upper(), 0.0)
            if abs(seen - float(volume)) > 0.05:
                problems.append(f"end state {plate}:{well} is {seen:g} uL, expected {volume:g}")
    return problems


def _assign(
    actions: list[dict[str, Any]], ops: list[LiquidOp], lab: SimLab, problems: list[str]
) -> dict[int, list[LiquidOp]]:
    """Each simulated move to the first expected action that still wants its well pair."""
    wanted: list[dict[tuple[str, str], float]] = []
    for action in actions:
        sums: dict[tuple[str, str], float] = defaultdict(float)
        for s, d, v in _pairs(action, lab):
            sums[s, "waste" if action["action"] == "discard" else d] += v
        wanted.append(sums)
    claimed: dict[int, list[LiquidOp]] = defaultdict(list)
    for op in ops:
        key = (op.src, op.dst or "waste")
        for action, sums in zip(actions, wanted, strict=True):
            if sums.get(key, 0.0) > _TOL:
                sums[key] -= op.volume
                claimed[id(action)].append(op)
                break
        else:
            problems.append(
                f"the plan moves {op.volume:g} uL {op.src} -> {op.dst or 'waste'}, "
                "which no action asks for"
            )
    for action, sums in zip(actions, wanted, strict=True):
        for (s, d), left in sums.items():
            if abs(left) > _TOL:
                problems.append(
                    f"{action['action']} {s} -> {d}: "
                    f"{'missing' if left > 0 else 'extra'} {abs(left):g} uL"
                )
    return claimed


def _liquid_facts(action: dict[str, Any], ops: list[LiquidOp], sim: Simulated) -> list[str]:
    out: list[str] = []
    if not ops:
        return out
    label = f"{action['action']} {action.get('liquid', '')}".strip()
    if liquid := action.get("liquid"):
        for op in ops:
            total = sum(op.liquids.values())
            if total > 0 and op.liquids.get(liquid, 0.0) < 0.99 * total:
                out.append(
                    f"{label}: {op.src} -> {op.dst} carries {sorted(op.liquids)}, not {liquid}"
                )
                break
    if "channels" in action:
        width = max(o.width for o in ops)
        if (action["channels"] == 1) != (width == 1):
            out.append(f"{label}: {width} channel(s) at once, expected {action['channels']}")
    if "tips" in action:
        tips = len({o.tip for o in ops})
        if tips != action["tips"]:
            out.append(f"{label}: {tips} tips, expected {action['tips']}")
    mix = action.get("mix_after")
    if mix is None and action["action"] == "transfer":
        mixed = [o for o in ops if o.mix_after]
        if mixed:  # no mix_after in the entry: no mixing
            out.append(
                f"{label}: {mixed[0].dst} mixed {mixed[0].mix_after}x, and no mixing was asked"
            )
    if mix:
        for op in ops:
            if op.dst is not None and op.mix_after != mix.get("cycles"):
                out.append(
                    f"{label}: {op.dst} mixed {op.mix_after}x after its dispense, "
                    f"expected {mix.get('cycles')}"
                )
                break
            if (
                "volume_ul" in mix
                and op.mix_after
                and abs((op.mix_volume or 0) - float(mix["volume_ul"])) > _TOL
            ):
                out.append(f"{label}: mixed with {op.mix_volume} uL, expected {mix['volume_ul']}")
                break
    if action.get("ordered"):
        order = list(dict.fromkeys((o.src, o.dst) for o in ops))
        expected = list(dict.fromkeys((p["from"], p["to"]) for p in action.get("pairs") or []))
        if [f"{s}>{d}" for s, d in order] != [
            f"{s}>{d}" for s, d in expected if ".." not in s + d
        ] and all(".." not in s + d for s, d in expected):
            out.append(f"{label}: pairs in the order {order}, expected {expected}")
    return out


def _mix_facts(
    action: dict[str, Any], sim: Simulated, lab: SimLab, problems: list[str]
) -> int | None:
    targets = wells(action["wells"], lab)
    cycles: dict[str, int] = defaultdict(int)
    used = [m for m in sim.mixes if m.well in targets]
    for m in used:
        cycles[m.well] += m.cycles
    for w in targets:
        if cycles.get(w, 0) != action.get("cycles", cycles.get(w, 0)):
            problems.append(f"mix {w}: {cycles.get(w, 0)} cycles, expected {action.get('cycles')}")
            break
    if "volume_ul" in action and any(
        abs(m.volume - float(action["volume_ul"])) > _TOL for m in used
    ):
        problems.append(
            f"mix volume {sorted({m.volume for m in used})}, expected {action['volume_ul']}"
        )
    if "tips" in action and len({m.tip for m in used}) != action["tips"]:
        problems.append(f"mix: {len({m.tip for m in used})} tips, expected {action['tips']}")
    if (
        "channels" in action
        and used
        and (action["channels"] == 1) != (max(m.width for m in used) == 1)
    ):
        problems.append(
            f"mix: {max(m.width for m in used)} channel(s) at once, expected {action['channels']}"
        )
    return min((m.step for m in used), default=None)


_FIELDS = {
    "shake": ("plate", "rpm", "duration_s", "temperature_c"),
    "incubate": ("plate", "temperature_c", "duration_s"),
    "read_absorbance": ("plate", "wavelength_nm", "wells"),
    "read_fluorescence": ("plate", "excitation_nm", "emission_nm", "wells"),
    "read_luminescence": ("plate", "wells"),
    "move": ("plate", "to"),
    "thermocycle": ("plate", "programme", "final_hold_c", "lid_c"),
}


def _same(key: str, want: Any, seen: Any) -> bool:
    if key == "wells":
        return want is None or (seen is None and want is None) or sorted(seen or []) == sorted(want)
    if isinstance(want, float | int) and isinstance(seen, float | int):
        return abs(float(want) - float(seen)) <= _TOL
    return bool(want == seen)


def _instrument_facts(
    actions: list[dict[str, Any]], sim: Simulated, first_step: dict[int, int]
) -> list[str]:
    out: list[str] = []
    used: set[int] = set()
    for i, action in enumerate(actions):
        kind = action["action"]
        if kind not in _FIELDS:
            continue
        action = thermo_facts.expected(action) if kind == "thermocycle" else action
        candidates = [
            (n, e)
            for n, e in enumerate(sim.events)
            if n not in used
            and e["action"] == kind
            and e.get("plate") == action.get("plate")
            and (kind != "move" or e.get("to") == action.get("to"))
        ]
        if not candidates:
            out.append(f"{kind} of {action.get('plate')}: not in the plan")
            continue
        n, event = candidates[0]
        used.add(n)
        first_step[i] = event["step"]
        for key in _FIELDS[kind]:
            if key not in action or key == "plate":
                continue
            want = action[key]
            if key == "wells" and want is not None:
                want = [w.split(":")[-1] for w in wells(want, None)]  # type: ignore[arg-type]
            if not _same(key, want, event.get(key)):
                out.append(
                    f"{kind} of {action.get('plate')}: {key} {event.get(key)!r}, expected {want!r}"
                )
    for n, e in enumerate(sim.events):
        if n not in used and e["action"] not in ("move",):
            out.append(
                f"the plan also does {e['action']} of {e.get('plate')}, which no action asks for"
            )
    return out


def _labware_of(action: dict[str, Any]) -> set[str]:
    names: set[str] = set()
    for pair in action.get("pairs") or []:
        for side in (pair.get("from"), pair.get("to")):
            for spec in side if isinstance(side, list) else [side]:
                if spec and spec != "waste":
                    names.add(str(spec).split(":")[0])
    if action.get("plate"):
        names.add(action["plate"])
    if action.get("wells"):
        specs = action["wells"] if isinstance(action["wells"], list) else [action["wells"]]
        names |= {str(w).split(":")[0] for w in specs}
    return names


def _order(actions: list[dict[str, Any]], first_step: dict[int, int], lab: SimLab) -> list[str]:
    """Actions on the same labware happen in the order the entry lists them."""
    out = []
    for i, a in enumerate(actions):
        for j in range(i + 1, len(actions)):
            b = actions[j]
            shared = _labware_of(a) & _labware_of(b) - {"reservoir"}
            if i in first_step and j in first_step and shared and first_step[j] < first_step[i]:
                out.append(f"{b['action']} (action {j + 1}) happens before {a['action']} ({i + 1})")
    return out


def run(planner: Any, entries: list[Entry], labs: Labs) -> list[tuple[Entry, Verdict, float]]:
    """Plan and judge every entry; (entry, verdict, planning seconds of wall clock).

    The CPU seconds of each planning call are kept on the verdict (``cpu_s``): on a shared
    machine the wall clock also counts the time other processes had the CPU.
    """
    out = []
    for entry in entries:
        lab = labs[entry.lab]
        started, cpu = time.perf_counter(), time.process_time()
        result = planner.plan(entry.request, lab.view)
        seconds, cpu_s = time.perf_counter() - started, time.process_time() - cpu
        verdict = judge(entry, result, lab)
        verdict.cpu_s = cpu_s
        out.append((entry, verdict, seconds))
    return out
