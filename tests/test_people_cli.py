"""``labwright people``: a token printed once, a list, removal, and one-line refusals."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write_lab
from typer.testing import CliRunner

from device_servers.lab import load
from labwright.cli import app
from labwright.identity import people_for


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.delenv("LABWRIGHT_PERSON_TOKEN", raising=False)
    return CliRunner()


def token_of(output: str) -> str:
    lines = [ln for ln in output.splitlines() if ln.startswith("lw_")]
    assert len(lines) == 1, output
    return lines[0]


def test_people_add_prints_a_token_that_names_the_person(cli: CliRunner, lab_file: Path) -> None:
    got = cli.invoke(app, ["people", "add", "alice", "--role", "approver", "-c", str(lab_file)])
    assert got.exit_code == 0, got.output
    person = people_for(load(lab_file)).authenticate(token_of(got.output))
    assert (person.name, person.role) == ("alice", "approver")
    listed = cli.invoke(app, ["people", "list", "-c", str(lab_file)])
    assert "alice" in listed.output and token_of(got.output) not in listed.output


def test_only_an_approver_or_the_terminal_changes_the_people(
    cli: CliRunner, lab_file: Path
) -> None:
    viewer = token_of(
        cli.invoke(app, ["people", "add", "vic", "--role", "viewer", "-c", str(lab_file)]).output
    )
    got = cli.invoke(
        app, ["people", "add", "eve", "--role", "approver", "-c", str(lab_file), "--token", viewer]
    )
    assert got.exit_code == 2 and "FORBIDDEN" in got.output
    assert [p.name for p in people_for(load(lab_file)).list()] == ["vic"]


def test_people_remove_takes_the_token_away(cli: CliRunner, lab_file: Path) -> None:
    token = token_of(
        cli.invoke(app, ["people", "add", "bob", "--role", "operator", "-c", str(lab_file)]).output
    )
    assert cli.invoke(app, ["people", "remove", "bob", "-c", str(lab_file)]).exit_code == 0
    again = cli.invoke(app, ["people", "remove", "bob", "-c", str(lab_file)])
    assert again.exit_code == 2
    with pytest.raises(Exception, match="nobody holds"):
        people_for(load(lab_file)).authenticate(token)


@pytest.mark.parametrize(
    "args",
    [
        ["people", "add", "alice", "--role", "admin"],
        ["people", "add", "alice"],
        ["people", "add", "bad name", "--role", "viewer"],
        ["people", "rotate", "nobody"],
        ["people", "add", "x", "--role", "viewer", "--token", "lw_wrong"],
    ],
)
def test_bad_people_commands_fail_in_one_line(
    cli: CliRunner, lab_file: Path, args: list[str]
) -> None:
    got = cli.invoke(app, [*args, "-c", str(lab_file)])
    assert got.exit_code == 2, got.output
    assert got.exception is None or isinstance(got.exception, SystemExit)
    assert "Traceback" not in got.output and got.output.count("error:") == 1


def test_the_lab_file_roster_gives_the_role(cli: CliRunner, tmp_path: Path) -> None:
    lab_file = write_lab(tmp_path, lambda d: d.update(people=[{"name": "ann", "role": "approver"}]))
    got = cli.invoke(app, ["people", "add", "ann", "-c", str(lab_file)])
    assert got.exit_code == 0, got.output
    assert people_for(load(lab_file)).authenticate(token_of(got.output)).role == "approver"
    stranger = cli.invoke(app, ["people", "add", "zed", "--role", "viewer", "-c", str(lab_file)])
    assert stranger.exit_code == 2
