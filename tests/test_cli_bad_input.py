"""Every bad input to the ``labwright`` command is one line naming what is wrong: never a
traceback, never a silent success. Bounded YAML, backend class paths checked before any
import, usage errors without the usage block.

Most calls run the command in process (``labwright.cli.run``); one goes through the real
entry point with bytes that are not UTF-8 in its arguments.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import ROOT, write_lab

from labwright.cli import run

Patch = Callable[[dict[str, Any]], None]
CHATTERBOX = "pylabrobot.liquid_handling.backends.chatterbox.LiquidHandlerChatterboxBackend"


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    """Run the command in process; its status and its stderr (asserted one line when not 0)."""
    status = run(list(argv))
    captured = capsys.readouterr()
    if status != 0:
        assert "Traceback" not in captured.err + captured.out
        lines = [ln for ln in captured.err.splitlines() if ln.strip()]
        assert len(lines) == 1, captured.err
    return status, captured.err


def lab_with(tmp: Path, patch: Patch) -> Path:
    return write_lab(tmp, patch)


def _bomb(levels: int = 9, width: int = 10) -> str:
    lines = ["x0: &x0 [" + ", ".join(["leaf"] * width) + "]"]
    for i in range(1, levels):
        lines.append(f"x{i}: &x{i} [" + ", ".join([f"*x{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- YAML


def test_an_alias_bomb_in_a_lab_file_is_refused_before_it_expands(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lab_file = write_lab(tmp_path)
    data = yaml.safe_load(lab_file.read_text())
    text = yaml.safe_dump(data) + _bomb()
    # The bomb goes where the attack put it: a fault's params (free-form, so it validates).
    text = text.replace(
        "    kind: liquid_handler\n",
        "    kind: liquid_handler\n    faults:\n    - kind: delay\n      params: {bomb: *x8}\n",
        1,
    )
    lab_file.write_text(text)
    status, err = cli(capsys, "check", "--config", str(lab_file))
    assert status == 2 and "values" in err


@pytest.mark.parametrize("depth", [65, 500, 5000])
def test_a_lab_file_nested_too_deep_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], depth: int
) -> None:
    lab_file = tmp_path / "lab.yaml"
    lab_file.write_text("lab: deep\ninstruments: " + "[" * depth + "]" * depth + "\n")
    status, err = cli(capsys, "check", "--config", str(lab_file))
    assert status == 2 and "nested" in err


def test_a_lab_file_that_is_not_utf8_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lab_file = write_lab(tmp_path)
    lab_file.write_bytes(lab_file.read_bytes().replace(b"test-lab", b"test-\xff\xfelab"))
    status, err = cli(capsys, "check", "--config", str(lab_file))
    assert status == 2 and "UTF-8" in err


def test_a_protocol_file_that_is_not_utf8_is_one_line(
    tmp_path: Path, lab_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    protocol = tmp_path / "p.yaml"
    protocol.write_bytes(b"name: caf\xe9\nsteps: []\n")
    status, err = cli(capsys, "simulate", str(protocol), "--config", str(lab_file))
    assert status == 2 and "UTF-8" in err


def test_a_rules_file_alias_bomb_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text(_bomb() + "rules: []\n")

    def patch(lab: dict[str, Any]) -> None:
        lab["instruments"][0]["policy"]["rules_file"] = str(rules)

    status, _ = cli(capsys, "check", "--config", str(lab_with(tmp_path, patch)))
    assert status == 2


# --------------------------------------------------------------------------- class_path


@pytest.mark.parametrize(
    "class_path", ["os.system", "subprocess.Popen", "builtins.eval", "pylabrobotx.evil.Cls"]
)
def test_a_backend_class_outside_the_allowed_packages_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], class_path: str
) -> None:
    def patch(lab: dict[str, Any]) -> None:
        lab["instruments"][0]["backend"] = {"type": "pylabrobot", "class_path": class_path}

    status, err = cli(capsys, "check", "--config", str(lab_with(tmp_path, patch)))
    assert status == 2 and "class_path" in err


def _side_effect_package(tmp: Path) -> tuple[Path, Path]:
    """A package whose import leaves a marker file: proof that it was (not) imported."""
    marker = tmp / "imported.marker"
    pkg = tmp / "sitepkgs" / "labbackends"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "drivers.py").write_text(
        f"open({str(marker)!r}, 'w').close()\nclass NotABackend:\n    pass\n"
    )
    return tmp / "sitepkgs", marker


def _not_a_backend(tmp: Path, monkeypatch: pytest.MonkeyPatch, **backend: Any) -> tuple[Path, Path]:
    """A lab whose liquid handler names the side-effect package's class (and its marker)."""
    path, marker = _side_effect_package(tmp)
    monkeypatch.syspath_prepend(str(path))

    def patch(lab: dict[str, Any]) -> None:
        lab["instruments"][0]["backend"] = {
            "type": "pylabrobot",
            "class_path": "labbackends.drivers.NotABackend",
            **backend,
        }

    return lab_with(tmp, patch), marker


def test_a_class_path_is_refused_before_its_module_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    lab_file, marker = _not_a_backend(tmp_path, monkeypatch)
    for command in ("check", "serve"):
        status, err = cli(
            capsys, command, *(["lh1"] if command == "serve" else []), "--config", str(lab_file)
        )
        assert status == 2 and "allowed" in err, command
    assert not marker.exists()


def test_an_allowed_package_is_imported_and_type_checked_by_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    lab_file, marker = _not_a_backend(tmp_path, monkeypatch, allowed_packages=["labbackends"])
    status, err = cli(capsys, "check", "--config", str(lab_file))
    assert status == 2 and "LiquidHandlerBackend" in err
    assert marker.exists()  # allowed, so imported: and then found not to be a backend


def test_a_pylabrobot_backend_class_passes_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def patch(lab: dict[str, Any]) -> None:
        lab["instruments"][0]["backend"] = {"type": "pylabrobot", "class_path": CHATTERBOX}

    status, err = cli(capsys, "check", "--config", str(lab_with(tmp_path, patch)))
    assert status == 0, err


# --------------------------------------------------------------------------- arguments


@pytest.mark.parametrize(
    "argv",
    [
        ["serve", "lh1", "--port", "99999"],
        ["serve", "lh1", "--port", "0"],
        ["serve", "lh1", "--port", "http"],
        ["check", "--no-such-option"],
        ["no-such-command"],
        ["audit"],
        ["runs", "--limit", "many"],
    ],
    ids=" ".join,
)
def test_a_usage_error_is_one_line_with_status_2(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    status, err = cli(capsys, *argv)
    assert status == 2 and err.startswith("error:")


def test_a_request_that_is_not_utf8_is_one_line_through_the_real_entry_point(
    lab_file: Path,
) -> None:
    done = subprocess.run(
        [sys.executable.encode(), b"-m", b"labwright", b"run", b"add 50 uL \xff\xfe to plate_1 A1",
         b"--config", os.fsencode(lab_file)],
        capture_output=True, timeout=60, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 2
    err = done.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "UTF-8" in err
