"""The Starlette application: the API, the page, its static files, host checking."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from labwright.operations import Operations
from labwright.web.api import Api
from labwright.web.hub import Hub
from labwright.web.pages import Pages

STATIC = Path(__file__).parent / "static"


def create_app(
    ops: Operations,
    hub: Hub,
    geometry: dict[str, Any],
    *,
    lab_name: str,
    allowed_hosts: list[str] | None = None,
) -> Starlette:
    """The web application. ``allowed_hosts``: Host header values accepted (DNS rebinding)."""
    api = Api(ops, hub, geometry)
    pages = Pages(ops, geometry, lab_name)
    routes: list[Any] = [
        *api.routes(),
        *pages.routes(),
        Mount("/static", StaticFiles(directory=STATIC)),
    ]
    hosts = allowed_hosts or ["127.0.0.1", "localhost"]
    return Starlette(
        routes=routes, middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=hosts)]
    )
