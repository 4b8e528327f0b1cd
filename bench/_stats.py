"""Statistics shared by the bench modules: percentiles and the usual summary of timings."""

from __future__ import annotations

import statistics
from typing import Any


def pct(values: list[float], q: float) -> float:
    """The q-th percentile (0..100), linear interpolation between closest ranks."""
    s = sorted(values)
    if len(s) == 1:
        return s[0]
    k = (len(s) - 1) * q / 100
    lo = int(k)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def summary(values: list[float]) -> dict[str, Any]:
    """p50 / p95 / min / max / mean / n of timings in milliseconds."""
    return {
        "p50_ms": statistics.median(values),
        "p95_ms": pct(values, 95),
        "min_ms": min(values),
        "max_ms": max(values),
        "mean_ms": statistics.fmean(values),
        "n": len(values),
    }
