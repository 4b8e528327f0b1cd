"""The families of requests the rule planner understands, one module each.

A family is three things (:class:`Family`): how to recognise a clause of it (``detect``:
a priority, or None), how to refine the generic frame into its own slots (``read``), and how
to plan the steps (``build``: emits steps on the planning world and says, in plain words, what
the clause was understood as). Every module of this package that defines ``FAMILY`` is a
family: a new one (a thermocycler's "run 35 cycles of ...") is one new module here.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass

from agents.task.planning._clauses import Clause
from agents.task.planning._entities import Entities
from agents.task.planning._frames import Frame
from agents.task.planning._resolve import Planning


@dataclass(frozen=True)
class Family:
    """One kind of request: recognise, read, plan."""

    name: str
    detect: Callable[[Clause, Entities], int | None]
    build: Callable[[Frame, Planning], str]
    read: Callable[[Frame], None] | None = None


def _discover() -> list[Family]:
    found: list[Family] = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{__name__}.{info.name}")
        family = getattr(module, "FAMILY", None)
        if isinstance(family, Family):
            found.append(family)
    return found


FAMILIES: list[Family] = _discover()


def classify(clause: Clause, ents: Entities) -> Family | None:
    """The family that claims a clause most strongly (None: no family does)."""
    best: tuple[int, Family] | None = None
    for family in FAMILIES:
        score = family.detect(clause, ents)
        if score is not None and (best is None or score > best[0]):
            best = (score, family)
    return best[1] if best else None
