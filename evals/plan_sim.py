"""A plan simulated on the lab's twins, and what physically happened in it, operation by operation.

The same simulation the task agent runs before approval (each instrument's steps as one
dry-run protocol on a copy of its twin, the plate mover's moves reaching the others as
``assume`` steps), here in process and without servers, so a corpus of hundreds of plans is
judged in seconds. What the twins report is turned into physical facts that do not depend on
how a plan encodes its steps: liquid moved from which well to which (followed per channel
through its tip), mixing cycles, tips, channels working together, shakes and holds with their
temperature, readings, plate moves, and the wells' final volumes.
"""

from __future__ import annotations

import asyncio
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agents.task.lab_view import build_lab_view
from agents.task.planning.models import LabView, Plan
from agents.task.simulate import split_by_instrument
from device_servers.errors import DeviceError
from device_servers.factory import make_driver
from device_servers.geometry_cache import default_cache_dir
from device_servers.lab import LabConfig, load
from device_servers.runtime import Assume, Trial, parse_protocol, simulate_protocol
from device_servers.runtime._gate import denied, policy_request
from device_servers.sim.world import SimWorld
from evals import thermo_facts
from policies import PolicyEngine, Verdict, build_engine


@dataclass
class SimLab:
    """A lab file made ready to plan for (its view) and to simulate on (its drivers)."""

    config: LabConfig
    drivers: dict[str, Any]
    engines: dict[str, PolicyEngine]
    view: LabView

    @classmethod
    def load(cls, path: str | Path) -> SimLab:
        config = load(path)
        # The plate mover asks the world's sensors whether a place is free, as it does in a
        # server's dry run: an empty world in a temporary directory answers for a fresh lab.
        world = SimWorld(Path(tempfile.mkdtemp(prefix="labwright-plan-")) / "world.db")
        cache = default_cache_dir()
        drivers = {
            i.id: make_driver(i, world if i.kind == "plate_mover" else None, cache_dir=cache)
            for i in config.instruments
        }
        engines = {
            i.id: build_engine(
                i.kind, i.policy.rules_file, i.policy.rules, i.policy.protected_labware
            )
            for i in config.instruments
        }
        states = {i: cls._state(i, d) for i, d in drivers.items()}
        tools = {i: sorted(d.commands) for i, d in drivers.items()}
        return cls(config, drivers, engines, build_lab_view(states, tools, engines))

    @staticmethod
    def _state(inst: str, driver: Any) -> dict[str, Any]:
        twin = driver.initial_twin()
        return {
            "instrument": inst,
            "kind": driver.kind,
            # How a plate reaches the instrument and the facts it decides that on, as get_state
            # publishes them.
            "stations": [st.model_dump(mode="json") for st in driver.stations()],
            "facts": {**twin.facts(), "busy": False},
            **twin.snapshot(),
        }

    def states(self) -> dict[str, dict[str, Any]]:
        return {i: self._state(i, d) for i, d in self.drivers.items()}


@dataclass
class LiquidOp:
    """Liquid that left ``src`` in a tip and arrived in ``dst`` (None: dropped with the tip)."""

    src: str
    dst: str | None
    volume: float
    liquids: dict[str, float]
    step: int
    tip: int
    width: int
    mix_after: int = 0
    mix_volume: float | None = None


@dataclass
class MixCycles:
    well: str
    cycles: int
    volume: float
    step: int
    tip: int
    width: int
    after_op: LiquidOp | None = None


@dataclass
class Simulated:
    """What a plan does on the twins."""

    ok: bool
    error: str | None = None
    ops: list[LiquidOp] = field(default_factory=list)
    mixes: list[MixCycles] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)  # shakes, holds, reads, moves
    final: dict[str, dict[str, float]] = field(default_factory=dict)
    tips: int = 0


