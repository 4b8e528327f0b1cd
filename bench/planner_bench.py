"""Planner accuracy on the planning corpus, per family and per phenomenon, and planning time.

    python bench/planner_bench.py                 # the test part: aggregate figures only
    python bench/planner_bench.py --part dev --show-failures   # development: what went wrong
    python bench/planner_bench.py --part val      # the validation part: aggregates only

The planner is warmed up once per lab (regexes compiled, unit registry built) before timing,
as in a long-running task agent. Outcome right: the answer's kind (plan / question /
refusal) and what it is about match the entry. Facts right: the plan, simulated on the lab's
twins, does what the entry says (evals/planning.py). Time: RulePlanner.plan(request,
LabView) in process, per request, p50 / p95 over the part, wall clock and CPU. Failures are
shown for the development part only: the test part measures generalisation, and its
requests are never printed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.task.planning.rules import RulePlanner
from evals.planning import CORPUS, Labs, load_entries, run
from evals.verdicts import failure_kind


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


def report(part: str, root: Path, show_failures: bool) -> dict[str, float]:
    entries = load_entries(part, root)
    if not entries:
        print(f"planner corpus ({part}): no entries under {root / part} yet")
        return {}
    labs = Labs(root)
    planner = RulePlanner()
    for entry in entries:  # build every lab view, and warm the planner up, before timing
        planner.plan("read absorbance at 600 nm", labs[entry.lab].view)
    results = run(planner, entries, labs)
    rows: dict[str, list[list[int]]] = defaultdict(lambda: [[0, 0], [0, 0]])
    by_phen: dict[str, list[list[int]]] = defaultdict(lambda: [[0, 0], [0, 0]])
    times = [s * 1000 for _, _, s in results]
    cpu = [v.cpu_s * 1000 for _, v, _ in results]
    dropped = 0
    wrong: dict[str, list[str]] = defaultdict(list)  # kind -> the families it happened in
    for entry, verdict, _ in results:
        for kind in failure_kind(entry.expect, verdict):
            wrong[kind].append(entry.family)
        facts_ok = verdict.facts_ok if entry.expect == "plan" else None
        for table, key in [(rows, entry.family), (rows, "ALL")] + [
            (by_phen, p) for p in entry.phenomena
        ]:
            table[key][0][0] += verdict.outcome_ok
            table[key][0][1] += 1
            if entry.expect == "plan":
                table[key][1][0] += bool(verdict.outcome_ok and facts_ok)
                table[key][1][1] += 1
        dropped += verdict.dropped_clause
        if show_failures and part == "dev" and (not verdict.outcome_ok or facts_ok is False):
            print(f"FAIL {entry.id} [{entry.family}] {entry.request!r}")
            for problem in verdict.problems[:4]:
                print(f"     {problem}")
    print(f"\nplanner corpus ({part}, {len(entries)} requests, {root})")
    print(f"{'family':<18}{'n':>5}{'outcome':>10}{'plan facts':>14}")
    for key in sorted(rows, key=lambda k: (k == "ALL", k)):
        (o, n), (f, m) = rows[key]
        facts = f"{f}/{m} {100 * f / m:5.1f}%" if m else "-"
        print(f"{key:<18}{n:>5}{100 * o / n:>9.1f}%{facts:>14}")
    print(f"\n{'phenomenon':<18}{'n':>5}{'outcome':>10}{'plan facts':>14}")
    for key in sorted(by_phen):
        (o, n), (f, m) = by_phen[key]
        facts = f"{100 * f / m:5.1f}%" if m else "-"
        print(f"{key:<18}{n:>5}{100 * o / n:>9.1f}%{facts:>14}")
    print(f"\n{'what went wrong (no request text)':<48}{'n':>4}  families")
    for kind, families in sorted(wrong.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        count = ", ".join(f"{f} {families.count(f)}" for f in sorted(set(families)))
        print(f"{kind:<48}{len(families):>4}  {count}")
    (o, n), (f, m) = rows["ALL"]
    figures = {
        "outcome_pct": 100 * o / n,
        "facts_pct": 100 * f / m if m else 0.0,
        "p50_ms": statistics.median(times),
        "p95_ms": _pct(times, 0.95),
        "cpu_p50_ms": statistics.median(cpu),
        "cpu_p95_ms": _pct(cpu, 0.95),
        "dropped": dropped,
    }
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"\noutcome right {figures['outcome_pct']:.1f}% (target >= 90%), plan facts right "
        f"{figures['facts_pct']:.1f}% (target >= 85%), plans dropping a clause: {dropped}; "
        f"planning time p50 {figures['p50_ms']:.2f} ms, p95 {figures['p95_ms']:.2f} ms wall "
        f"(CPU p50 {figures['cpu_p50_ms']:.2f} ms, p95 {figures['cpu_p95_ms']:.2f} ms; target "
        f"<= 20 ms; in process, this machine, load average {load:.1f})"
    )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", default="test", choices=["dev", "val", "test"])
    parser.add_argument("--root", type=Path, default=CORPUS)
    parser.add_argument("--show-failures", action="store_true", help="dev part only")
    args = parser.parse_args()
    report(args.part, args.root, args.show_failures and args.part == "dev")


if __name__ == "__main__":
    main()
