"""People who may act on the lab, their roles, and the tokens that say who is asking.

One implementation serves every place a person decides: a task run's approval (web page,
HTTP API, CLI) and an instrument's pending action. A token is shown once, when it is made,
and only its SHA-256 is stored: tokens are 256 random bits (``secrets``), so a fast hash is
the right one (a slow password hash protects guessable secrets; these are not guessable).
Tokens are compared in constant time (``hmac.compare_digest``).

Roles and what they may do (:data:`PERMISSIONS`)::

    viewer    read, estop
    operator  read, estop, operate      (start runs, reject, ask for an edit, abort, cancel)
    approver  read, estop, operate, approve   (anything that lets an instrument move again:
                                               approve a plan or an instrument's action,
                                               answer an escalation with retry or skip)

Anyone who can be identified may press the e-stop: stopping is never a privilege.

Where people come from: the ``people`` table of the lab database holds names, roles and
token hashes. A lab file may name its people (a roster); when it does, only those names can
hold a token, with the role the file gives them (``roster`` argument). The person at the
terminal, who already holds the lab's state files, is :func:`local_operator`.

Errors::

    PeopleError                 (code)
     ├── InvalidPerson          INVALID_ARGUMENT: a bad name or role, or not on the roster
     ├── PersonExists           INVALID_ARGUMENT: the name holds a token already
     ├── UnknownPerson          INVALID_ARGUMENT: no such person to remove or rotate
     ├── NotAuthenticated       UNAUTHENTICATED: no token, or one nobody holds
     └── NotPermitted           FORBIDDEN: the person's role does not allow it
"""

from __future__ import annotations

import getpass
import hashlib
import hmac
import re
import secrets
import sqlite3
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, get_args

from state_store.audit import AuditLog

Role = Literal["approver", "operator", "viewer"]
Permission = Literal["read", "estop", "operate", "approve"]
ROLES: tuple[str, ...] = get_args(Role)
PERMISSIONS: dict[str, frozenset[str]] = {
    "viewer": frozenset({"read", "estop"}),
    "operator": frozenset({"read", "estop", "operate"}),
    "approver": frozenset({"read", "estop", "operate", "approve"}),
}
TOKEN_PREFIX = "lw_"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@\-]{0,63}$")
_MAX_TOKEN = 256
_DDL = (
    "CREATE TABLE IF NOT EXISTS people (name TEXT PRIMARY KEY, role TEXT NOT NULL,"
    " token_sha256 TEXT NOT NULL, created_at REAL NOT NULL, created_by TEXT NOT NULL)"
)


class PeopleError(Exception):
    """Base of this module's errors; ``code`` is a stable error code."""

    code = "INVALID_ARGUMENT"


class InvalidPerson(PeopleError):
    """A name or role that cannot be used (or a name the lab file's roster does not hold)."""


class PersonExists(PeopleError):
    """The name already holds a token (remove it first, or rotate its token)."""


class UnknownPerson(PeopleError):
    """No person of that name."""


class NotAuthenticated(PeopleError):
    """No token, or a token nobody holds."""

    code = "UNAUTHENTICATED"


class NotPermitted(PeopleError):
    """The person is known but their role does not allow the action."""

    code = "FORBIDDEN"


@dataclass(frozen=True)
class Person:
    """Who is asking: a name, a role, and how they were identified (``token``/``terminal``)."""

    name: str
    role: Role
    via: Literal["token", "terminal"] = "token"

    def may(self, permission: Permission) -> bool:
        return permission in PERMISSIONS[self.role]

    def require(self, permission: Permission) -> Person:
        """This person, or :class:`NotPermitted` when the role does not allow ``permission``."""
        if not self.may(permission):
            raise NotPermitted(f"{self.name} is a {self.role}: {permission} needs a higher role")
        return self

    @property
    def label(self) -> str:
        """How audit rows name the person: ``alice (approver)``, ``local:bob (terminal)``."""
        return f"{self.name} ({'terminal' if self.via == 'terminal' else self.role})"


def local_operator(name: str | None = None) -> Person:
    """The person at this machine's terminal: an approver, recorded as ``local:<login>``."""
    if name is None:
        try:
            name = getpass.getuser()
        except (KeyError, OSError):  # no login name (a container without a passwd entry)
            name = "operator"
    return Person(f"local:{name}", "approver", via="terminal")


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode("ascii")).hexdigest()