def _run(
    lab: SimLab, plan: Plan
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, Any], str | None]:
    """Events per plan step id, the final twin of each instrument, the first error.

    Each instrument's part is parsed, gated by its policy and simulated exactly as a server's
    dry run (and ``labwright simulate``) does it: :func:`device_servers.runtime.simulate_protocol`.
    """
    protocols = split_by_instrument(plan, lab.states())
    per_step: dict[str, list[dict[str, Any]]] = {s.id: [] for s in plan.steps}
    twins: dict[str, Any] = {}
    for inst, steps in protocols.items():
        if not any(step_id for step_id, _ in steps):
            continue
        driver = lab.drivers[inst]
        protocol = {"name": "plan", "steps": [raw for _, raw in steps]}
        try:
            _, cmds = parse_protocol(driver, protocol)
            twin, events = simulate_protocol(
                driver, driver.initial_twin(), cmds, _gate(lab.engines[inst], inst, driver)
            )
        except DeviceError as exc:
            index = int((exc.extra or {}).get("step", -1))
            where = steps[index][0] if 0 <= index < len(steps) else "?"
            return per_step, twins, f"{where} on {inst}: {exc.code} {exc.detail}"
        for index, evs in events:
            step_id, raw = steps[index]
            if step_id is not None:
                per_step[step_id].extend(
                    {**e, "command": raw["command"], "args": raw["args"]} for e in evs
                )
        twins[inst] = twin
    return per_step, twins, None


def _gate(policy: PolicyEngine, inst: str, driver: Any) -> Any:
    """A server's preflight of a dry-run protocol: each step's policy with the facts its earlier
    steps (and the other instruments' assumed steps) leave, as ``Gate.preflight`` gives them."""
    loop = asyncio.new_event_loop()

    def check(index: int, cmd: BaseModel, trial: Trial) -> None:
        if isinstance(cmd, Assume):
            return
        read = getattr(driver, "policy_context", None)
        context = (
            loop.run_until_complete(read(cmd, trial.twin, assumed=trial.assumed)) if read else {}
        )
        name = str(getattr(type(cmd), "name", type(cmd).__name__))
        decision = policy.evaluate(policy_request(inst, driver, name, cmd, True, dict(context)))
        if decision.verdict is Verdict.DENY:
            raise denied(decision)

    return check


def simulate(lab: SimLab, plan: Plan) -> Simulated:
    """Simulate ``plan`` on ``lab``'s twins and list what physically happened."""
    per_step, twins, error = _run(lab, plan)
    if error is not None:
        return Simulated(ok=False, error=error)
    sim = Simulated(ok=True)
    _Follow(sim, {lw.id: lw.location for lw in lab.view.labware.values()}).steps(plan, per_step)
    for twin in twins.values():
        snap = twin.snapshot()
        for lw_id, item in (snap.get("labware") or {}).items():
            if "wells" in item and item.get("kind") == "plate":
                sim.final[lw_id] = {w: float(v["volume_ul"]) for w, v in item["wells"].items()}
    return sim


