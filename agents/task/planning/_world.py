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
from agents.task.planning._quantities import fmt
from agents.task.planning.models import LabView, LabwareView, PlanStep
from device_servers.contract import Station, after_command, find_station

_EPS = 1e-6


def _spots(lw: LabwareView) -> list[str]:
    """A rack's tip spots that hold a tip, in the order the instrument takes them."""
    if lw.tip_spots:
        return list(lw.tip_spots)
    every = [f"{chr(65 + r)}{c + 1}" for c in range(lw.cols) for r in range(lw.rows)]
    return every[len(every) - lw.tips_remaining :] if lw.tips_remaining else []


def _r(value: float) -> float:
    return round(value, 3)


class World:
    """Predicted lab state plus the steps planned so far."""

    def __init__(self, lab: LabView) -> None:
        self.lab = lab
        self.liquids = lab.liquids()  # liquid -> where it is, as the lab view gives it
        self._op_maxes: dict[str, float] = {}
        self.steps: list[PlanStep] = []
        self.location = {lw.id: lw.location for lw in lab.labware.values()}
        self.volume: dict[tuple[str, str], float] = {}
        self.contents: dict[tuple[str, str], dict[str, float]] = {}
        for lw in lab.labware.values():
            for name, well in lw.wells.items():
                self.volume[lw.id, name] = well.volume_ul
                self.contents[lw.id, name] = dict(well.contents)
        self.racks = {lw.id: _spots(lw) for lw in lab.labware.values() if lw.kind == "tip_rack"}
        # instrument -> fact -> predicted value (drawer_open, locked...); absent: unknown, so
        # the plan makes sure of it (opening an open drawer is harmless).
        self.facts: dict[str, dict[str, Any]] = {}
        self.moves = 0
        self.tips_used = 0
        self.preferred: str | None = None  # a tip rack the request names
        # (destination, source) of every pour, in order: what a heading's items filled
        self.poured: list[tuple[tuple[str, str], tuple[str, str]]] = []

    # ------------------------------------------------------------------ steps
    def move_steps(self, since: int, to: int) -> dict[str, str]:
        """Put the steps from ``since`` on at position ``to`` and number every step again;
        old id -> new id."""
        self.steps[to:] = self.steps[since:] + self.steps[to:since]
        renamed = {}
        for i, step in enumerate(self.steps):
            renamed[step.id] = f"s{i + 1}"
        self.steps = [s.model_copy(update={"id": renamed[s.id]}) for s in self.steps]
        return renamed

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

    def holds_nothing(self, lw_id: str) -> bool:
        """Whether no well of ``lw_id`` holds liquid at this point of the plan."""
        return not any(v > 0 for (at, _), v in self.volume.items() if at == lw_id)

    def capacity(self, rack: str) -> float:
        """The most one pass with a tip of ``rack`` may take: what the tip holds, and no more
        than the lab's policy allows per operation (unknown: unlimited)."""
        cap = self.labware(rack).tip_max_volume_ul
        cap = cap if cap > 0 else float("inf")
        return min(cap, self._op_max(self.labware(rack).instrument))

    def _op_max(self, lh: str) -> float:
        """The largest volume per aspirate the liquid handler's policy allows."""
        if lh not in self._op_maxes:
            self._op_maxes[lh] = self._read_op_max(lh)
        return self._op_maxes[lh]

    def _read_op_max(self, lh: str) -> float:
        inst = self.lab.instruments.get(lh)
        limits = [
            float(rule["max"])
            for rule in (inst.policy if inst else [])
            if rule.get("type") == "limit"
            and rule.get("arg") == "volume_ul"
            and rule.get("max") is not None
            and rule.get("verdict", "DENY") == "DENY"
            and (not rule.get("commands") or "aspirate" in rule["commands"])
        ]
        return min(limits, default=float("inf"))

    def tip_capacity(self) -> float:
        """The largest volume a tip of any rack holds."""
        return max((self.capacity(r) for r in self.racks), default=float("inf"))

    def channels(self, lh: str) -> int:
        return (
            int(self.lab.instruments[lh].limits.get("num_channels", 8))
            if lh in self.lab.instruments
            else 8
        )

    def most_channels(self) -> int:
        """The most channels any liquid handler of the lab has."""
        return max((self.channels(i.id) for i in self.lab.of_kind("liquid_handler")), default=8)

    def rack_for(self, volume: float, count: int = 1) -> str:
        """The rack to take tips from for ``volume``: the smallest tips that hold it in one
        go (else the largest), among racks with ``count`` tips left."""
        racks = [r for r, spots in self.racks.items() if len(spots) >= count]
        if self.preferred in racks:
            return self.preferred  # the rack the person named
        if not racks:
            left = sum(len(s) for s in self.racks.values())
            raise Refuse(
                f"the plan needs more tips than the lab has: {self.tips_used} used so far, "
                f"{left} left (racks: {', '.join(self.racks) or 'none'})",
                "tips",
            )
        fits = [r for r in racks if self.capacity(r) + _EPS >= volume]
        if fits:
            return min(fits, key=self.capacity)
        return max(racks, key=self.capacity)

    def take_tips(
        self, volume: float, rows: list[int] | None = None, rack: str | None = None
    ) -> tuple[str, list[str]]:
        """Take one tip (``rows`` None), or one tip per channel on these rows of one tip
        column (the 8-channel head), from ``rack`` or the best rack; return (rack, spots)."""
        if rows is None:
            rack = rack or self.rack_for(volume)
            if not self.racks.get(rack):
                self.rack_for(volume, 10**9)  # raises the "too few tips" refusal
            spot = self.racks[rack].pop(0)
            self.tips_used += 1
            return rack, [spot]
        order = (
            [rack]
            if rack
            else sorted(
                (r for r in self.racks if len(self.racks[r]) >= len(rows)),
                key=lambda r: (self.capacity(r) + _EPS < volume, self.capacity(r)),
            )
        )
        for name in order:
            present = set(self.racks[name])
            for col in range(1, self.labware(name).cols + 1):
                spots = [f"{chr(65 + r)}{col}" for r in rows]
                if all(s in present for s in spots):
                    self.racks[name] = [s for s in self.racks[name] if s not in spots]
                    self.tips_used += len(spots)
                    return name, spots
        left = sum(len(s) for s in self.racks.values())
        raise Refuse(
            f"no tip rack has {len(rows)} tips left in one column for the 8-channel head "
            f"(the plan has used {self.tips_used} tips; {left} are left, not in whole columns)",
            "tips",
        )

    def room_for(self, dst: str, dst_well: str, volume: float) -> None:
        """Refuse ``volume`` uL more in a well that cannot hold it (its capacity)."""
        room = self.labware(dst).well_max_volume_ul
        after = self.well_volume(dst, dst_well) + volume
        if room > 0 and after > room + _EPS:
            raise Refuse(
                f"{dst} {dst_well} would hold {fmt(_r(after), 'uL')}, more than its "
                f"{fmt(room, 'uL')} maximum"
            )

    def room_for_each(self, plate: str, wells: list[str], volume: float) -> None:
        """Refuse ``volume`` uL more in each of ``wells`` when one cannot hold it."""
        for w in wells:
            self.room_for(plate, w, volume)

    def pour(self, src: str, src_well: str, dst: str, dst_well: str | None, volume: float) -> None:
        """Move ``volume`` uL from one well to another (None: to the trash), contents pro rata."""
        have = self.well_volume(src, src_well)
        if have + _EPS < volume:
            raise Refuse(
                f"{src} {src_well} holds {fmt(_r(have), 'uL')} at that point of the plan, "
                f"not the {fmt(_r(volume), 'uL')} to take from it",
                "insufficient_liquid",
            )
        mix = self.contents.get((src, src_well), {})
        known = sum(mix.values())
        share = {k: v * volume / known for k, v in mix.items()} if known > 0 else {}
        for k in share:
            mix[k] -= share[k]
        self.volume[src, src_well] = max(0.0, have - volume)
        if dst_well is None:
            return
        self.room_for(dst, dst_well, volume)
        self.volume[dst, dst_well] = self.well_volume(dst, dst_well) + volume
        self.poured.append(((dst, dst_well), (src, src_well)))
        target = self.contents.setdefault((dst, dst_well), {})
        for k, v in share.items():
            target[k] = target.get(k, 0.0) + v

    def wells_expect(self, pairs: Iterable[tuple[str, str]]) -> dict[str, float]:
        return {f"{lw}:{w}": _r(self.well_volume(lw, w)) for lw, w in dict.fromkeys(pairs)}

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
            raise Refuse(
                "the lab has no plate mover: a person must move plates by hand",
                "missing_instrument",
            )
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
            raise Refuse(f"{plate} is a tip rack; the plate mover moves plates only", "unsafe")
        arm, workspace = self.arm(), self.lab.mover_locations
        for where in (here, to):
            if workspace and where not in workspace:
                raise Refuse(f"{where} is outside the workspace of {arm}", "missing_instrument")
        other = self.occupant(to)
        if other is not None:
            if self.labware(other).home == to:
                raise Refuse(f"{to} holds {other}, and that is its home", "unsafe")
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
