"""The lab as planners see it, built from what each instrument's server reports (get_state).

Where a plate is comes from the plate mover's belief when there is one (it is the instrument
that moves plates), else from the liquid handler's deck. Nothing here reads the simulated
world: agents know the lab only through the instruments.
"""

from __future__ import annotations

from typing import Any

from agents.task.planning.models import InstrumentView, LabView, LabwareView, WellView
from device_servers.contract import COMMON_TOOLS, Station
from policies import PolicyEngine

# Tools every device server has (planners plan instrument commands only): COMMON_TOOLS.


def _stations(state: dict[str, Any]) -> list[Station]:
    return [Station.model_validate(s) for s in state.get("stations") or []]


def _instrument(inst_id: str, state: dict[str, Any], tools: list[str]) -> InstrumentView:
    kind = str(state.get("kind", "?"))
    # Where a plate goes to be used by it: the place it publishes for loading one.
    location = next((s.place for s in _stations(state) if s.role == "load"), None)
    limits: dict[str, Any] = {}
    if "wavelength_range_nm" in state:
        limits["wavelength_range_nm"] = list(state["wavelength_range_nm"])
    limits.update(state.get("limits") or {})
    if kind == "liquid_handler" and state.get("channels"):
        limits["num_channels"] = len(state["channels"])
    return InstrumentView(
        id=inst_id,
        kind=kind,
        commands=[t for t in tools if t not in COMMON_TOOLS],
        location=location,
        limits=limits,
    )


def build_lab_view(
    states: dict[str, dict[str, Any]],
    tools: dict[str, list[str]],
    policies: dict[str, PolicyEngine] | None = None,
) -> LabView:
    """A LabView from every instrument's ``get_state``, tool names and policy rules."""
    instruments = {i: _instrument(i, s, tools.get(i, [])) for i, s in states.items()}
    for inst_id, engine in (policies or {}).items():
        if inst_id in instruments:
            instruments[inst_id].policy = engine.describe()
    mover_places: dict[str, str] = {}
    mover_locations: list[str] = []
    for state in states.values():
        if state.get("kind") == "plate_mover":
            mover_locations.extend(state.get("locations", {}))
            for plate, item in (state.get("labware") or {}).items():
                if item.get("location"):
                    mover_places[plate] = item["location"]
    labware: dict[str, LabwareView] = {}
    for inst_id, state in states.items():
        if state.get("kind") != "liquid_handler":
            continue
        for lw_id, item in (state.get("labware") or {}).items():
            home = item.get("location", "")
            here = home if item.get("present", True) else "unknown"
            labware[lw_id] = LabwareView(
                id=lw_id,
                kind=item["kind"],
                type=str(item.get("type") or ""),
                instrument=inst_id,
                location=mover_places.get(lw_id, here),
                home=home,
                rows=item.get("rows", 0),
                cols=item.get("cols", 0),
                well_max_volume_ul=float(item.get("well_max_volume_ul", 0.0)),
                wells={
                    n: WellView(volume_ul=w["volume_ul"], contents=w.get("contents", {}))
                    for n, w in (item.get("wells") or {}).items()
                },
                tips_remaining=int(item.get("tips_remaining", 0)),
                tip_max_volume_ul=float(item.get("tip_max_volume_ul", 0.0)),
                tip_spots=list(item.get("tips_present") or []),
            )
    stations = {s.place: s for state in states.values() for s in _stations(state)}
    return LabView(
        instruments=instruments,
        labware=labware,
        mover_locations=mover_locations,
        stations=stations,
    )