class People:
    """The ``people`` table; ``roster`` (name -> role) is the lab file's list, when it has one."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        roster: Mapping[str, str] | None = None,
        audit: AuditLog | None = None,
    ) -> None:
        self.conn = conn
        self.roster = dict(roster) if roster is not None else None
        self.audit = audit
        conn.execute(_DDL)
        for name, role in (self.roster or {}).items():
            _check(name, role)

    def add(self, name: str, role: str | None = None, *, by: Person | None = None) -> str:
        """Give ``name`` a token and return it; the token is never retrievable again.

        ``role`` may be left out when the roster names the person.
        """
        role = self._role_for(name, role)
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        try:
            self.conn.execute(
                "INSERT INTO people (name, role, token_sha256, created_at, created_by)"
                " VALUES (?,?,?,?,?)",
                (name, role, token_digest(token), time.time(), _who(by)),
            )
        except sqlite3.IntegrityError as exc:
            raise PersonExists(f"{name} already holds a token: remove or rotate it") from exc
        self._audit("people.add", name, role, by)
        return token

    def rotate(self, name: str, *, by: Person | None = None) -> str:
        """A new token for ``name``; the old one stops working at once."""
        person = self.get(name)
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        self.conn.execute(
            "UPDATE people SET token_sha256=? WHERE name=?", (token_digest(token), name)
        )
        self._audit("people.rotate", name, person.role, by)
        return token

    def remove(self, name: str, *, by: Person | None = None) -> Person:
        person = self.get(name)
        self.conn.execute("DELETE FROM people WHERE name=?", (name,))
        self._audit("people.remove", name, person.role, by)
        return person

    def get(self, name: str) -> Person:
        row = self.conn.execute("SELECT name, role FROM people WHERE name=?", (name,)).fetchone()
        if row is None:
            raise UnknownPerson(f"no person named {name!r} (see `labwright people list`)")
        return Person(row[0], self._effective_role(row[0], row[1]))

    def list(self) -> list[Person]:
        rows = self.conn.execute("SELECT name, role FROM people ORDER BY name").fetchall()
        return [Person(r[0], self._effective_role(r[0], r[1])) for r in rows]

    def authenticate(self, token: str | None) -> Person:
        """The person holding ``token``, or :class:`NotAuthenticated`.

        Every stored hash is compared (in constant time each), so the answer's timing says
        nothing about which or how many tokens exist. A person the lab file's roster no longer
        names is refused even with a valid token.
        """
        if not token:
            raise NotAuthenticated("a token is needed: `labwright people add NAME --role ...`")
        if not isinstance(token, str) or len(token) > _MAX_TOKEN or not token.isascii():
            raise NotAuthenticated("that token is not one Labwright issued")
        digest = token_digest(token)
        found: tuple[str, str] | None = None
        for name, role, stored in self.conn.execute(
            "SELECT name, role, token_sha256 FROM people"
        ).fetchall():
            if hmac.compare_digest(digest, stored) and found is None:
                found = (name, role)
        if found is None:
            raise NotAuthenticated("nobody holds that token")
        name, role = found
        if self.roster is not None and name not in self.roster:
            raise NotAuthenticated(f"{name} is not on the lab file's people list any more")
        return Person(name, self._effective_role(name, role))

    # ------------------------------------------------------------------ internals
    def _role_for(self, name: str, role: str | None) -> str:
        if self.roster is not None:
            if name not in self.roster:
                known = ", ".join(sorted(self.roster)) or "nobody"
                raise InvalidPerson(f"the lab file's people list does not name {name!r} ({known})")
            if role is not None and role != self.roster[name]:
                raise InvalidPerson(
                    f"the lab file makes {name} a {self.roster[name]}, not a {role}"
                )
            role = self.roster[name]
        if role is None:
            raise InvalidPerson(f"a role is needed for {name}: one of {', '.join(ROLES)}")
        _check(name, role)
        return role

    def _effective_role(self, name: str, stored: str) -> Role:
        """The roster's role wins over the stored one (the lab file is the authority)."""
        role = (self.roster or {}).get(name, stored)
        return role if role in ROLES else "viewer"  # type: ignore[return-value]

    def _audit(self, tool: str, name: str, role: str, by: Person | None) -> None:
        if self.audit is not None:
            self.audit.append(
                run_id="lab",
                agent=_who(by),
                tool=tool,
                args={"name": name, "role": role},
                decision_note=f"{tool.split('.')[1]} {name} as {role}",
            )


def _check(name: str, role: str) -> None:
    if not isinstance(name, str) or not _NAME.match(name):
        raise InvalidPerson(f"person name {name!r}: up to 64 letters, digits, _ . @ -")
    if role not in ROLES:
        raise InvalidPerson(f"role {role!r}: one of {', '.join(ROLES)}")


def _who(by: Person | None) -> str:
    return by.label if by is not None else local_operator().label
