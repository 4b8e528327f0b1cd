"""The ``labwright`` command as a person uses it: config errors name the file and the field
(never a traceback), protocols simulate without a server, and ``world`` shows ground truth.

Every CLI call here is a real subprocess.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml
from conftest import ROOT, call, labwright, write_lab
from mcp.shared.memory import create_connected_server_and_client_session

from device_servers.factory import open_runtime
from device_servers.lab import ConfigError, load
from device_servers.server import build_server

SERIAL_DILUTION = ROOT / "examples" / "protocols" / "serial_dilution.yaml"
EXAMPLE_LAB = ROOT / "examples" / "lab.yaml"

Patch = Callable[[dict[str, Any]], None]

# Nearly every test runs the real command in a subprocess.
pytestmark = pytest.mark.slow


def flat(text: str) -> str:
    """Text without whitespace: rich folds long lines (paths) at the terminal width."""
    return "".join(text.split())


def check(lab_file: Path) -> tuple[int, str]:
    done = labwright("check", "--config", str(lab_file))
    assert "Traceback" not in done.stderr + done.stdout
    return done.returncode, flat(done.stderr)


def inst(data: dict[str, Any]) -> dict[str, Any]:
    return dict(data["instruments"][0])


# --------------------------------------------------------------------------- lab file errors


def test_a_valid_lab_file_checks_ok(lab_file: Path) -> None:
    done = labwright("check", "--config", str(lab_file))
    assert done.returncode == 0, done.stderr
    assert "lh1" in done.stdout


def test_example_lab_file_checks_ok() -> None:
    assert labwright("check", "--config", str(EXAMPLE_LAB)).returncode == 0


def test_lab_file_that_is_not_yaml_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "lab.yaml"
    bad.write_text("lab: x\ninstruments: [\n  {id: lh1\n")
    code, stderr = check(bad)
    assert code == 2
    assert flat(str(bad)) in stderr


def test_missing_lab_file_names_the_file(tmp_path: Path) -> None:
    code, stderr = check(tmp_path / "absent.yaml")
    assert code == 2
    assert flat(str(tmp_path / "absent.yaml")) in stderr


def test_lab_file_without_instruments_names_the_field(tmp_path: Path) -> None:
    bad = tmp_path / "lab.yaml"
    bad.write_text("lab: empty-lab\n")
    code, stderr = check(bad)
    assert code == 2
    assert flat(str(bad)) in stderr and "instruments" in stderr


def test_empty_instrument_list_names_the_field(tmp_path: Path) -> None:
    code, stderr = check(write_lab(tmp_path, lambda d: d.update(instruments=[])))
    assert code == 2
    assert "instruments" in stderr


def test_unknown_instrument_kind_names_the_instrument_and_kind(tmp_path: Path) -> None:
    def patch(data: dict[str, Any]) -> None:
        data["instruments"][0]["kind"] = "centrifuge"

    lab_file = write_lab(tmp_path, patch)
    code, stderr = check(lab_file)
    assert code == 2
    assert flat(str(lab_file)) in stderr
    assert "instruments.0" in stderr and "kind" in stderr


def test_duplicate_instrument_ids_name_the_second_one(tmp_path: Path) -> None:
    def patch(data: dict[str, Any]) -> None:
        twin = inst(data)
        twin["labware"] = []
        twin["liquids"] = []
        data["instruments"].append(twin)

    lab_file = write_lab(tmp_path, patch)
    code, stderr = check(lab_file)
    assert code == 2
    assert flat(str(lab_file)) in stderr and "instruments[1].id" in stderr


def test_unknown_field_on_an_instrument_is_refused_by_name(tmp_path: Path) -> None:
    def patch(data: dict[str, Any]) -> None:
        data["instruments"][0]["num_chanels"] = 8

    code, stderr = check(write_lab(tmp_path, patch))
    assert code == 2
    assert "num_chanels" in stderr


def test_unknown_pylabrobot_labware_name_names_the_file_and_labware_entry(tmp_path: Path) -> None:
    def patch(data: dict[str, Any]) -> None:
        data["instruments"][0]["labware"][2]["type"] = "no_such_plate_96"

    lab_file = write_lab(tmp_path, patch)
    code, stderr = check(lab_file)
    assert code == 2
    assert flat(str(lab_file)) in stderr
    assert "instruments[0]" in stderr and "labware[2].type" in stderr
    assert "no_such_plate_96" in stderr


def test_unknown_pylabrobot_carrier_name_names_the_carrier_entry(tmp_path: Path) -> None:
    def patch(data: dict[str, Any]) -> None:
        data["instruments"][0]["carriers"][1]["type"] = "NOT_A_CARRIER"

    code, stderr = check(write_lab(tmp_path, patch))
    assert code == 2
    assert "carriers[1].type" in stderr


def test_labware_on_an_unknown_carrier_names_the_labware_entry(tmp_path: Path) -> None:
    def patch(data: dict[str, Any]) -> None:
        data["instruments"][0]["labware"][0]["carrier"] = "nowhere"

    code, stderr = check(write_lab(tmp_path, patch))
    assert code == 2
    assert "labware[0].carrier" in stderr


def test_liquid_overflowing_its_well_names_the_liquid_entry(tmp_path: Path) -> None:
    def patch(data: dict[str, Any]) -> None:
        data["instruments"][0]["liquids"][1]["volume_ul"] = 500  # a 360 uL well

    lab_file = write_lab(tmp_path, patch)
    code, stderr = check(lab_file)
    assert code == 2
    assert flat(str(lab_file)) in stderr and "liquids[1].volume_ul" in stderr


def test_liquid_well_range_off_the_plate_grid_names_the_liquid_entry(tmp_path: Path) -> None:
    def patch(data: dict[str, Any]) -> None:
        data["instruments"][0]["liquids"][1]["wells"] = "A1:A13"

    code, stderr = check(write_lab(tmp_path, patch))
    assert code == 2
    assert "liquids[1].wells" in stderr


def test_liquid_on_unknown_labware_names_the_liquid_entry(tmp_path: Path) -> None:
    def patch(data: dict[str, Any]) -> None:
        data["instruments"][0]["liquids"][0]["labware"] = "ghost"

    code, stderr = check(write_lab(tmp_path, patch))
    assert code == 2
    assert "liquids[0].labware" in stderr


def test_bad_policy_override_names_the_rule(tmp_path: Path) -> None:
    def patch(data: dict[str, Any]) -> None:
        data["instruments"][0]["policy"]["rules"] = [{"id": "x", "type": "teleport"}]

    code, stderr = check(write_lab(tmp_path, patch))
    assert code == 2
    assert "instruments[0]" in stderr and "policy.rules[0]" in stderr


def test_relative_rules_file_is_found_beside_the_lab_file_from_any_directory(
    tmp_path: Path,
) -> None:
    (tmp_path / "strict.yaml").write_text(
        yaml.safe_dump(
            {
                "kind": "liquid_handler",
                "rules": [{"id": "strict_cap", "type": "limit", "arg": "volume_ul", "max": 5}],
            }
        )
    )

    def patch(data: dict[str, Any]) -> None:
        data["instruments"][0]["policy"]["rules_file"] = "strict.yaml"

    lab_file = write_lab(tmp_path, patch)
    code, stderr = check(lab_file)  # the subprocess runs in the repository, not in tmp_path
    assert code == 0, stderr
    assert load(lab_file).instrument("lh1").policy.rules_file == str(tmp_path / "strict.yaml")


def test_missing_rules_file_names_the_instrument_and_the_file(tmp_path: Path) -> None:
    def patch(data: dict[str, Any]) -> None:
        data["instruments"][0]["policy"]["rules_file"] = "absent_rules.yaml"

    code, stderr = check(write_lab(tmp_path, patch))
    assert code == 2
    assert "instruments[0]" in stderr and "absent_rules.yaml" in stderr


def test_config_loader_raises_config_error_naming_the_field(tmp_path: Path) -> None:
    def patch(data: dict[str, Any]) -> None:
        data["instruments"][0]["command_timeout_s"] = -1

    lab_file = write_lab(tmp_path, patch)
    with pytest.raises(ConfigError) as info:
        load(lab_file)
    assert str(lab_file) in str(info.value)
    assert "command_timeout_s" in str(info.value)


# --------------------------------------------------------------------------- simulate


def test_simulating_the_serial_dilution_example_reports_ok_as_json() -> None:
    done = labwright("simulate", str(SERIAL_DILUTION), "--config", str(EXAMPLE_LAB), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    steps = yaml.safe_load(SERIAL_DILUTION.read_text())["steps"]
    assert report["ok"] is True and report["simulated"] is True
    assert report["steps"] == len(steps)
    assert report["dispensed_ul"]["dye"] > 0 and report["dispensed_ul"]["buffer"] > 0


def test_simulating_moves_nothing_and_creates_no_state(tmp_path: Path, lab_file: Path) -> None:
    protocol = tmp_path / "p.yaml"
    protocol.write_text(
        yaml.safe_dump(
            {
                "name": "one",
                "steps": [
                    {
                        "command": "transfer",
                        "args": {
                            "source": "reservoir",
                            "source_well": "A1",
                            "destination": "plate_1",
                            "destination_wells": ["A1"],
                            "volume_ul": 50,
                        },
                    }
                ],
            }
        )
    )
    done = labwright("simulate", str(protocol), "--config", str(lab_file), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["ok"] is True
    assert not (tmp_path / "state").exists()


@pytest.mark.parametrize(
    ("steps", "code"),
    [
        (
            [
                {
                    "command": "aspirate",
                    "args": {"labware": "reservoir", "wells": ["A1"], "volume_ul": 10},
                }
            ],
            "NO_TIP",
        ),
        ([{"command": "teleport", "args": {}}], "INVALID_ARGUMENT"),
        (
            [
                {
                    "command": "transfer",
                    "args": {
                        "source": "reservoir",
                        "source_well": "A1",
                        "destination": "plate_1",
                        "destination_wells": ["A1"],
                        "volume_ul": 1500,
                    },
                }
            ],
            "POLICY_DENIED",
        ),
        ([{"command": "pick_up_tips", "args": {"rack": "tips_9"}}], "UNKNOWN_LABWARE"),
        ([{"command": "mix", "args": {"labware": "plate_1", "well": "B1"}}], "INVALID_ARGUMENT"),
    ],
)
def test_a_broken_protocol_exits_1_with_the_error_code(
    tmp_path: Path, lab_file: Path, steps: list[dict[str, Any]], code: str
) -> None:
    protocol = tmp_path / "broken.yaml"
    protocol.write_text(yaml.safe_dump({"name": "broken", "steps": steps}))
    done = labwright("simulate", str(protocol), "--config", str(lab_file), "--json")
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] is False and report["error"]["code"] == code
    human = labwright("simulate", str(protocol), "--config", str(lab_file))
    assert human.returncode == 1
    assert code in flat(human.stderr)


def test_a_protocol_file_that_is_not_yaml_names_the_file(tmp_path: Path, lab_file: Path) -> None:
    protocol = tmp_path / "garbled.yaml"
    protocol.write_text("name: x\nsteps: [\n  {command: aspirate\n")
    done = labwright("simulate", str(protocol), "--config", str(lab_file))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert flat(str(protocol)) in flat(done.stderr)


def test_a_protocol_without_steps_is_refused_naming_the_field(
    tmp_path: Path, lab_file: Path
) -> None:
    protocol = tmp_path / "empty.yaml"
    protocol.write_text("name: nothing\n")
    done = labwright("simulate", str(protocol), "--config", str(lab_file))
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert "steps" in done.stderr


# --------------------------------------------------------------------------- world


def test_world_before_any_server_ran_says_so_without_a_traceback(lab_file: Path) -> None:
    done = labwright("world", "--config", str(lab_file))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr


@pytest.mark.anyio
async def test_world_shows_ground_truth_after_a_served_run(lab_file: Path) -> None:
    lab = load(lab_file)
    protocol = {
        "name": "two-wells",
        "steps": [
            {
                "command": "transfer",
                "args": {
                    "source": "reservoir",
                    "source_well": "A1",
                    "destination": "plate_1",
                    "destination_wells": ["A1", "A2"],
                    "volume_ul": 40,
                },
            }
        ],
    }
    async with (
        open_runtime(lab.instrument("lh1"), lab.db_path, lab.world_path) as rt,
        create_connected_server_and_client_session(build_server(rt)) as session,
    ):
        started = await call(session, "start_run", protocol=protocol, dry_run=False)
        with anyio.fail_after(20):
            while (await call(session, "get_run", run_id=started["run_id"]))["status"] in (
                "pending",
                "running",
            ):
                await anyio.sleep(0.02)
        info = await call(session, "get_run", run_id=started["run_id"])
        assert info["status"] == "completed"

    done = await anyio.to_thread.run_sync(lambda: labwright("world", "--config", str(lab_file)))
    assert done.returncode == 0, done.stderr
    shown = flat(done.stdout)
    assert "plate_1:" in shown
    assert "A1=40.0" in shown and "A2=40.0" in shown and "B1=300.0" in shown
    assert "reservoir:A1=9920.0" in shown
    assert "tips_1:94tips" in shown

    only = labwright("world", "--config", str(lab_file), "--labware", "plate_1")
    assert "reservoir" not in only.stdout and "A1=40.0" in flat(only.stdout)