class _Follow:
    """Follows liquid through each channel's tip, step by step."""

    def __init__(self, sim: Simulated, locations: dict[str, str]) -> None:
        self.sim = sim
        self.tip: dict[int, int] = {}  # channel -> tip number
        self.held: dict[int, list[tuple[str, float, dict[str, float]]]] = {}
        self.width: dict[int, int] = {}  # channel -> how many channels aspirated with it
        self.last: dict[int, LiquidOp | None] = {}  # the last dispense of the channel's tip
        self.tips = 0
        self.plates: dict[str, str] = dict(locations)  # where plates are, as they move
        self.hs_target: dict[str, float | None] = {}
        self.profiles: dict[str, dict[str, Any]] = {}  # each thermocycler's last profile

    def steps(self, plan: Plan, per_step: dict[str, list[dict[str, Any]]]) -> None:
        for index, step in enumerate(plan.steps):
            events = per_step.get(step.id, [])
            width = (
                len({e["data"].get("channel") for e in events if e["type"] == "liquid_transferred"})
                or 1
            )
            for ev in events:
                self.event(ev, index, width, step.instrument, step.command, step.args)
            self.instrument_step(index, step.instrument, step.command, step.args, events)
        self.sim.tips = self.tips

    def event(
        self,
        ev: dict[str, Any],
        index: int,
        width: int,
        inst: str,
        command: str,
        args: dict[str, Any],
    ) -> None:
        data, kind = ev["data"], ev["type"]
        if kind == "tip_picked_up":
            self.tips += 1
            self.tip[data["channel"]] = self.tips
            self.held[data["channel"]] = []
            self.last[data["channel"]] = None
        elif kind == "tip_dropped":
            ch = data["channel"]
            for src, vol, liq in self.held.get(ch, []):
                if vol > 1e-6:
                    taken = self.width.get(ch, width)  # the channels that aspirated together
                    self.sim.ops.append(
                        LiquidOp(src, None, vol, liq, index, self.tip.get(ch, 0), taken)
                    )
            self.held[ch] = []
            self.tip.pop(ch, None)
        elif kind == "liquid_transferred":
            self.liquid(data, index, width)

    def liquid(self, data: dict[str, Any], index: int, width: int) -> None:
        ch, well = data["channel"], f"{data['labware']}:{data['well']}"
        vol, liquids = float(data["volume_ul"]), dict(data.get("liquids") or {})
        held = self.held.setdefault(ch, [])
        if data["op"] == "aspirate":
            held.append((well, vol, liquids))
            self.width[ch] = width
            return
        # A dispense: the liquid in the tip, first in first out.
        left = vol
        while left > 1e-9 and held:
            src, have, liq = held[0]
            part = min(have, left)
            share = {k: v * part / have for k, v in liq.items()} if have > 0 else {}
            if part >= have - 1e-9:
                held.pop(0)
            else:
                held[0] = (src, have - part, {k: v - share[k] for k, v in liq.items()})
            left -= part
            if src == well:  # back into the well it came from: a mixing cycle
                self._mix(well, part, index, ch, width)
                continue
            op = LiquidOp(src, well, part, share, index, self.tip.get(ch, 0), width)
            prev = self.sim.ops[-1] if self.sim.ops else None
            if (
                prev
                and prev.src == src
                and prev.dst == well
                and prev.tip == op.tip
                and prev.step == index
            ):
                prev.volume += part  # one dispense drawn from two aspirations of one source
                for k, v in share.items():
                    prev.liquids[k] = prev.liquids.get(k, 0.0) + v
            elif (
                (prev := self.last.get(ch)) is not None
                and prev.src == src
                and prev.dst == well
                and prev.tip == op.tip
                and not prev.mix_after
            ):
                prev.volume += part  # a further pass of the same transfer with the same tip
                for k, v in share.items():
                    prev.liquids[k] = prev.liquids.get(k, 0.0) + v
                op = prev
            else:
                self.sim.ops.append(op)
            self.last[ch] = op

    def _mix(self, well: str, volume: float, index: int, ch: int, width: int) -> None:
        tip = self.tip.get(ch, 0)
        after = self.last.get(ch)
        after = after if after is not None and after.dst == well else None
        for m in reversed(self.sim.mixes):
            if m.well == well and m.tip == tip and m.after_op is after:
                m.cycles += 1
                if after is not None:
                    after.mix_after = m.cycles
                    after.mix_volume = volume
                return
        self.sim.mixes.append(MixCycles(well, 1, volume, index, tip, width, after))
        if after is not None:
            after.mix_after, after.mix_volume = 1, volume

    def instrument_step(
        self,
        index: int,
        inst: str,
        command: str,
        args: dict[str, Any],
        events: list[dict[str, Any]],
    ) -> None:
        out = self.sim.events
        if command == "move_plate":
            self.plates[str(args.get("plate"))] = str(args.get("to_location"))
            out.append(
                {
                    "action": "move",
                    "plate": args.get("plate"),
                    "to": args.get("to_location"),
                    "step": index,
                }
            )
        elif command == "set_temperature":
            self.hs_target[inst] = float(args["celsius"])
        elif command == "stop":
            self.hs_target[inst] = None
        elif command in ("shake", "hold"):
            plate = next((p for p, at in self.plates.items() if at.startswith(f"{inst}:")), None)
            entry = {
                "action": "shake" if command == "shake" else "incubate",
                "plate": plate,
                "duration_s": float(args["duration_s"]),
                "temperature_c": self.hs_target.get(inst),
                "step": index,
            }
            if command == "shake":
                entry["rpm"] = int(args["rpm"])
            out.append(entry)
        elif command.startswith("read_"):
            out.append({"action": command, "step": index, **args})
        elif command == "run_profile":
            plate = next((p for p, at in self.plates.items() if at.startswith(f"{inst}:")), None)
            self.profiles[inst] = {
                "action": "thermocycle",
                "plate": plate,
                "programme": thermo_facts.ran(args),
                "lid_c": args.get("lid_celsius"),
                "final_hold_c": None,  # until a set_block_temperature follows the profile
                "step": index,
            }
            out.append(self.profiles[inst])
        elif command == "set_block_temperature" and inst in self.profiles:
            self.profiles[inst]["final_hold_c"] = float(args["celsius"])
