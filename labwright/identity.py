"""Who is asking: the one place the CLI and the HTTP server turn a token into a person.

- CLI: ``--token`` or ``$LABWRIGHT_PERSON_TOKEN`` names a person; without either, the person at the
  terminal is the local operator (``local:<login>``, an approver: they hold the lab's files).
- HTTP: ``Authorization: Bearer <token>``; no token, a wrong one or a removed person is
  ``UNAUTHENTICATED``, a role that does not allow the action is ``FORBIDDEN``.
"""

from __future__ import annotations

import os
import sqlite3

from device_servers.lab import LabConfig
from labwright.records import task_db
from state_store import AuditLog
from state_store.people import NotAuthenticated, People, Person, local_operator

TOKEN_ENV = "LABWRIGHT_PERSON_TOKEN"


def people_for(lab: LabConfig, conn: sqlite3.Connection | None = None) -> People:
    """The lab's people: its database's table, held to the lab file's roster when it has one."""
    conn = conn if conn is not None else task_db(lab)
    return People(conn, roster=lab.roster, audit=AuditLog(conn))


def cli_person(people: People, token: str | None = None) -> Person:
    """The person a CLI command acts as: the token's holder, else the local operator."""
    token = token if token is not None else os.environ.get(TOKEN_ENV) or None
    return local_operator() if token is None else people.authenticate(token)


def bearer_token(header: str | None) -> str | None:
    """The token of an ``Authorization: Bearer ...`` header (None when absent)."""
    if not header:
        return None
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        raise NotAuthenticated("the Authorization header must be `Bearer <token>`")
    return value.strip()


def http_person(people: People, authorization: str | None) -> Person:
    """The person behind an HTTP request's ``Authorization`` header."""
    return people.authenticate(bearer_token(authorization))
