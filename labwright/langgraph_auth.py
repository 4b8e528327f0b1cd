"""Who is asking LangGraph's own server: the lab's people and tokens (``langgraph.json`` auth).

Each request's ``Authorization: Bearer lw_...`` is checked against the people of the lab of
``$LABWRIGHT_CONFIG``; the person's permissions go with every run, where the approval node
signs an approval only for a person who may approve (anyone else's is void). Reading needs a
known person; creating, answering or changing anything needs ``operate``.
"""

from __future__ import annotations

import asyncio
import functools
import os
from typing import Any

from langgraph_sdk import Auth

from device_servers.lab import load
from labwright.identity import http_person, people_for
from state_store.people import PERMISSIONS, People, PeopleError

auth = Auth()


@functools.cache
def _people() -> People:
    return people_for(load(os.environ.get("LABWRIGHT_CONFIG") or None))


@auth.authenticate
async def authenticate(authorization: str | None) -> Auth.types.MinimalUserDict:
    try:  # the people table is SQLite: read it off the server's event loop
        person = await asyncio.to_thread(http_person, _people(), authorization)
    except PeopleError as exc:
        raise Auth.exceptions.HTTPException(status_code=401, detail=f"{exc.code}: {exc}") from exc
    return {
        "identity": person.name,
        "permissions": sorted(PERMISSIONS[person.role]),
        "display_name": f"{person.name} ({person.role})",
    }


@auth.on
async def by_role(ctx: Auth.types.AuthContext, value: Any) -> None:
    """Everyone identified reads; starting, answering or changing anything needs operate."""
    needed = "read" if ctx.action in ("read", "search") else "operate"
    if needed not in ctx.permissions:
        raise Auth.exceptions.HTTPException(
            status_code=403, detail=f"FORBIDDEN: {ctx.resource}.{ctx.action} needs {needed}"
        )
