"""Which operations of a command happened: the ``progress`` every result, every failure and
every read back (per in-doubt action) carries.

``{done, of, complete, left, next?, summary, remainder}``: ``done`` of ``of`` primitives happened,
in order; ``next`` is the one that did not (``refused``: the server stopped before sending it;
``failed``: the instrument reported it did not do it; ``unknown``: its outcome was lost;
``interrupted``: an e-stop or a cancel cut in). A kind adds a ``summary`` (per well, per
channel) and the ``remainder``: arguments of the same command doing exactly what is left.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pydantic import BaseModel

from device_servers.kind import Driver


def describe(prim: Any) -> dict[str, Any]:
    """One primitive as plain data."""
    if dataclasses.is_dataclass(prim) and not isinstance(prim, type):
        return {k: v for k, v in dataclasses.asdict(prim).items() if v is not None}
    return {"op": str(prim)}


def record(
    driver: Driver, cmd: BaseModel, prims: list[Any], done: int, status: str | None = None
) -> dict[str, Any]:
    """The operations record of ``cmd`` after its first ``done`` ``prims`` happened."""
    out: dict[str, Any] = {"done": done, "of": len(prims), "complete": done >= len(prims)}
    # The kinds of operation still to go (what a device agent may finish alone depends on it).
    out["left"] = sorted({str(getattr(p, "op", p)) for p in prims[done:]})
    if done < len(prims) and status is not None:
        out["next"] = {**describe(prims[done]), "status": status}
    out.update(driver.progress(cmd, prims, done))
    return out
