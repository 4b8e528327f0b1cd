"""What the LLM planner shows a model: the instruments with their plan commands (each server's
own tool list, runtime arguments removed) and the lab state, as escaped JSON."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from agents.task.planning.models import LabView
from device_servers.contract import COMMON_TOOLS

Tools = Mapping[str, Sequence[Mapping[str, Any]]]

# Server tools that are not plan steps: reading, run control, safety. A planner plans commands.
NOT_PLAN_STEPS = frozenset(COMMON_TOOLS)
RUNTIME_ARGS = frozenset({"dry_run", "action_id"})
# Command descriptions end with the server's note on dry_run/action_id; the runtime sets those,
# so the planner is not told how to pass them.
_EXEC_NOTE = re.compile(r"\s*dry_run defaults to true\b.*\Z", re.S)


def plan_commands(lab: LabView, tools: Tools) -> dict[str, dict[str, dict[str, Any] | None]]:
    """Instrument id -> its plan commands -> input schema without runtime args (None: unknown).

    The commands come from the instrument's tool list when there is one, else from its view.
    """
    out: dict[str, dict[str, dict[str, Any] | None]] = {}
    for iid, inst in lab.instruments.items():
        listed = tools.get(iid)
        if listed is None:
            out[iid] = {c: None for c in inst.commands if c not in NOT_PLAN_STEPS}
            continue
        out[iid] = {
            str(t["name"]): _plan_schema(t.get("inputSchema"))
            for t in listed
            if t.get("name") and t["name"] not in NOT_PLAN_STEPS
        }
    return out


# ---------------------------------------------------------------------- rendering the prompt
def _data(value: Any, depth: int = 2) -> str:
    """JSON with ``<``, ``>`` and ``&`` escaped: data cannot close its section or open another.

    The outer ``depth`` levels of objects and arrays get one item per line, the rest stays on
    one line: readable for the model without the token cost of indenting every schema.
    """
    text = _layout(value, depth, "")
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def _layout(value: Any, depth: int, pad: str) -> str:
    if depth <= 0 or not isinstance(value, dict | list) or not value:
        return json.dumps(value, ensure_ascii=False, default=str, separators=(", ", ": "))
    inner = pad + " "
    if isinstance(value, dict):
        items = [f"{inner}{json.dumps(str(k), ensure_ascii=False)}: " for k in value]
        parts = [
            k + _layout(v, depth - 1, inner) for k, v in zip(items, value.values(), strict=True)
        ]
        return "{\n" + ",\n".join(parts) + "\n" + pad + "}"
    parts = [inner + _layout(v, depth - 1, inner) for v in value]
    return "[\n" + ",\n".join(parts) + "\n" + pad + "]"


def _plan_schema(schema: Any) -> dict[str, Any] | None:
    if not isinstance(schema, Mapping):
        return None
    out = copy.deepcopy(dict(schema))
    out.pop("title", None)
    props = {k: v for k, v in out.get("properties", {}).items() if k not in RUNTIME_ARGS}
    out["properties"] = props
    if "required" in out:
        out["required"] = [r for r in out["required"] if r not in RUNTIME_ARGS]
    return out


def _instruments(lab: LabView, tools: Tools) -> dict[str, Any]:
    schemas = plan_commands(lab, tools)
    out: dict[str, Any] = {}
    for iid, inst in lab.instruments.items():
        listed = {str(t.get("name")): t for t in tools.get(iid, ())}
        commands: list[Any] = []
        for name, schema in schemas[iid].items():
            if name not in listed:
                commands.append(name)
                continue
            description = _EXEC_NOTE.sub("", str(listed[name].get("description") or ""))
            commands.append(
                {"name": name, "description": description, "input_schema": schema or {}}
            )
        out[iid] = {
            "kind": inst.kind,
            "location": inst.location,
            "limits": inst.limits,
            "commands": commands,
        }
    return out


def _lab_state(lab: LabView) -> dict[str, Any]:
    labware: dict[str, Any] = {}
    for lw in lab.labware.values():
        entry: dict[str, Any] = {
            "kind": lw.kind,
            "on": lw.instrument,
            "location": lw.location,
            "home": lw.home,
            "rows": lw.rows,
            "cols": lw.cols,
        }
        if lw.kind == "tip_rack":
            entry["tips_remaining"] = lw.tips_remaining
            if lw.tip_max_volume_ul:
                entry["tip_max_volume_ul"] = lw.tip_max_volume_ul
        else:
            entry["well_max_volume_ul"] = lw.well_max_volume_ul
            entry["wells"] = {
                name: {"volume_ul": w.volume_ul, "contents": w.contents}
                for name, w in lw.wells.items()
            }
        labware[lw.id] = entry
    occupied = {lw.location: lw.id for lw in lab.labware.values()}
    return {
        "labware": labware,
        "liquids": {
            name: [f"{lw}:{well} ({vol:g} uL)" for lw, well, vol in places]
            for name, places in lab.liquids().items()
        },
        "mover_locations": [
            {"location": loc, "holds": occupied.get(loc)} for loc in lab.mover_locations
        ],
        # How a plate reaches each place: what must hold, and which command makes it hold.
        "stations": [
            s.model_dump(mode="json", exclude_defaults=True) for s in lab.stations.values()
        ],
    }
