"""What the run page shows, computed from a run's records: pure functions, no I/O.

- :func:`deck_frames`: wells and tips per liquid-handler labware before the run, then the
  change each step makes (from the simulation's predicted events), for the step slider.
- :func:`budgets`: per source well what is there, what the plan draws and what is left; per
  destination well the predicted volume against the well's maximum; tips used per rack.
- :func:`plan_diff`: after an edit, the steps removed and added against the previous plan.
- :func:`steps_table`: each step with its verdict, the rule that decided it, and its progress.
- :func:`plate_locations`: where each plate is before the run and after each step.
- :func:`readings`: readings grouped per plate and mode (a heatmap each, a series plotted).
"""

from __future__ import annotations

import difflib
from typing import Any

Wells = dict[str, dict[str, dict[str, Any]]]  # labware -> well -> {v, c}


def _wells_of(state: dict[str, Any]) -> Wells:
    out: Wells = {}
    for lw_id, lw in (state.get("labware") or {}).items():
        if lw.get("kind") == "plate":
            out[lw_id] = {
                w: {"v": float(d.get("volume_ul") or 0), "c": dict(d.get("contents") or {})}
                for w, d in (lw.get("wells") or {}).items()
            }
    return out


def _take(well: dict[str, Any], volume: float, liquids: dict[str, float]) -> None:
    well["v"] = max(0.0, well["v"] - volume)
    contents = well["c"]
    for liquid, vol in liquids.items():
        left = float(contents.get(liquid, 0.0)) - float(vol)
        if left > 1e-6:
            contents[liquid] = left
        else:
            contents.pop(liquid, None)


def _put(well: dict[str, Any], volume: float, liquids: dict[str, float]) -> None:
    well["v"] += volume
    for liquid, vol in liquids.items():
        well["c"][liquid] = float(well["c"].get(liquid, 0.0)) + float(vol)


def deck_frames(
    instrument: str, before: dict[str, Any], plan: dict[str, Any], simulation: dict[str, Any]
) -> dict[str, Any]:
    """The instrument's wells and tips before the run, and per plan step what changes.

    ``steps[i]`` lists ``{lw, well, v, c}`` (the well's predicted volume and contents after
    step i) and ``tips`` (tip spots taken); steps of other instruments change nothing here.
    """
    wells = _wells_of(before)
    tips = {
        rack: sorted(lw.get("tips_present") or [])
        for rack, lw in (before.get("labware") or {}).items()
        if lw.get("kind") == "tip_rack"
    }
    initial = {
        lw: {w: {"v": d["v"], "c": dict(d["c"])} for w, d in ws.items()} for lw, ws in wells.items()
    }
    predictions = {p["step_id"]: p for p in (simulation or {}).get("predictions") or []}
    steps: list[dict[str, Any]] = []
    for step in (plan or {}).get("steps") or []:
        changed: dict[tuple[str, str], dict[str, Any]] = {}
        taken: list[dict[str, str]] = []
        if step.get("instrument") == instrument:
            for ev in (predictions.get(step["id"]) or {}).get("events", []):
                data = ev.get("data") or {}
                if ev.get("type") == "liquid_transferred" and data.get("labware") in wells:
                    well = wells[data["labware"]].setdefault(data["well"], {"v": 0.0, "c": {}})
                    volume = float(data.get("volume_ul") or 0)
                    liquids = {k: float(v) for k, v in (data.get("liquids") or {}).items()}
                    (_take if data.get("op") == "aspirate" else _put)(well, volume, liquids)
                    changed[(data["labware"], data["well"])] = well
                elif ev.get("type") == "tip_picked_up" and data.get("rack"):
                    taken.append({"rack": str(data["rack"]), "spot": str(data.get("spot"))})
        steps.append(
            {
                "step": step["id"],
                "wells": [
                    {
                        "lw": lw,
                        "well": w,
                        "v": round(d["v"], 3),
                        "c": {k: round(v, 3) for k, v in d["c"].items()},
                    }
                    for (lw, w), d in changed.items()
                ],
                "tips": taken,
            }
        )
    return {"instrument": instrument, "wells": initial, "tips": tips, "steps": steps}


