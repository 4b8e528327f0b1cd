"""Faults every simulated instrument plays the same way; each backend adds its own kinds.

A simulated backend asks the world for the fault (if any) that fires on an operation and
plays it here: slow down, hang, drop the connection (before or after the effect), crash the
server process, or report an unknown firmware state.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import Any

COMMON_FAULTS = frozenset({"delay", "hang", "disconnect", "crash", "adapter_fault"})


async def play_common_fault(
    kind: str,
    params: dict[str, Any],
    effect: Callable[[], Any],
    sleep: Callable[[float], Awaitable[None]],
    device: str,
) -> Any:
    """Play one of :data:`COMMON_FAULTS` around ``effect``; returns what the effect returned."""
    if kind in ("delay", "hang"):
        await sleep(float(params.get("seconds", 0.05 if kind == "delay" else 3600)))
        return effect()
    if kind == "disconnect":
        if params.get("after_effect", False):
            effect()
        raise ConnectionError(f"connection to {device} was lost")
    if kind == "crash":
        if params.get("after_effect", True):
            effect()
        os._exit(137)  # a process crash: no cleanup, no ledger outcome
    if kind == "adapter_fault":
        raise RuntimeError(f"{device} reported an unknown firmware state")
    raise ValueError(f"{kind!r} is not a common fault")
