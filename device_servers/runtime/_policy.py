"""One command put to the instrument's policy: the request, a refusal, and the gate of a dry
run without a server (``labwright simulate``).

Nothing here needs a server, the ledger or an event loop: the simulation path imports it
without the rest of the runtime.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from device_servers.errors import Code, GateRefused
from device_servers.kind import DeviceCommand, Driver
from device_servers.runtime._trial import Assume, StepCheck, Trial, command_name
from policies import Decision, PolicyEngine, PolicyRequest, Verdict

APPROVAL_WARNING = "needs a person's approval to execute"


def policy_request(
    instrument: str,
    driver: Driver,
    name: str,
    cmd: BaseModel | None,
    dry_run: bool,
    context: dict[str, Any] | None = None,
) -> PolicyRequest:
    labware = driver.labware_of(cmd) if cmd is not None else set()
    request = PolicyRequest.for_command(instrument, name, cmd, labware, context, dry_run)
    derived = cmd.policy_numbers() if isinstance(cmd, DeviceCommand) else {}
    if not derived:
        return request
    return request.model_copy(update={"numbers": {**request.numbers, **derived}})


def denied(decision: Decision) -> GateRefused:
    return GateRefused(
        Code.POLICY_DENIED, decision.reason, decision.fix_hint, extra={"rule": decision.rule_id}
    )


def dry_run_check(
    policy: PolicyEngine, instrument: str, driver: Driver, warnings: list[str]
) -> StepCheck:
    """The gate of a dry run without a server (``labwright simulate``): policy only."""

    def check(index: int, cmd: BaseModel, trial: Trial) -> None:
        if isinstance(cmd, Assume):
            return
        name = command_name(cmd)
        decision = policy.evaluate(policy_request(instrument, driver, name, cmd, True))
        if decision.verdict is Verdict.DENY:
            raise denied(decision)
        if decision.verdict is Verdict.REQUIRE_APPROVAL:
            warnings.append(f"step {index} {APPROVAL_WARNING}: {decision.reason}")

    return check
