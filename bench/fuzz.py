#!/usr/bin/env python3
"""Fuzz figures: the fuzz properties of the tools, the CLI and the lab file at full size.

Runs ``tests/test_fuzz_tools.py`` and ``tests/test_fuzz_cli.py`` with hypothesis at
``--cases`` cases each (random, not the derandomized form ``make test`` runs), collects the
counts each test writes (``LABWRIGHT_FUZZ_REPORT``) and prints cases, outcomes and failures.
A failure is any property violated: an escaped exception or traceback, an internal-error
status, an ADAPTER_FAULT, a non-structured answer, a movement without ``dry_run: false``.

Usage::

    .venv/bin/python bench/fuzz.py [--cases 10000] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TESTS = ["tests/test_fuzz_tools.py", "tests/test_fuzz_cli.py"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=10_000)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="labwright-fuzz-") as tmp:
        report = Path(tmp) / "report.json"
        env = {
            **os.environ,
            "LABWRIGHT_FUZZ_CASES": str(args.cases),
            "LABWRIGHT_FUZZ_REPORT": str(report),
        }
        began = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:logging", *TESTS],
            cwd=REPO, env=env, capture_output=True, text=True,
        )  # fmt: skip
        elapsed = time.monotonic() - began
        counts = json.loads(report.read_text()) if report.exists() else {}
    failed = done.returncode != 0
    print(
        f"fuzz, {args.cases:,} cases asked per target, {elapsed:.0f} s, "
        f"load {os.getloadavg()[0]:.1f}"
    )
    print(f"{'target':<10} {'cases':>8}  outcomes (most frequent)")
    for name, entry in sorted(counts.items()):
        top = sorted(entry["outcomes"].items(), key=lambda kv: -kv[1])[:6]
        print(f"{name:<10} {entry['cases']:>8,}  " + ", ".join(f"{k} {v:,}" for k, v in top))
    print(f"property violations: {'see below' if failed else 0}")
    if failed:
        print(done.stdout[-6000:])
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps({"cases": counts, "failed": failed, "seconds": elapsed}, indent=2)
        )
    short = [n for n, e in counts.items() if e["cases"] < args.cases]
    return 1 if failed or short or len(counts) < 3 else 0


if __name__ == "__main__":
    sys.exit(main())
