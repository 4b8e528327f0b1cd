"""Fuzz the ``labwright`` command and the lab file: whatever a person types or writes, the
answer is a status (never an escaped exception, never status 70, the internal-error status)
and, for bad input (status 2), an error that starts with ``error:`` on one line (even for a
lab file failing several fields at once, or input full of control characters and markup).

The command runs in process (``labwright.cli.run``) on a lab in a temporary directory; the
commands that start servers or wait for runs (serve, run, demo, eval, events --follow) are
left out: their bad inputs have their own tests. ``make fuzz`` runs >= 10,000 cases each.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import yaml
from _fuzz import Tally, fuzz_settings
from conftest import LAB
from hypothesis import given
from hypothesis import strategies as st

from labwright.cli import INTERNAL_ERROR, run

COMMANDS: dict[str, tuple[list[str], list[str], list[str]]] = {
    # command: (positional arguments, options taking a value, flags)
    "check": ([], ["--config"], []),
    "simulate": (["protocol"], ["--config", "--instrument"], ["--json"]),
    "approve-action": (
        ["instrument", "action_id"],
        ["--token", "--hash", "--note", "--config"],
        ["--refuse"],
    ),
    "reset-estop": (["instrument"], ["--token", "--config"], []),
    "approvals": ([], ["--config"], ["--json"]),
    "world": ([], ["--config", "--labware"], []),
    "audit": (["run"], ["--config"], ["--verify"]),
    "approve": (["run_id"], ["--config", "--token", "--model"], ["--no-run"]),
    "reject": (["run_id"], ["--reason", "--config", "--token"], []),
    "resume": (["run_id"], ["--config", "--decision", "--model"], []),
    "runs": ([], ["--config", "--limit"], []),
    "show": (["run_id"], ["--config"], []),
    "events": (["run_id"], ["--config"], []),
    "people add": (["name"], ["--role", "--config", "--token"], []),
    "people rotate": (["name"], ["--config", "--token"], []),
    "people remove": (["name"], ["--config", "--token"], []),
    "people list": ([], ["--config"], []),
}
CLI = Tally("cli")
LABS = Tally("lab file")

_WORK = Path(tempfile.mkdtemp(prefix="labwright-fuzz-cli-"))


def _files() -> dict[str, Path]:
    """Files a fuzzed argument may name: a good lab, broken ones, protocols, nothing."""
    lab = dict(LAB, state_dir=str(_WORK / "state"))
    files = {
        "lab": _WORK / "lab.yaml",
        "broken-lab": _WORK / "broken.yaml",
        "binary": _WORK / "binary.yaml",
        "protocol": _WORK / "protocol.yaml",
        "bad-protocol": _WORK / "bad-protocol.yaml",
        "missing": _WORK / "missing.yaml",
        "directory": _WORK,
    }
    files["lab"].write_text(yaml.safe_dump(lab))
    files["broken-lab"].write_text("lab: [unclosed\n")
    files["binary"].write_bytes(b"\xff\xfe\x00lab")
    steps = [{"command": "pick_up_tips", "args": {"rack": "tips_1"}}]
    files["protocol"].write_text(yaml.safe_dump({"name": "p", "steps": steps}))
    files["bad-protocol"].write_text(json.dumps({"name": 1, "steps": [{"command": 7}]}))
    return files


FILES = _files()
surrogates = st.text(st.characters(categories=["Cs"]), min_size=1, max_size=2)
texts = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["lh1", "reader1", "a-1", "run-1", "approver", "viewer", "0", "-1", "1e9",
                     "", "--", "-", "--help", "alice", "retry", "abort", "bob@lab"]),
    st.builds(lambda a, s: a + s, st.text(max_size=4), surrogates),
    st.sampled_from(["[bold]x", "[/]", "[/nope]", "a\x1eb", "a\nb", "\x1b[31mred", "a\u2028b"]),
    st.integers(-(2**70), 2**70).map(str),
    st.sampled_from([str(p) for p in FILES.values()]),
)  # fmt: skip


@st.composite
def command_lines(draw: st.DrawFn) -> list[str]:
    name = draw(st.one_of(st.sampled_from(sorted(COMMANDS)), texts))
    positional, options, flags = COMMANDS.get(name, ([], [], []))
    argv = name.split(" ") if name in COMMANDS else [name]
    for _ in positional:
        if draw(st.integers(0, 5)):
            argv.append(draw(texts))
    for option in options:
        if draw(st.integers(0, 2)) == 0:
            value = draw(st.one_of(texts, st.sampled_from([str(p) for p in FILES.values()])))
            argv += [option, value]
    argv += [f for f in flags if draw(st.booleans())]
    if draw(st.integers(0, 5)) == 0:
        argv.insert(draw(st.integers(0, len(argv))), draw(texts))
    return argv


def _run(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    previous = os.environ.get("LABWRIGHT_CONFIG")
    os.environ["LABWRIGHT_CONFIG"] = str(FILES["lab"])
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = run(argv)
    finally:
        if previous is None:
            os.environ.pop("LABWRIGHT_CONFIG", None)
        else:
            os.environ["LABWRIGHT_CONFIG"] = previous
    return status, err.getvalue()


def _judge(argv: list[str], status: int, err: str, max_lines: int, tally: Tally) -> None:
    assert status != INTERNAL_ERROR, (argv, err)
    assert "Traceback" not in err, (argv, err)
    if status == 2 and err.strip():
        lines = [ln for ln in err.splitlines() if ln.strip()]
        assert lines[0].startswith(("error:", "Usage:", " Usage:")), (argv, err)
        assert len(lines) <= max_lines, (argv, err)
    tally.add(f"status {status}")


@fuzz_settings(small=60)
@given(argv=command_lines())
def test_any_command_line_gets_an_answer_never_an_internal_error(argv: list[str]) -> None:
    status, err = _run(argv)
    _judge(argv, status, err, 1, CLI)


# --------------------------------------------------------------------------- the lab file

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(), st.text(max_size=10),
    surrogates, st.sampled_from(["lh1", "liquid_handler", "plate_reader", "STARLetDeck", "A1"]),
)  # fmt: skip
values = st.recursive(
    scalars,
    lambda kids: st.one_of(
        st.lists(kids, max_size=3), st.dictionaries(st.text(max_size=8), kids, max_size=3)
    ),
    max_leaves=8,
)


def _paths(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(data, dict):
        for k, v in data.items():
            found += _paths(v, (*prefix, k))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            found += _paths(v, (*prefix, i))
    return found


def _set(data: Any, path: tuple[Any, ...], value: Any, delete: bool) -> Any:
    if not path:
        return value
    parent = data
    for key in path[:-1]:
        parent = parent[key]
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return data


@st.composite
def lab_texts(draw: st.DrawFn) -> bytes:
    """A lab file: the test lab with a few fields replaced or removed, or YAML oddities."""
    data = json.loads(json.dumps(dict(LAB, state_dir=str(_WORK / "lab-state"))))
    for _ in range(draw(st.integers(0, 3))):
        paths = _paths(data)
        path = draw(st.sampled_from(paths))
        data = _set(data, path, draw(values), delete=bool(path) and draw(st.booleans()))
    text = yaml.safe_dump(data, allow_unicode=True).encode("utf-8", "surrogatepass")
    shape = draw(st.integers(0, 9))
    if shape == 0:
        depth = draw(st.integers(30, 3000))
        text += b"extra: " + b"[" * depth + b"]" * depth + b"\n"
    elif shape == 1:
        text += b"a0: &a0 [x, x, x, x, x, x, x, x]\n" + b"".join(
            f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 8)}]\n".encode() for i in range(1, 9)
        )
    elif shape == 2:
        cut = draw(st.integers(0, len(text)))
        text = text[:cut] + draw(st.binary(max_size=6)) + text[cut:]
    return text


@fuzz_settings(small=30)
@given(text=lab_texts())
def test_any_lab_file_is_checked_with_an_answer_never_an_internal_error(text: bytes) -> None:
    path = _WORK / "fuzzed-lab.yaml"
    path.write_bytes(text)
    status, err = _run(["check", "--config", str(path)])
    assert status in (0, 2), (text[:300], err)
    _judge(["check"], status, err, 1, LABS)


def teardown_module() -> None:
    CLI.write()
    LABS.write()
