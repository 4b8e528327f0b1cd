"""Resources of an instrument server: ``lab://<instrument>/state``, policy, labware, runs."""

from __future__ import annotations

from typing import Any

import mcp.types as types
from pydantic import AnyUrl

from device_servers.errors import DeviceError
from device_servers.runtime import InstrumentRuntime


def resource_json(rt: InstrumentRuntime, uri: str) -> dict[str, Any]:
    """The JSON behind one resource URI; ``ValueError`` for an unknown one."""
    prefix = f"lab://{rt.id}/"
    if not uri.startswith(prefix):
        raise ValueError(f"unknown resource {uri}")
    path = uri[len(prefix) :]
    if path == "state":
        return rt.state()
    if path == "policy":
        return {"instrument": rt.id, "rules": rt.policy.describe()}
    kind, _, ident = path.partition("/")
    if kind in ("labware", "tips") and ident:
        item = rt.driver.describe_labware(rt.twin, ident)
        if item is None or (kind == "tips") != (item.get("kind") == "tip_rack"):
            raise ValueError(f"no {kind} {ident!r} on {rt.id}")
        return {"id": ident, **item}
    if kind == "runs" and ident:
        try:
            return rt.get_run(ident)
        except DeviceError as exc:
            raise ValueError(exc.detail) from exc
    raise ValueError(f"unknown resource {uri}")


def resources(rt: InstrumentRuntime) -> list[types.Resource]:
    base = f"lab://{rt.id}"
    out = [
        types.Resource(
            uri=AnyUrl(f"{base}/state"),
            name="state",
            description="Twin snapshot",
            mimeType="application/json",
        ),
        types.Resource(
            uri=AnyUrl(f"{base}/policy"),
            name="policy",
            description="Safety rules enforced by this server",
            mimeType="application/json",
        ),
    ]
    for lw_id, lw in rt.twin.snapshot()["labware"].items():
        kind = "tips" if lw["kind"] == "tip_rack" else "labware"
        out.append(
            types.Resource(
                uri=AnyUrl(f"{base}/{kind}/{lw_id}"), name=lw_id, mimeType="application/json"
            )
        )
    return out


def templates(rt: InstrumentRuntime) -> list[types.ResourceTemplate]:
    base = f"lab://{rt.id}"
    return [
        types.ResourceTemplate(
            uriTemplate=f"{base}/labware/{{labware_id}}",
            name="labware",
            mimeType="application/json",
        ),
        types.ResourceTemplate(
            uriTemplate=f"{base}/tips/{{rack_id}}", name="tips", mimeType="application/json"
        ),
        types.ResourceTemplate(
            uriTemplate=f"{base}/runs/{{run_id}}", name="runs", mimeType="application/json"
        ),
    ]