def deck_view(geometry: dict[str, Any], margin: float = 12.0) -> dict[str, float]:
    """The part of the deck that holds something (carriers, labware), in deck mm."""
    boxes = [*geometry.get("carriers", {}).values(), *geometry.get("labware", {}).values()]
    if not boxes:
        deck = geometry["deck"]
        return {"x": 0.0, "y": 0.0, "w": float(deck["w"]), "h": float(deck["h"])}
    x0 = min(b["x"] for b in boxes) - margin
    y0 = min(b["y"] for b in boxes) - margin
    x1 = max(b["x"] + b["w"] for b in boxes) + margin
    y1 = max(b["y"] + b["h"] for b in boxes) + margin
    return {"x": x0, "y": y0, "w": x1 - x0, "h": y1 - y0}


def budgets(
    before: dict[str, Any], plan: dict[str, Any], simulation: dict[str, Any]
) -> dict[str, Any]:
    """Volume budgets and tips, following each well's volume through the predicted events.

    A source (a well drawn from, mixing included) shows its start, what is drawn and added,
    its end, and its *margin*: the least it holds after any aspiration (below 0: it runs dry).
    A destination shows its highest volume against the well's maximum (*headroom*; below 0:
    it overflows). Tips: per rack how many are there, used and left.
    """
    labware = before.get("labware") or {}
    start = _wells_of(before)
    level: dict[tuple[str, str], float] = {}
    drawn: dict[tuple[str, str], float] = {}
    added: dict[tuple[str, str], float] = {}
    lowest: dict[tuple[str, str], float] = {}
    highest: dict[tuple[str, str], float] = {}
    tips: dict[str, int] = {}
    for pred in (simulation or {}).get("predictions") or []:
        if pred.get("instrument") != before.get("instrument"):
            continue
        for ev in pred.get("events", []):
            data = ev.get("data") or {}
            if ev.get("type") == "tip_picked_up":
                tips[str(data.get("rack"))] = tips.get(str(data.get("rack")), 0) + 1
            if ev.get("type") != "liquid_transferred" or data.get("labware") not in labware:
                continue
            key = (str(data["labware"]), str(data.get("well")))
            volume = float(data.get("volume_ul") or 0)
            known = float(start.get(key[0], {}).get(key[1], {}).get("v") or 0.0)
            now = level.get(key, known)
            if data.get("op") == "aspirate":
                now -= volume
                drawn[key] = drawn.get(key, 0.0) + volume
                lowest[key] = min(lowest.get(key, now), now)
            else:
                now += volume
                added[key] = added.get(key, 0.0) + volume
                highest[key] = max(highest.get(key, now), now)
            level[key] = now

    def row(key: tuple[str, str]) -> dict[str, Any]:
        return {
            "well": f"{key[0]}:{key[1]}",
            "start": round(start.get(key[0], {}).get(key[1], {}).get("v", 0.0), 2),
            "drawn": round(drawn.get(key, 0.0), 2),
            "added": round(added.get(key, 0.0), 2),
            "end": round(level[key], 2),
        }

    sources = [{**row(k), "margin": round(lowest[k], 2)} for k in sorted(lowest, key=_order)]
    destinations = []
    for key in sorted(highest, key=_order):
        top = float(labware.get(key[0], {}).get("well_max_volume_ul") or 0)
        destinations.append(
            {**row(key), "max": round(top, 2), "headroom": round(top - highest[key], 2)}
        )
    racks = []
    for rack, lw in sorted(labware.items()):
        if lw.get("kind") == "tip_rack":
            present = len(lw.get("tips_present") or [])
            used = tips.get(rack, 0)
            racks.append({"rack": rack, "present": present, "used": used, "left": present - used})
    return {"sources": sources, "destinations": destinations, "tips": racks}


def _order(key: tuple[str, str]) -> tuple[str, str, int]:
    """Wells in plate order: A1, A2, ..., A10 (not A1, A10, A2)."""
    well = key[1]
    return (key[0], well[:1], int(well[1:]) if well[1:].isdigit() else 0)


def _step_line(step: dict[str, Any]) -> str:
    args = ", ".join(f"{k}={step['args'][k]}" for k in sorted(step.get("args") or {}))
    return f"{step.get('instrument')} {step.get('command')}({args})"


