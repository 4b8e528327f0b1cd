"""What the fuzz tests share: how many cases to run, and a report of how many ran.

``make test`` runs a small, deterministic form (hypothesis derandomized, few examples);
``make fuzz`` (``bench/fuzz.py``) runs the same properties with ``LABWRIGHT_FUZZ_CASES`` set
high and ``LABWRIGHT_FUZZ_REPORT`` naming a JSON file where each test adds its counts.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings

BIG = "LABWRIGHT_FUZZ_CASES" in os.environ


def fuzz_settings(small: int, per_example: int = 1) -> Any:
    """Hypothesis settings: ``small`` examples in ``make test``; enough examples for
    ``LABWRIGHT_FUZZ_CASES`` cases (``per_example`` cases on average per example) otherwise."""
    wanted = int(os.environ.get("LABWRIGHT_FUZZ_CASES", "0"))
    examples = max(small, wanted // per_example + 1) if BIG else small
    return settings(
        max_examples=examples,
        deadline=None,
        derandomize=not BIG,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


class Tally:
    """Cases and outcomes of one fuzz test, added to the report file when one is named."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.cases = 0
        self.outcomes: Counter[str] = Counter()

    def add(self, outcome: str) -> None:
        self.cases += 1
        self.outcomes[outcome] += 1

    def write(self) -> None:
        path = os.environ.get("LABWRIGHT_FUZZ_REPORT")
        if not path:
            return
        report = Path(path)
        data = json.loads(report.read_text()) if report.exists() else {}
        entry = data.setdefault(self.name, {"cases": 0, "outcomes": {}})
        entry["cases"] += self.cases
        for k, v in self.outcomes.items():
            entry["outcomes"][k] = entry["outcomes"].get(k, 0) + v
        report.write_text(json.dumps(data, indent=2, sort_keys=True))
