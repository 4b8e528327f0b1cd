"""The plate mover as a runtime driver: commands, twin and adapter wired together.

Policy facts (:meth:`PlateMoverDriver.policy_context`), read through the adapter just before
the gate:

- ``destination_ready`` / ``source_ready``: the instrument owning the location lets the arm in
  (a reader's drawer open, a heater-shaker unlocked and still, nothing busy; a hotel always).
- ``destination_free``: no plate the arm cannot account for sits at the destination. A plate
  this arm tracks and believes there is the twin's business (DECK_COLLISION, simulated in
  order across a protocol's steps); the fact covers what only the instrument can see.

``None`` means the instrument cannot tell (hardware): the rules count it as not ready. A move
of a plate already at its destination moves nothing, so every fact is true for it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from device_servers.contract import location_owner
from device_servers.kind import DriverBase
from device_servers.plate_mover.commands import COMMANDS, MovePlate, Primitive
from device_servers.plate_mover.config import PlateMoverConfig
from device_servers.plate_mover.twin import PlateMoverTwin


class PlateMoverDriver(DriverBase[PlateMoverConfig]):
    kind = "plate_mover"
    command_set = COMMANDS
    adapter_class = "device_servers.plate_mover.adapter:PlateMoverAdapter"

    def initial_twin(self) -> PlateMoverTwin:
        cfg = self.config
        plates: dict[str, str | None] = {p: cfg.initial_locations.get(p) for p in cfg.plates}
        types = {p: cfg.plate_types[p] for p in cfg.plates if p in cfg.plate_types}
        return PlateMoverTwin(cfg.id, cfg.locations, plates, types)

    def twin_from_snapshot(self, snap: dict[str, Any]) -> PlateMoverTwin:
        return PlateMoverTwin.from_snapshot(snap)

    def touched(self, prims: list[Primitive]) -> set[str]:
        return {p.plate for p in prims if p.plate}

    def seconds(self, prim: Primitive) -> float:
        """Every motion (pick, place, home) takes the lab file's ``move_seconds``."""
        return float(self.config.move_seconds)

    def progress(self, cmd: BaseModel, prims: list[Primitive], done: int) -> dict[str, Any]:
        """A move expands on the arm's belief (a held plate is only placed, a homed arm not
        homed again), so what is left of it is the same move, asked again."""
        ops = [{"op": p.op, "plate": p.plate, "location": p.location} for p in prims[:done]]
        rest = cmd.model_dump(mode="json") if done < len(prims) else None
        return {"summary": {"done": ops}, "remainder": rest}

    # ------------------------------------------------------------------ policy facts
    async def policy_context(
        self, cmd: BaseModel, twin: Any, assumed: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Facts for ``require_state`` rules; raises the twin's error for a plate it does not
        move or a destination outside the workspace (those do not depend on belief).

        ``assumed`` (simulations): other instruments' facts by instrument id, and
        ``_plates``: plate -> location moves the simulation takes as done.
        """
        if not isinstance(cmd, MovePlate):
            return {}
        assumed = assumed or {}

        def ready(location: str) -> bool | None:
            return self.adapter.ready(location, assumed.get(location_owner(location)))

        assert isinstance(twin, PlateMoverTwin)
        twin.check_static(cmd)
        if twin.is_no_op(cmd):
            return {"destination_ready": True, "source_ready": True, "destination_free": True}
        where = twin.plates.get(cmd.plate)
        source_ready: bool | None
        if where == twin.gripper:
            source_ready = True  # nothing to pick
        elif where is None:
            source_ready = None
        else:
            source_ready = ready(where)
        known, occupant = self.adapter.occupant(cmd.to_location)
        moved = assumed.get("_plates", {})
        if occupant is not None and occupant in moved and moved[occupant] != cmd.to_location:
            occupant = None  # the simulation has taken it away
        for plate, location in moved.items():
            if location == cmd.to_location:
                known, occupant = True, plate
        free: bool | None = None
        if known:
            free = (
                occupant is None
                or occupant == cmd.plate
                or twin.plates.get(occupant) == cmd.to_location
            )
        return {
            "destination_ready": ready(cmd.to_location),
            "source_ready": source_ready,
            "destination_free": free,
        }
