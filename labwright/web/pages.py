"""The page: server-rendered HTML (Jinja2, autoescaped), sign-in by token into a cookie."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from labwright.operations import OperationError, Operations
from labwright.web.api import error
from labwright.web.auth import COOKIE, person_of
from labwright.web.model import page_model
from state_store.people import NotAuthenticated, PeopleError, Person

TEMPLATES = Path(__file__).parent / "templates"


def _when(ts: Any) -> str:
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(ts)))
    except (TypeError, ValueError, OverflowError):
        return ""


class Pages:
    def __init__(self, ops: Operations, geometry: dict[str, Any], lab_name: str) -> None:
        self.ops = ops
        self.geometry = geometry
        self.lab_name = lab_name
        self.env = Environment(
            loader=FileSystemLoader(TEMPLATES),
            autoescape=select_autoescape(["html"]),
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.env.filters["when"] = _when

    def routes(self) -> list[Route]:
        return [
            Route("/", self.index, methods=["GET"]),
            Route("/runs/{run_id}", self.run, methods=["GET"]),
            Route("/login", self.login, methods=["POST"]),
            Route("/logout", self.logout, methods=["POST"]),
        ]

    def _render(self, name: str, person: Person | None, **context: Any) -> HTMLResponse:
        html = self.env.get_template(name).render(person=person, lab_name=self.lab_name, **context)
        return HTMLResponse(html, headers={"Cache-Control": "no-store"})

    def _person(self, request: Request) -> Person | None:
        try:
            return person_of(request, self.ops.people)
        except PeopleError:
            return None

    async def index(self, request: Request) -> Response:
        person = self._person(request)
        if person is None:
            return self._render("login.html", None, next="/")
        runs = self.ops.list_runs(50)
        return self._render("index.html", person, runs=runs, pending=self.ops.pending_actions())

    async def run(self, request: Request) -> Response:
        run_id = request.path_params["run_id"]
        person = self._person(request)
        if person is None:
            return self._render("login.html", None, next=f"/runs/{run_id}")
        try:
            model = await page_model(self.ops, run_id, self.geometry)
        except OperationError as exc:
            return HTMLResponse(f"<p>{exc.code}: no such run</p>", exc.status)
        obs = (model["run"].get("question") or {}).get("observation") or {}
        asked = (obs.get("instrument"), obs.get("action_id"))  # the record the run waits on
        pending = [
            p for p in self.ops.pending_actions() if (p["instrument"], p["action_id"]) == asked
        ]
        return self._render("run.html", person, m=model, pending=pending)

    async def login(self, request: Request) -> Response:
        try:
            body = json.loads(await request.body() or b"{}")
            token = body.get("token") if isinstance(body, dict) else None
            person = self.ops.people.authenticate(token if isinstance(token, str) else None)
        except (ValueError, UnicodeDecodeError):
            return error("INVALID_ARGUMENT", "the body is not JSON", 400)
        except NotAuthenticated as exc:
            return error(exc.code, str(exc), 401)
        response = JSONResponse({"name": person.name, "role": person.role})
        response.set_cookie(COOKIE, str(token), httponly=True, samesite="strict", path="/")
        return response

    async def logout(self, request: Request) -> Response:
        response = RedirectResponse("/", 303)
        response.delete_cookie(COOKIE, path="/")
        return response
