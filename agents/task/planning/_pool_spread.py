"""A pool whose source wells would each go to several wells: asked, never spread.

"Pool X A1-A4 and X B1-B4 into Y A1 and Y B1 respectively" names two pools; read as one set
of sources into one set of destinations, every source well would be dispensed into every
destination, more than asked. A pooling clause whose planned move puts one source well into
more than one destination asks which wells go where (``missing: destination``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from agents.task.planning._outcomes import Ask

_POOL = re.compile(r"^(?:pool|combine|consolidate|merge)\b", re.IGNORECASE)


def check(text: str, steps: Sequence[Any]) -> None:
    """Ask when a pooling clause's move takes one source well into several wells."""
    if not _POOL.match(text):
        return
    for step in steps:
        if step.command == "transfer" and len(step.args.get("destination_wells") or []) > 1:
            raise Ask(
                "A pool collects its source wells into one well: which source wells go into "
                "which destination well?",
                ["destination"],
            )
