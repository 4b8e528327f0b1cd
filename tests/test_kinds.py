"""The registry of instrument kinds: every kind is one folder that names its config model,
driver, rules file and prompts, and a kind that lacks its rules is refused before it serves."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from device_servers.contract import InstrumentBase
from device_servers.errors import ConfigurationError
from device_servers.kind import DriverBase, Kind, kind_of, kinds
from labwright.cli import app

ROOT = Path(__file__).resolve().parent.parent


def test_every_kind_names_a_driver_of_its_own_kind_and_an_existing_rules_file() -> None:
    assert set(kinds()) >= {"liquid_handler", "plate_reader", "heater_shaker", "plate_mover"}
    for name, kind in kinds().items():
        assert kind.name == name
        assert issubclass(kind.config, InstrumentBase)
        driver = kind.driver_class()
        assert issubclass(driver, DriverBase) and driver.kind == name
        assert kind.rules_file.exists(), kind.rules_file


def test_an_unknown_kind_is_a_configuration_error_naming_the_known_ones() -> None:
    with pytest.raises(ConfigurationError) as info:
        kind_of("incubator")
    assert "heater_shaker" in str(info.value)


def test_check_fails_for_a_kind_whose_rules_file_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "heater_shaker.yaml"
    hs = kinds()["heater_shaker"]
    monkeypatch.setitem(kinds(), "heater_shaker", Kind(hs.config, rules_file=missing))
    done = CliRunner().invoke(app, ["check", "--config", str(ROOT / "examples" / "lab.yaml")])
    assert done.exit_code == 2
    assert "Traceback" not in done.output
    assert str(missing) in "".join(done.output.split())


def test_check_passes_when_every_kind_has_its_rules() -> None:
    done = CliRunner().invoke(app, ["check", "--config", str(ROOT / "examples" / "lab.yaml")])
    assert done.exit_code == 0, done.output
