"""``labwright people add | list | remove | rotate``: who may approve, operate or watch."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from labwright.cli._common import ConfigOpt, fail, lab_of, out
from labwright.identity import cli_person, people_for
from state_store.people import ROLES, People, PeopleError, Person

people_app = typer.Typer(no_args_is_help=True, help="People and their tokens.")

TokenOpt = typer.Option(None, "--token", help="Act as this token's holder (else the terminal).")


@people_app.command("add")
def add(
    name: str = typer.Argument(..., help="Who (letters, digits, _ . @ -)."),
    role: str | None = typer.Option(None, "--role", help=f"One of {', '.join(ROLES)}."),
    config: Path | None = ConfigOpt,
    token: str | None = TokenOpt,
) -> None:
    """Give a person a token; it is printed once and only its hash is kept."""
    lab = lab_of(config)
    try:
        people = people_for(lab)
        issued = people.add(name, role, by=_manager(people, token))
        person = people.get(name)
    except PeopleError as exc:
        fail(f"{exc.code}: {exc}")
    out.print(f"[green]added[/] {person.name} as {person.role}; token (shown once, keep it):")
    print(issued)


@people_app.command("rotate")
def rotate(
    name: str = typer.Argument(...),
    config: Path | None = ConfigOpt,
    token: str | None = TokenOpt,
) -> None:
    """A new token for a person; the old one stops working at once."""
    lab = lab_of(config)
    try:
        people = people_for(lab)
        issued = people.rotate(name, by=_manager(people, token))
    except PeopleError as exc:
        fail(f"{exc.code}: {exc}")
    out.print(f"[green]new token[/] for {name} (shown once, keep it):")
    print(issued)


@people_app.command("remove")
def remove(
    name: str = typer.Argument(...),
    config: Path | None = ConfigOpt,
    token: str | None = TokenOpt,
) -> None:
    """Take a person's token away."""
    lab = lab_of(config)
    try:
        people = people_for(lab)
        gone = people.remove(name, by=_manager(people, token))
    except PeopleError as exc:
        fail(f"{exc.code}: {exc}")
    out.print(f"[green]removed[/] {gone.name} ({gone.role})")


@people_app.command("list")
def list_(config: Path | None = ConfigOpt) -> None:
    """People holding a token, and (when the lab file has a roster) those still without one."""
    lab = lab_of(config)
    people = people_for(lab)
    holders = {p.name: p for p in people.list()}
    table = Table("name", "role", "token")
    for p in holders.values():
        on_roster = lab.roster is None or p.name in lab.roster
        table.add_row(p.name, p.role, "yes" if on_roster else "refused (not on the roster)")
    for name, role in sorted((lab.roster or {}).items()):
        if name not in holders:
            table.add_row(name, role, "none yet")
    out.print(table)


def _manager(people: People, token: str | None) -> Person:
    """Who changes the people: an approver (by token) or the person at the terminal."""
    return cli_person(people, token).require("approve")
