"""The lab as the rule planner imagines it while planning: where each plate is, what each well
holds, how many tips are left, whether a drawer is open or a plate locked.

Builders change it only through these methods, which also emit the plan's steps — so every
step's ``expect`` is the state the planner predicted, and chained requests see the effects of
earlier ones (a plate read in the reader comes back to its deck slot before pipetting).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agents.task.planning._outcomes import Ask, Refuse
from agents.task.planning._units import fmt
from agents.task.planning.models import LabView, LabwareView, PlanStep
from device_servers.contract import Station, after_command, find_station

_EPS = 1e-6


def _r(value: float) -> float:
    return round(value, 3)


class World:
    """Predicted lab state plus the steps planned so far."""

    def __init__(self, lab: LabView) -> None:
        self.lab = lab
        self.steps: list[PlanStep] = []
        self.location = {lw.id: lw.location for lw in lab.labware.values()}
        self.volume: dict[tuple[str, str], float] = {}
        self.contents: dict[tuple[str, str], dict[str, float]] = {}
        for lw in lab.labware.values():
            for name, well in lw.wells.items():
                self.volume[lw.id, name] = well.volume_ul
                self.contents[lw.id, name] = dict(well.contents)
        self.tips = {
            lw.id: lw.tips_remaining for lw in lab.labware.values() if lw.kind == "tip_rack"
        }
        # instrument -> fact -> predicted value (drawer_open, locked...); absent: unknown, so
        # the plan makes sure of it (opening an open drawer is harmless).
        self.facts: dict[str, dict[str, Any]] = {}
        self.moves = 0
        self.tips_used = 0

    # ------------------------------------------------------------------ steps
    def emit(
        self,
        instrument: str,
        command: str,
        args: dict[str, Any] | None = None,
        expect: dict[str, Any] | None = None,
        note: str = "",
    ) -> PlanStep:
        step = PlanStep(
            id=f"s{len(self.steps) + 1}",
            instrument=instrument,
            command=command,
            args=args or {},
            expect=expect or {},
            note=note,
        )
        self.steps.append(step)
        return step

    # ------------------------------------------------------------------ labware and liquid
    def labware(self, lw_id: str) -> LabwareView:
        return self.lab.labware[lw_id]

    def well_volume(self, lw_id: str, well: str) -> float:
        return self.volume.get((lw_id, well), 0.0)

    def tip_capacity(self) -> float:
        """The largest volume one tip holds (the first rack that says), else unlimited."""
        caps = [
            lw.tip_max_volume_ul
            for lw in self.lab.labware.values()
            if lw.kind == "tip_rack" and lw.tip_max_volume_ul > 0
        ]
        return min(caps) if caps else float("inf")

    def pour(self, src: str, src_well: str, dst: str, dst_well: str | None, volume: float) -> None:
        """Move ``volume`` uL from one well to another (None: to the trash), contents pro rata."""
        have = self.well_volume(src, src_well)
        if have + _EPS < volume:
            raise Refuse(
                f"{src} {src_well} holds {fmt(_r(have), 'uL')} at that point of the plan, "
                f"not the {fmt(_r(volume), 'uL')} to take from it"
            )
        mix = self.contents.get((src, src_well), {})
        known = sum(mix.values())
        share = {k: v * volume / known for k, v in mix.items()} if known > 0 else {}
        for k in share:
            mix[k] -= share[k]
        self.volume[src, src_well] = max(0.0, have - volume)
        if dst_well is None:
            return
        room = self.labware(dst).well_max_volume_ul
        after = self.well_volume(dst, dst_well) + volume
        if room > 0 and after > room + _EPS:
            raise Refuse(
                f"{dst} {dst_well} would hold {fmt(_r(after), 'uL')}, more than its "
                f"{fmt(room, 'uL')} maximum"
            )
        self.volume[dst, dst_well] = after
        target = self.contents.setdefault((dst, dst_well), {})
        for k, v in share.items():
            target[k] = target.get(k, 0.0) + v

    def wells_expect(self, pairs: Iterable[tuple[str, str]]) -> dict[str, float]:
        return {f"{lw}:{w}": _r(self.well_volume(lw, w)) for lw, w in dict.fromkeys(pairs)}

    def use_tips(self, count: int) -> None:
        left = sum(self.tips.values())
        if count > left:
            raise Refuse(
                f"the plan needs {self.tips_used + count} tips but the lab has "
                f"{self.tips_used + left} (racks: {', '.join(self.tips) or 'none'})"
            )
        self.tips_used += count
        for rack in self.tips:
            used = min(count, self.tips[rack])
            self.tips[rack] -= used
            count -= used

    def next_rack(self) -> str:
        rack = next((r for r, n in self.tips.items() if n > 0), None)
        if rack is None:
            raise Refuse("no tips are left on the deck")
        return rack

    # ------------------------------------------------------------------ plates and instruments
    def kind_of(self, location: str) -> str | None:
        owner = self.lab.instruments.get(location.split(":", 1)[0])
        return owner.kind if owner else None

    @property
    def drawer(self) -> dict[str, str]:
        """Reader -> "open" | "closed", where the plan knows it."""
        return {
            i: "open" if f["drawer_open"] else "closed"
            for i, f in self.facts.items()
            if "drawer_open" in f
        }

    @property
    def lock(self) -> dict[str, str]:
        """Heater-shaker -> "locked" | "unlocked", where the plan knows it."""
        return {
            i: "locked" if f["locked"] else "unlocked"
            for i, f in self.facts.items()
            if "locked" in f
        }

    def station(self, location: str) -> Station:
        """How a plate reaches ``location``, as its instrument describes it (get_state)."""
        found = find_station(self.lab.stations.values(), location)
        if found is None:
            raise Refuse(
                f"no instrument of the lab says how a plate gets to {location}: "
                "the arm does not go there"
            )
        return found

    def _secure(self, station: Station, command: str | None, plate: str | None) -> None:
        """The instrument's command after a plate arrived at / left its station."""
        if command is None:
            return
        args = {station.plate_arg: plate} if station.plate_arg and plate else {}
        facts = self.facts.setdefault(station.instrument, {})
        after_command([station], command, facts)
        expect = {r.fact: facts[r.fact] for r in station.requires if r.fact in facts}
        if station.plate_fact:
            expect[station.plate_fact] = plate
        self.emit(station.instrument, command, args, {"facts": expect})

    def occupant(self, location: str) -> str | None:
        return next((p for p, at in self.location.items() if at == location), None)

    def arm(self) -> str:
        arms = self.lab.of_kind("plate_mover")
        if not arms:
            raise Refuse("the lab has no plate mover: a person must move plates by hand")
        return arms[0].id

    def at_home(self, lw_id: str) -> None:
        """Bring labware back to its liquid-handler deck slot before pipetting from or to it."""
        self.bring(lw_id, self.labware(lw_id).home)

    def bring(self, plate: str, to: str, *, evicting: bool = False) -> None:
        """Plan the moves (and drawer/lock steps) that put ``plate`` at ``to``."""
        here = self.location[plate]
        if here == to:
            return
        if self.labware(plate).kind != "plate":
            raise Refuse(f"{plate} is a tip rack; the plate mover moves plates only")
        arm, workspace = self.arm(), self.lab.mover_locations
        for where in (here, to):
            if workspace and where not in workspace:
                raise Refuse(f"{where} is outside the workspace of {arm}")
        other = self.occupant(to)
        if other is not None:
            if self.labware(other).home == to:
                raise Refuse(f"{to} holds {other}, and that is its home")
            self.bring(other, self.labware(other).home, evicting=True)
        source, destination = self.station(here), self.station(to)
        self._ready(source)
        self._ready(destination)
        self.emit(
            arm,
            "move_plate",
            {"plate": plate, "to_location": to},
            {"plate_location": {plate: to}},
            note=f"{plate}: {here} -> {to}",
        )
        self.location[plate] = to
        self.moves += 1
        if not evicting:
            self._secure(source, source.after_leave, None)
        self._secure(destination, destination.after_enter, plate)

    def _ready(self, station: Station) -> None:
        """Make what the station needs hold before the arm reaches in (open a drawer, unlock
        a holder): each requirement the plan does not know to hold, by the command that
        makes it (one nothing makes, like "not busy", is the instrument's to keep)."""
        facts = self.facts.setdefault(station.instrument, {})
        for req in station.requires:
            if req.made_by is None or facts.get(req.fact) == req.equals:
                continue
            self.emit(station.instrument, req.made_by, {}, {"facts": {req.fact: req.equals}})
            after_command([station], req.made_by, facts)

    def act(
        self, instrument: str, command: str, args: dict[str, Any], expect: dict[str, Any]
    ) -> None:
        """A command of an instrument the plan asks for itself (lock a plate to shake it)."""
        facts = self.facts.setdefault(instrument, {})
        for station in self.lab.stations.values():
            if station.instrument == instrument:
                after_command([station], command, facts)
        self.emit(instrument, command, args, expect)

    def close_drawer(self, reader: str, plate: str | None) -> None:
        args = {"expect_plate": plate} if plate else {}
        self.act(reader, "close_drawer", args, {"drawer": "closed", "plate_in_reader": plate})

    def unlock(self, hs: str) -> None:
        self.act(hs, "unlock_plate", {}, {"plate_lock": "unlocked"})

    def lock_plate(self, hs: str) -> None:
        self.act(hs, "lock_plate", {}, {"plate_lock": "locked"})


def need(value: Any, question: str, missing: str, options: Iterable[str] = ()) -> Any:
    """``value`` if it is there, else ask."""
    if value is None:
        raise Ask(question, [missing], options)
    return value
