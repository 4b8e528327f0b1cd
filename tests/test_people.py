"""People and tokens: shown once, stored hashed, compared in constant time, held to roles and
to the lab file's roster. Every refusal is a stable code."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from labwright.identity import bearer_token, cli_person, http_person
from state_store import AuditLog, connect
from state_store.people import (
    InvalidPerson,
    NotAuthenticated,
    NotPermitted,
    People,
    PersonExists,
    UnknownPerson,
    local_operator,
)


@pytest.fixture
def conn(tmp_path: Path) -> sqlite3.Connection:
    return connect(tmp_path / "lab.sqlite")


def test_a_token_is_returned_once_and_only_its_hash_is_stored(
    conn: sqlite3.Connection, tmp_path: Path
) -> None:
    token = People(conn).add("alice", "approver")
    assert token.startswith("lw_") and len(token) > 40
    conn.execute("PRAGMA wal_checkpoint(FULL)")
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("lab.sqlite*"))
    assert token.encode() not in raw
    assert People(conn).authenticate(token).name == "alice"


def test_two_people_get_different_tokens_and_each_names_its_holder(
    conn: sqlite3.Connection,
) -> None:
    people = People(conn)
    a, b = people.add("alice", "approver"), people.add("bob", "viewer")
    assert a != b
    assert people.authenticate(a).role == "approver"
    assert people.authenticate(b).name == "bob"


@pytest.mark.parametrize(
    "token",
    [None, "", "lw_wrong", "lw_" + "x" * 43, "lw_é", "x" * 10_000, "lw_\ud800"],
)
def test_a_missing_wrong_or_malformed_token_is_unauthenticated(
    conn: sqlite3.Connection, token: str | None
) -> None:
    People(conn).add("alice", "approver")
    with pytest.raises(NotAuthenticated) as exc:
        People(conn).authenticate(token)
    assert exc.value.code == "UNAUTHENTICATED"


def test_a_removed_person_s_token_stops_working(conn: sqlite3.Connection) -> None:
    people = People(conn)
    token = people.add("alice", "operator")
    assert people.remove("alice").role == "operator"
    with pytest.raises(NotAuthenticated):
        people.authenticate(token)
    with pytest.raises(UnknownPerson):
        people.remove("alice")


def test_rotating_a_token_voids_the_old_one(conn: sqlite3.Connection) -> None:
    people = People(conn)
    old = people.add("alice", "approver")
    new = people.rotate("alice")
    assert people.authenticate(new).name == "alice"
    with pytest.raises(NotAuthenticated):
        people.authenticate(old)


def test_a_name_holds_one_token(conn: sqlite3.Connection) -> None:
    people = People(conn)
    people.add("alice", "approver")
    with pytest.raises(PersonExists):
        people.add("alice", "viewer")


@pytest.mark.parametrize(
    ("name", "role"),
    [
        ("alice", "admin"),
        ("alice", None),
        ("", "viewer"),
        ("local:me", "approver"),
        ("a b", "viewer"),
    ],
)
def test_bad_names_and_roles_are_refused(
    conn: sqlite3.Connection, name: str, role: str | None
) -> None:
    with pytest.raises(InvalidPerson) as exc:
        People(conn).add(name, role)
    assert exc.value.code == "INVALID_ARGUMENT"


def test_roles_allow_what_they_say_and_nothing_more(conn: sqlite3.Connection) -> None:
    people = People(conn)
    viewer = people.authenticate(people.add("v", "viewer"))
    operator = people.authenticate(people.add("o", "operator"))
    approver = people.authenticate(people.add("a", "approver"))
    assert [viewer.may(p) for p in ("read", "estop", "operate", "approve")] == [
        True,
        True,
        False,
        False,
    ]
    assert [operator.may(p) for p in ("read", "estop", "operate", "approve")] == [
        True,
        True,
        True,
        False,
    ]
    assert all(approver.may(p) for p in ("read", "estop", "operate", "approve"))
    with pytest.raises(NotPermitted) as exc:
        viewer.require("approve")
    assert exc.value.code == "FORBIDDEN"
    with pytest.raises(NotPermitted):
        operator.require("approve")


def test_the_roster_decides_who_may_hold_a_token_and_with_which_role(
    conn: sqlite3.Connection,
) -> None:
    roster = People(conn, roster={"alice": "approver", "bob": "viewer"})
    assert roster.authenticate(roster.add("alice")).role == "approver"
    with pytest.raises(InvalidPerson):
        roster.add("mallory", "approver")  # not on the roster
    with pytest.raises(InvalidPerson):
        roster.add("bob", "approver")  # the roster makes bob a viewer


def test_a_person_dropped_from_the_roster_is_refused_and_a_demotion_applies_at_once(
    conn: sqlite3.Connection,
) -> None:
    carol = People(conn).add("carol", "approver")
    dave = People(conn).add("dave", "approver")
    later = People(conn, roster={"dave": "viewer"})
    with pytest.raises(NotAuthenticated):
        later.authenticate(carol)
    assert later.authenticate(dave).role == "viewer"


def test_changes_to_people_are_audited_with_who_made_them(conn: sqlite3.Connection) -> None:
    audit = AuditLog(conn)
    people = People(conn, audit=audit)
    admin = people.authenticate(people.add("admin", "approver"))
    people.add("bob", "viewer", by=admin)
    people.remove("bob", by=admin)
    rows = [(e.tool, e.agent, e.args["name"]) for e in audit.entries("lab")]
    assert rows[1:] == [
        ("people.add", "admin (approver)", "bob"),
        ("people.remove", "admin (approver)", "bob"),
    ]
    assert rows[0][1].startswith("local:")
    assert audit.verify().ok


def test_the_terminal_is_the_local_operator_unless_a_token_names_someone(
    conn: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    people = People(conn)
    token = people.add("vera", "viewer")
    monkeypatch.delenv("LABWRIGHT_PERSON_TOKEN", raising=False)
    me = cli_person(people)
    assert me == local_operator() and me.via == "terminal" and me.may("approve")
    assert cli_person(people, token).name == "vera"
    monkeypatch.setenv("LABWRIGHT_PERSON_TOKEN", token)
    assert cli_person(people).role == "viewer"
    monkeypatch.setenv("LABWRIGHT_PERSON_TOKEN", "lw_nobody")
    with pytest.raises(NotAuthenticated):
        cli_person(people)


def test_http_requests_name_their_person_by_bearer_token(conn: sqlite3.Connection) -> None:
    people = People(conn)
    token = people.add("alice", "operator")
    assert http_person(people, f"Bearer {token}").name == "alice"
    assert bearer_token(None) is None
    for header in (None, "", f"Basic {token}", "Bearer ", token):
        with pytest.raises(NotAuthenticated):
            http_person(people, header)