def plan_diff(previous: dict[str, Any] | None, plan: dict[str, Any] | None) -> list[dict[str, str]]:
    """Steps removed (``-``) and added (``+``) against the plan before the edit; [] if none."""
    if not previous or not plan:
        return []
    old = [_step_line(s) for s in previous.get("steps") or []]
    new = [_step_line(s) for s in plan.get("steps") or []]
    out = []
    for line in difflib.unified_diff(old, new, lineterm="", n=0):
        if line.startswith(("---", "+++", "@@")):
            continue
        out.append({"op": line[0], "step": line[1:]})
    return out


def steps_table(run: dict[str, Any]) -> list[dict[str, Any]]:
    """Each plan step with its policy verdict and deciding rule, and how far it got."""
    plan = run.get("plan") or {}
    sim = run.get("simulation") or (run.get("question") or {}).get("simulation") or {}
    verdicts = {v["step"]: v for v in sim.get("verdicts") or []}
    extra = {v["step"]: v for v in sim.get("needs_approval") or []}
    done = {o["step_id"] for o in run.get("observations") or [] if o.get("ok")}
    failed = {o["step_id"] for o in run.get("observations") or [] if not o.get("ok")}
    current = run.get("step")
    rows = []
    for i, step in enumerate(plan.get("steps") or []):
        v = verdicts.get(step["id"], {})
        if step["id"] in done:
            state = "done"
        elif step["id"] in failed:
            state = "failed"
        elif run.get("status") in ("running", "waiting_person") and current == i:
            state = "current"
        else:
            state = "pending"
        rows.append(
            {
                "index": i,
                "id": step["id"],
                "instrument": step["instrument"],
                "command": step["command"],
                "args": ", ".join(f"{k}={_short(a)}" for k, a in (step.get("args") or {}).items()),
                "verdict": v.get("verdict", "unchecked"),
                "rule": v.get("rule") or "",
                "reason": v.get("reason") or "",
                "person": extra.get(step["id"], {}).get("reason", ""),
                "state": state,
            }
        )
    return rows


def _short(value: Any) -> str:
    if isinstance(value, list) and len(value) > 4:
        return f"{value[0]}..{value[-1]} ({len(value)})"
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return str(value)


def plate_locations(
    mover_state: dict[str, Any] | None, plan: dict[str, Any], simulation: dict[str, Any]
) -> dict[str, Any]:
    """Each plate's place before the run and after each step (plate moves from the events)."""
    where = {
        p: lw.get("location")
        for p, lw in ((mover_state or {}).get("labware") or {}).items()
        if lw.get("kind") == "plate"
    }
    predictions = {p["step_id"]: p for p in (simulation or {}).get("predictions") or []}
    steps = []
    for step in (plan or {}).get("steps") or []:
        for ev in (predictions.get(step["id"]) or {}).get("events", []):
            data = ev.get("data") or {}
            if ev.get("type") == "plate_moved" and data.get("plate"):
                where = {**where, str(data["plate"]): data.get("to")}
        steps.append(dict(where))
    initial = {
        p: lw.get("location")
        for p, lw in ((mover_state or {}).get("labware") or {}).items()
        if lw.get("kind") == "plate"
    }
    return {"initial": initial, "steps": steps}


def readings(report: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Readings per plate and mode: the last one as a heatmap grid, all of them as a series."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in (report or {}).get("readings") or []:
        groups.setdefault((str(r.get("plate")), str(r.get("mode"))), []).append(r)
    out = []
    for (plate, mode), series in groups.items():
        last = series[-1]
        values: dict[str, float] = {k: float(v) for k, v in (last.get("values") or {}).items()}
        rows = sorted({w[0] for w in values})
        cols = sorted({int(w[1:]) for w in values if w[1:].isdigit()})
        finite = [v for v in values.values() if v == v]  # NaN != NaN
        low, high = (min(finite), max(finite)) if finite else (0.0, 1.0)
        out.append(
            {
                "plate": plate,
                "mode": mode,
                "unit": last.get("unit", ""),
                "what": last.get("wavelength_nm")
                or f"{last.get('excitation_nm')}/{last.get('emission_nm')}",
                "simulated": last.get("simulated", True),
                "rows": rows,
                "cols": cols,
                "values": values,
                "low": low,
                "high": high,
                "series": [
                    {k: float(v) for k, v in (r.get("values") or {}).items()} for r in series
                ],
            }
        )
    return out
