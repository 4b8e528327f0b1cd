"""A liquid move and the tip policies, as the pipetting stages and the families share them."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

TipPolicy = Literal["per_source", "per_destination", "once", "per_column", "per_row"]
POLICIES: dict[str, str] = {
    "per_source": "a new tip whenever the source changes (the default)",
    "per_destination": "a fresh tip for every destination",
    "once": "one tip for everything",
    "per_column": "new tips for every column",
    "per_row": "a new tip for every row",
}
_EPS = 1e-6


@dataclass(frozen=True, slots=True)
class Op:
    """``volume`` uL from ``src`` (labware, well) to ``dst`` (None: waste), then mixed."""

    src: tuple[str, str]
    dst: tuple[str, str] | None
    volume: float
    mix_cycles: int = 0
    mix_volume: float | None = None


def policy_used(ops: list[Op], asked: str | None) -> TipPolicy:
    """The tip policy the person asked for, else the documented default."""
    if asked in POLICIES:
        return asked  # type: ignore[return-value]
    return "per_destination" if any(op.mix_cycles for op in ops) else "per_source"


def passes(volume: float, cap: float) -> list[float]:
    n = max(1, math.ceil(volume / cap - 1e-9)) if math.isfinite(cap) else 1
    per = round(volume / n, 4)
    return [per] * (n - 1) + [round(volume - per * (n - 1), 4)]
