"""The safety gate: the policy engine as a unit, then every rule attacked through the MCP server.

Physical outcomes are judged from the simulated world, never from what the server says.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import call, error_code, labwright, write_lab
from mcp import ClientSession
from mcp.shared.memory import create_connected_server_and_client_session

from device_servers.factory import open_runtime
from device_servers.lab import load
from device_servers.runtime import InstrumentRuntime
from device_servers.server import build_server
from device_servers.sim.world import SimWorld
from policies import PolicyEngine, PolicyError, PolicyRequest, Verdict, build_engine
from policies.engine import RULES_DIR, load_rules_file
from state_store import Approvals, connect

pytestmark = pytest.mark.anyio

# --------------------------------------------------------------------------- helpers


_NO_RULES = Path(tempfile.mkdtemp(prefix="labwright-rules-")) / "unit.yaml"
_NO_RULES.write_text("kind: unit\nrules: []\n")


def engine(*rules: dict[str, Any], protected: list[str] | None = None) -> PolicyEngine:
    """An engine of the base rules and only these (kind 'unit' has an empty rules file)."""
    return build_engine("unit", _NO_RULES, list(rules), protected)


def request(
    command: str = "aspirate", labware: tuple[str, ...] = (), **numbers: Any
) -> PolicyRequest:
    nums = {k: v if isinstance(v, list) else [float(v)] for k, v in numbers.items()}
    return PolicyRequest(
        instrument="lh1", command=command, numbers=nums, labware=frozenset(labware)
    )


Patch = Callable[[dict[str, Any]], None]


def policy_patch(**policy: Any) -> Patch:
    def patch(data: dict[str, Any]) -> None:
        data["instruments"][0]["policy"].update(policy)

    return patch


@contextlib.asynccontextmanager
async def served(
    tmp_path: Path, patch: Patch | None = None
) -> AsyncIterator[tuple[ClientSession, InstrumentRuntime, Path]]:
    """A patched lab served over an in-memory MCP session: (session, runtime, lab file)."""
    lab_file = write_lab(tmp_path, patch)
    lab = load(lab_file)
    async with (
        open_runtime(lab.instrument("lh1"), lab.db_path, lab.world_path) as rt,
        create_connected_server_and_client_session(build_server(rt)) as session,
    ):
        yield session, rt, lab_file


def untouched(world: SimWorld) -> None:
    """Nothing physical has happened in the world since it was seeded."""
    assert world.physical_ops("lh1") == []
    assert world.well("reservoir", "A1")["volume_ul"] == pytest.approx(10000)
    assert world.well("plate_1", "A1")["volume_ul"] == 0
    assert all(world.tips("tips_1").values())
    assert all(ch["tip"] is None for ch in world.channels("lh1"))


TRANSFER = dict(
    source="reservoir",
    source_well="A1",
    destination="plate_1",
    destination_wells=["A1"],
    volume_ul=50,
)

# One valid-looking call per volume-limited command, with the volume left to the test.
VOLUME_CALLS: dict[str, dict[str, Any]] = {
    "aspirate": dict(labware="reservoir", wells=["A1"]),
    "dispense": dict(labware="plate_1", wells=["A1"]),
    "transfer": {k: v for k, v in TRANSFER.items() if k != "volume_ul"},
    "mix": dict(labware="plate_1", well="B1"),
}


# --------------------------------------------------------------------------- engine (unit)


def test_limit_above_max_is_denied_by_its_rule() -> None:
    eng = engine({"id": "cap", "type": "limit", "arg": "volume_ul", "max": 100})
    decision = eng.evaluate(request(volume_ul=101))
    assert decision.verdict is Verdict.DENY
    assert decision.rule_id == "cap"
    assert decision.fix_hint


def test_limit_below_min_is_denied() -> None:
    eng = engine({"id": "floor", "type": "limit", "arg": "volume_ul", "min": 1})
    assert eng.evaluate(request(volume_ul=0.5)).verdict is Verdict.DENY


def test_limit_bounds_themselves_are_allowed() -> None:
    eng = engine({"id": "band", "type": "limit", "arg": "volume_ul", "min": 1, "max": 100})
    assert eng.evaluate(request(volume_ul=1)).verdict is Verdict.ALLOW
    assert eng.evaluate(request(volume_ul=100)).verdict is Verdict.ALLOW


def test_limit_checks_every_value_of_a_list_argument() -> None:
    eng = engine({"id": "ch", "type": "limit", "arg": "channels", "max": 3})
    assert eng.evaluate(request(channels=[0.0, 1.0, 3.0])).verdict is Verdict.ALLOW
    assert eng.evaluate(request(channels=[0.0, 7.0])).verdict is Verdict.DENY


def test_limit_ignores_calls_without_its_argument_and_other_commands() -> None:
    eng = engine(
        {"id": "cap", "type": "limit", "commands": ["aspirate"], "arg": "volume_ul", "max": 10}
    )
    assert eng.evaluate(request("aspirate", repetitions=3)).verdict is Verdict.ALLOW
    assert eng.evaluate(request("dispense", volume_ul=500)).verdict is Verdict.ALLOW
    assert eng.evaluate(request("aspirate", volume_ul=500)).verdict is Verdict.DENY


def test_limit_with_require_approval_verdict_asks_a_person_instead_of_denying() -> None:
    eng = engine(
        {
            "id": "big",
            "type": "limit",
            "arg": "volume_ul",
            "max": 200,
            "verdict": "REQUIRE_APPROVAL",
        }
    )
    decision = eng.evaluate(request(volume_ul=250))
    assert decision.verdict is Verdict.REQUIRE_APPROVAL
    assert decision.rule_id == "big"
    assert eng.evaluate(request(volume_ul=150)).verdict is Verdict.ALLOW


def test_forbid_labware_denies_only_calls_touching_that_labware() -> None:
    eng = engine({"id": "no_gold", "type": "forbid_labware", "labware": ["gold_plate"]})
    hit = eng.evaluate(request(labware=("reservoir", "gold_plate")))
    assert (hit.verdict, hit.rule_id) == (Verdict.DENY, "no_gold")
    assert eng.evaluate(request(labware=("reservoir",))).verdict is Verdict.ALLOW


def test_forbid_command_denies_named_commands_and_no_others() -> None:
    eng = engine({"id": "no_mix", "type": "forbid_command", "commands": ["mix"]})
    assert eng.evaluate(request("mix")).verdict is Verdict.DENY
    assert eng.evaluate(request("aspirate")).verdict is Verdict.ALLOW


def test_require_approval_applies_to_its_commands() -> None:
    eng = engine({"id": "ask", "type": "require_approval", "commands": ["transfer"]})
    decision = eng.evaluate(request("transfer"))
    assert (decision.verdict, decision.rule_id) == (Verdict.REQUIRE_APPROVAL, "ask")
    assert eng.evaluate(request("mix")).verdict is Verdict.ALLOW


def test_first_deny_wins_even_after_approval_rules() -> None:
    eng = engine(
        {"id": "ask", "type": "require_approval"},
        {"id": "cap", "type": "limit", "arg": "volume_ul", "max": 10},
        {"id": "never", "type": "forbid_command"},
    )
    decision = eng.evaluate(request(volume_ul=20))
    assert (decision.verdict, decision.rule_id) == (Verdict.DENY, "cap")


def test_approvals_accumulate_and_the_first_gives_the_reason() -> None:
    eng = engine(
        {"id": "ask_1", "type": "require_approval"},
        {
            "id": "ask_2",
            "type": "limit",
            "arg": "volume_ul",
            "max": 10,
            "verdict": "REQUIRE_APPROVAL",
        },
    )
    decision = eng.evaluate(request(volume_ul=20))
    assert decision.verdict is Verdict.REQUIRE_APPROVAL
    assert decision.rule_id == "ask_1"
    assert [a["rule_id"] for a in decision.approvals] == ["ask_1", "ask_2"]


def test_protected_labware_is_checked_before_every_other_rule() -> None:
    eng = engine({"id": "ask", "type": "require_approval"}, protected=["plate_1"])
    assert eng.rules[0].id == "protected_labware"
    decision = eng.evaluate(request(labware=("plate_1",)))
    assert (decision.verdict, decision.rule_id) == (Verdict.DENY, "protected_labware")


def test_default_liquid_handler_engine_has_the_volume_and_estop_rules() -> None:
    assert load_rules_file(RULES_DIR / "liquid_handler.yaml").kind == "liquid_handler"
    eng = build_engine("liquid_handler")
    assert {r.id for r in eng.rules} >= {
        "max_volume_per_operation",
        "max_mix_volume",
        "estop_reset_needs_person",
    }
    assert eng.evaluate(request("reset_estop")).verdict is Verdict.REQUIRE_APPROVAL


def test_rules_file_that_is_not_yaml_is_a_policy_error_naming_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: liquid_handler\nrules: [\n  - {id: x\n")
    with pytest.raises(PolicyError) as info:
        load_rules_file(bad)
    assert str(bad) in str(info.value)


def test_unknown_rule_type_in_a_rules_file_names_the_file_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "rules.yaml"
    bad.write_text("kind: liquid_handler\nrules:\n  - {id: x, type: teleport}\n")
    with pytest.raises(PolicyError) as info:
        build_engine("liquid_handler", bad)
    assert str(bad) in str(info.value)
    assert "rules.0" in str(info.value)


def test_unknown_rule_type_in_lab_overrides_names_the_field() -> None:
    with pytest.raises(PolicyError) as info:
        engine({"id": "ok", "type": "forbid_command"}, {"id": "x", "type": "teleport"})
    assert "policy.rules[1]" in str(info.value)


def test_rule_with_a_misspelt_field_is_refused() -> None:
    with pytest.raises(PolicyError) as info:
        engine({"id": "cap", "type": "limit", "arg": "volume_ul", "maximum": 5})
    assert "policy.rules[0]" in str(info.value)


def test_a_kind_without_its_own_rules_file_is_a_policy_error_naming_the_file() -> None:
    with pytest.raises(PolicyError) as info:
        build_engine("incubator")
    assert str(RULES_DIR / "incubator.yaml") in str(info.value)


def test_missing_rules_file_is_a_policy_error_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.yaml"
    with pytest.raises(PolicyError) as info:
        build_engine("liquid_handler", missing)
    assert str(missing) in str(info.value)


# --------------------------------------------------------------------------- default rules, served


@pytest.mark.parametrize("dry_run", [True, False])
@pytest.mark.parametrize("command", sorted(VOLUME_CALLS))
async def test_volume_above_1000_ul_is_denied_by_the_server(
    session: ClientSession, world: SimWorld, command: str, dry_run: bool
) -> None:
    payload = await call(
        session,
        command,
        **VOLUME_CALLS[command],
        volume_ul=1001,
        dry_run=dry_run,
        action_id=f"{command}-big",
    )
    assert error_code(payload) == "POLICY_DENIED"
    assert payload["error"]["extra"]["rule"] == "max_volume_per_operation"
    assert payload["error"]["fix_hint"]
    untouched(world)


@pytest.mark.parametrize("command", sorted(VOLUME_CALLS))
async def test_volume_below_half_a_microlitre_is_denied_by_the_server(
    session: ClientSession, world: SimWorld, command: str
) -> None:
    payload = await call(
        session, command, **VOLUME_CALLS[command], volume_ul=0.1, dry_run=False, action_id="tiny"
    )
    assert error_code(payload) == "POLICY_DENIED"
    untouched(world)


async def test_transfer_with_mix_volume_above_1000_ul_is_denied(
    session: ClientSession, world: SimWorld
) -> None:
    payload = await call(
        session,
        "transfer",
        **TRANSFER,
        mix_after=2,
        mix_volume_ul=1001,
        dry_run=False,
        action_id="mix-big",
    )
    assert error_code(payload) == "POLICY_DENIED"
    assert payload["error"]["extra"]["rule"] == "max_mix_volume"
    untouched(world)


async def test_a_denied_call_leaves_no_ledger_entry_so_its_action_id_stays_free(
    session: ClientSession, world: SimWorld
) -> None:
    denied = await call(
        session, "transfer", **{**TRANSFER, "volume_ul": 1001}, dry_run=False, action_id="t-1"
    )
    assert error_code(denied) == "POLICY_DENIED"
    allowed = await call(session, "transfer", **TRANSFER, dry_run=False, action_id="t-1")
    assert allowed["ok"] is True
    assert world.well("plate_1", "A1")["volume_ul"] == pytest.approx(50)


@pytest.mark.parametrize("dry_run", [True, False])
async def test_a_protocol_with_an_over_limit_step_is_refused_before_it_starts(
    session: ClientSession, world: SimWorld, dry_run: bool
) -> None:
    protocol = {
        "name": "too-much",
        "steps": [
            {"command": "transfer", "args": TRANSFER},
            {"command": "transfer", "args": {**TRANSFER, "volume_ul": 1001}},
        ],
    }
    payload = await call(session, "start_run", protocol=protocol, dry_run=dry_run)
    assert error_code(payload) == "POLICY_DENIED"
    untouched(world)


async def test_policy_resource_lists_the_enforced_rules(session: ClientSession) -> None:
    import json

    result = await session.read_resource("lab://lh1/policy")  # type: ignore[arg-type]
    data = json.loads(result.contents[0].text)  # type: ignore[union-attr]
    assert {r["id"] for r in data["rules"]} >= {"max_volume_per_operation", "max_mix_volume"}


# --------------------------------------------------------------------------- lab overrides, served


@pytest.mark.parametrize("dry_run", [True, False])
async def test_transfer_touching_protected_labware_is_denied_and_the_world_untouched(
    tmp_path: Path, dry_run: bool
) -> None:
    async with served(tmp_path, policy_patch(protected_labware=["plate_1"])) as (s, rt, _):
        payload = await call(s, "transfer", **TRANSFER, dry_run=dry_run, action_id="p-1")
        assert error_code(payload) == "POLICY_DENIED"
        assert payload["error"]["extra"]["rule"] == "protected_labware"
        untouched(SimWorld(load(tmp_path / "lab.yaml").world_path))
        assert rt.ledger.get("p-1") is None


async def test_protected_tip_rack_cannot_be_picked_from_but_other_labware_still_works(
    tmp_path: Path,
) -> None:
    async with served(tmp_path, policy_patch(protected_labware=["tips_1"])) as (s, _, lab_file):
        world = SimWorld(load(lab_file).world_path)
        picked = await call(s, "pick_up_tips", rack="tips_1", dry_run=False, action_id="pk")
        assert error_code(picked) == "POLICY_DENIED"
        assert all(world.tips("tips_1").values())
        # A call that names no protected labware is not caught by the rule.
        mixed = await call(s, "mix", labware="plate_1", well="B1", volume_ul=50)
        assert error_code(mixed) == "NO_TIP"


async def test_extra_forbid_command_rule_from_the_lab_file_is_enforced(tmp_path: Path) -> None:
    rules = [{"id": "no_mixing", "type": "forbid_command", "commands": ["mix"]}]
    async with served(tmp_path, policy_patch(rules=rules)) as (s, _, _):
        payload = await call(s, "mix", labware="plate_1", well="B1", volume_ul=50)
        assert error_code(payload) == "POLICY_DENIED"
        assert payload["error"]["extra"]["rule"] == "no_mixing"
        other = await call(s, "transfer", **TRANSFER)
        assert other["ok"] is True


async def test_extra_limit_rule_from_the_lab_file_tightens_the_default(tmp_path: Path) -> None:
    rules = [{"id": "small_only", "type": "limit", "arg": "volume_ul", "max": 20}]
    async with served(tmp_path, policy_patch(rules=rules)) as (s, _, lab_file):
        payload = await call(s, "transfer", **TRANSFER, dry_run=False, action_id="t")
        assert error_code(payload) == "POLICY_DENIED"
        assert payload["error"]["extra"]["rule"] == "small_only"
        untouched(SimWorld(load(lab_file).world_path))


# --------------------------------------------------------------------------- approvals, served

APPROVE_TRANSFERS = policy_patch(
    rules=[{"id": "ask_for_transfers", "type": "require_approval", "commands": ["transfer"]}]
)


async def approve(lab_file: Path, action_id: str) -> None:
    """A person approves through the real ``labwright`` command in a subprocess."""
    done = await anyio.to_thread.run_sync(
        lambda: labwright("approve-action", "lh1", action_id, "--config", str(lab_file))
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr


async def test_approval_rule_lets_dry_run_pass_with_a_warning(tmp_path: Path) -> None:
    async with served(tmp_path, APPROVE_TRANSFERS) as (s, _, lab_file):
        dry = await call(s, "transfer", **TRANSFER, action_id="a-1")
        assert dry["ok"] is True and dry["dry_run"] is True
        assert dry["warnings"]
        assert Approvals(connect(load(lab_file).db_path)).pending("lh1") == []
        untouched(SimWorld(load(lab_file).world_path))


async def test_approved_action_executes_once_after_a_person_approves_it(tmp_path: Path) -> None:
    async with served(tmp_path, APPROVE_TRANSFERS) as (s, rt, lab_file):
        lab = load(lab_file)
        world = SimWorld(lab.world_path)

        refused = await call(s, "transfer", **TRANSFER, dry_run=False, action_id="a-1")
        assert error_code(refused) == "APPROVAL_REQUIRED"
        assert refused["error"]["action_id"] == "a-1"
        pending = Approvals(connect(lab.db_path)).pending("lh1")
        assert [(p.action_id, p.command) for p in pending] == [("a-1", "transfer")]
        untouched(world)

        again = await call(s, "transfer", **TRANSFER, dry_run=False, action_id="a-1")
        assert error_code(again) == "APPROVAL_REQUIRED"

        await approve(lab_file, "a-1")
        assert Approvals(connect(lab.db_path)).pending("lh1") == []

        done = await call(s, "transfer", **TRANSFER, dry_run=False, action_id="a-1")
        assert done["ok"] is True and done["dry_run"] is False
        replay = await call(s, "transfer", **TRANSFER, dry_run=False, action_id="a-1")
        assert replay["replayed"] is True
        assert world.well("plate_1", "A1")["volume_ul"] == pytest.approx(50)
        assert [op["op"] for op in world.physical_ops("lh1")] == [
            "pick",
            "aspirate",
            "dispense",
            "drop",
        ]
        assert rt.ledger.count("done") == 1


async def test_approval_does_not_carry_over_to_other_arguments_before_execution(
    tmp_path: Path,
) -> None:
    async with served(tmp_path, APPROVE_TRANSFERS) as (s, _, lab_file):
        world = SimWorld(load(lab_file).world_path)
        assert (
            error_code(await call(s, "transfer", **TRANSFER, dry_run=False, action_id="a-1"))
            == "APPROVAL_REQUIRED"
        )
        await approve(lab_file, "a-1")

        swapped = {**TRANSFER, "volume_ul": 200}
        other = await call(s, "transfer", **swapped, dry_run=False, action_id="a-1")
        assert error_code(other) == "ACTION_ID_REUSED"  # an action id binds one call
        untouched(world)

        # The approved arguments still execute, exactly once.
        done = await call(s, "transfer", **TRANSFER, dry_run=False, action_id="a-1")
        assert done["ok"] is True
        assert world.well("plate_1", "A1")["volume_ul"] == pytest.approx(50)


async def test_approval_does_not_carry_over_to_other_arguments_after_execution(
    tmp_path: Path,
) -> None:
    async with served(tmp_path, APPROVE_TRANSFERS) as (s, _, lab_file):
        world = SimWorld(load(lab_file).world_path)
        await call(s, "transfer", **TRANSFER, dry_run=False, action_id="a-1")
        await approve(lab_file, "a-1")
        assert (await call(s, "transfer", **TRANSFER, dry_run=False, action_id="a-1"))["ok"]

        other = await call(
            s,
            "transfer",
            **{**TRANSFER, "destination_wells": ["A2"]},
            dry_run=False,
            action_id="a-1",
        )
        assert error_code(other) in {"ACTION_ID_REUSED", "APPROVAL_REQUIRED"}
        assert world.well("plate_1", "A2")["volume_ul"] == 0
        assert len(world.physical_ops("lh1")) == 4


async def test_approving_an_action_nobody_asked_for_fails_cleanly(tmp_path: Path) -> None:
    async with served(tmp_path, APPROVE_TRANSFERS) as (_, _, lab_file):
        done = await anyio.to_thread.run_sync(
            lambda: labwright("approve-action", "lh1", "never-asked", "--config", str(lab_file))
        )
        assert done.returncode == 2
        assert "Traceback" not in done.stderr


async def test_start_run_that_would_execute_a_step_needing_approval_is_refused(
    tmp_path: Path,
) -> None:
    protocol = {
        "name": "needs-ok",
        "steps": [
            {"command": "pick_up_tips", "args": {"rack": "tips_1"}},
            {"command": "drop_tips", "args": {}},
            {"command": "transfer", "args": TRANSFER},
        ],
    }
    async with served(tmp_path, APPROVE_TRANSFERS) as (s, rt, lab_file):
        refused = await call(s, "start_run", protocol=protocol, dry_run=False, run_key="k")
        assert error_code(refused) == "APPROVAL_REQUIRED"
        assert rt.runs.by_key("k") is None
        untouched(SimWorld(load(lab_file).world_path))

        simulated = await call(s, "start_run", protocol=protocol, dry_run=True)
        assert simulated["ok"] is True
        with anyio.fail_after(10):
            while (await call(s, "get_run", run_id=simulated["run_id"]))["status"] in (
                "pending",
                "running",
            ):
                await anyio.sleep(0.01)
        assert (await call(s, "get_run", run_id=simulated["run_id"]))["status"] == "completed"
        untouched(SimWorld(load(lab_file).world_path))
