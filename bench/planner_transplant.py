"""The planner on other benches: every dev entry replayed on its lab with the ids renamed.

    python bench/planner_transplant.py               # per naming scheme: entries still right
    python bench/planner_transplant.py --show 40     # and the first 40 that broke, with why

People name their labware and instruments as they like: `plate_1` may be `assay`, `p2`,
`nunc_b` or `src96`; `lh1` may be `star`; a trough may be `res` or `tr`. Each scheme below
renames the labware and instrument ids of every dev lab (the lab file, the request and the
entry's facts alike, whole words only) and judges the planner on the renamed entry: an entry
that breaks shows a stage that leans on how the dev labs happen to name things. Liquids keep
their names (their names carry meaning: water, medium, diluent). Only the development part is
read; the renamed labs are written to a temporary directory. Some breaks are the renaming's
own: an English phrase that pointed at the old id ("Plate 1", "the PCR plate", "between
samples") points nowhere once the id is renamed; read the broken requests before fixing.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.task.planning.rules import RulePlanner
from evals.planning import CORPUS, Entry, Labs, judge, load_entries

# Per scheme: names for plates (in the lab's order), troughs, tip racks and instruments by kind.
SCHEMES: dict[str, dict[str, list[str]]] = {
    "short": {
        "plate": ["pa", "pb", "pc", "pd"],
        "trough": ["tr", "tr2", "tr3"],
        "rack": ["r1", "r2", "r3"],
        "liquid_handler": ["lh"],
        "plate_reader": ["rdr"],
        "heater_shaker": ["hs"],
        "plate_mover": ["mover"],
        "thermocycler": ["tc"],
    },
    "vendor": {
        "plate": ["nunc96_a", "corning_b", "greiner_c", "abgene_d"],
        "trough": ["res12", "res_big", "res_small"],
        "rack": ["ht300_1", "ht300_2", "ht300_3"],
        "liquid_handler": ["starlet"],
        "plate_reader": ["clariostar"],
        "heater_shaker": ["thermomixer"],
        "plate_mover": ["robot_arm"],
        "thermocycler": ["odtc"],
    },
    "roles": {
        "plate": ["src_plate", "dst_plate", "assay_plt", "read_out"],
        "trough": ["reagent_trough", "wash_trough", "extra_trough"],
        "rack": ["tips_a", "tips_b", "tips_c"],
        "liquid_handler": ["ham"],
        "plate_reader": ["spark"],
        "heater_shaker": ["shaker"],
        "plate_mover": ["gripper"],
        "thermocycler": ["cycler"],
    },
}


def _renames(lab_file: Path, scheme: dict[str, list[str]]) -> dict[str, str]:
    """old id -> new id for the labware and instruments of one lab file."""
    data = yaml.safe_load(lab_file.read_text())
    used: Counter[str] = Counter()
    out: dict[str, str] = {}

    def take(kind: str, old: str) -> None:
        names = scheme[kind]
        out[old] = names[used[kind] % len(names)] + ("" if used[kind] < len(names) else "_x")
        used[kind] += 1

    for inst in data.get("instruments", []):
        if inst.get("kind") in scheme:
            take(inst["kind"], inst["id"])
        for lw in inst.get("labware", []) or []:
            kind = str(lw.get("type", "")).lower()
            if "tiprack" in kind:
                take("rack", lw["id"])
            elif "trough" in kind:
                take("trough", lw["id"])
            else:
                take("plate", lw["id"])
    return out


def _sub(text: str, renames: dict[str, str]) -> str:
    if not renames:
        return text
    names = "|".join(re.escape(k) for k in sorted(renames, key=len, reverse=True))
    pattern = re.compile(rf"(?<![\w])({names})(?![\w])", re.I)
    lower = {k.lower(): v for k, v in renames.items()}
    return pattern.sub(lambda m: lower[m[1].lower()], text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", type=int, default=0, help="print the first N that broke")
    parser.add_argument("--only", help="run only the scheme of this name")
    args = parser.parse_args()
    labs, planner = Labs(), RulePlanner()
    entries = load_entries("dev")
    base_ok = []
    for entry in entries:
        verdict = judge(entry, planner.plan(entry.request, labs[entry.lab].view), labs[entry.lab])
        if verdict.outcome_ok and verdict.facts_ok is not False:
            base_ok.append(entry)
    tried: Counter[str] = Counter()
    kept: Counter[str] = Counter()
    shown = 0
    for name, scheme in SCHEMES.items():
        if args.only and args.only != name:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            (root / "labs").mkdir()
            renames: dict[str, dict[str, str]] = {}
            for lab_file in sorted((CORPUS / "labs").glob("*.yaml")):
                renames[lab_file.stem] = _renames(lab_file, scheme)
                text = _sub(lab_file.read_text(), renames[lab_file.stem])
                (root / "labs" / lab_file.name).write_text(text)
            new_labs = Labs(root)
            for entry in base_ok:
                rn = renames[entry.lab]
                facts: dict[str, Any] = json.loads(
                    _sub(json.dumps({"a": entry.actions, "e": entry.end_state}), rn)
                )
                variant = Entry(
                    **{
                        **entry.__dict__,
                        "request": _sub(entry.request, rn),
                        "actions": facts["a"],
                        "end_state": facts["e"],
                    }
                )
                lab = new_labs[entry.lab]
                verdict = judge(variant, planner.plan(variant.request, lab.view), lab)
                tried[name] += 1
                if verdict.outcome_ok and verdict.facts_ok is not False:
                    kept[name] += 1
                elif shown < args.show:
                    shown += 1
                    print(f"BROKE [{name}] {entry.id} ({entry.lab}): {variant.request!r}")
                    for problem in verdict.problems[:2]:
                        print(f"     {problem}")
            shutil.rmtree(root / "labs")
    print(f"\nplanner on renamed benches (dev part, {len(base_ok)} entries right as written)")
    print(f"{'scheme':<12}{'tried':>7}{'still right':>13}")
    for name in SCHEMES:
        if tried[name]:
            print(f"{name:<12}{tried[name]:>7}{100 * kept[name] / tried[name]:>12.1f}%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
