"""Every planned step against the policy rules of its instrument, before anything is shown.

The lab view carries each instrument's rules as data (what ``lab://<id>/policy`` serves); a
step the lab's policy denies (a block above 80 C, a shake above 2000 rpm) is refused here with
the rule's reason, rather than planned and then stopped by the server. Rules that depend on
what only the instrument knows at that moment (``require_state``) are left to the server.
"""

from __future__ import annotations

import json
from functools import lru_cache

from pydantic import TypeAdapter

from agents.task.planning._outcomes import Refuse
from agents.task.planning.models import LabView, PlanStep
from policies import PolicyEngine, PolicyRequest, Verdict
from policies.model import Rule

_RULE: TypeAdapter[Rule] = TypeAdapter(Rule)


def _numbers(args: dict[str, object]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for key, value in args.items():
        if isinstance(value, bool):
            continue
        if isinstance(value, int | float):
            out[key] = [float(value)]
    return out


@lru_cache(maxsize=64)
def _engine(rules: str) -> PolicyEngine:
    """The engine of a rule list (built once per set of rules)."""
    return PolicyEngine([_RULE.validate_python(r) for r in json.loads(rules)])


def check(steps: list[PlanStep], lab: LabView) -> None:
    """Refuse the first step a policy rule denies."""
    engines: dict[str, PolicyEngine] = {}
    for step in steps:
        inst = lab.instruments.get(step.instrument)
        if inst is None or not inst.policy:
            continue
        if step.instrument not in engines:
            engines[step.instrument] = _engine(json.dumps(inst.policy, sort_keys=True))
        labware = {
            str(v)
            for k, v in step.args.items()
            if k in ("labware", "source", "destination", "plate", "rack", "tip_rack") and v
        }
        decision = engines[step.instrument].evaluate(
            PolicyRequest(
                instrument=step.instrument,
                command=step.command,
                numbers=_numbers(step.args),
                labware=frozenset(labware),
                args=dict(step.args),
                facts_known=False,
            )
        )
        if decision.verdict is Verdict.DENY:
            raise Refuse(
                f"{step.instrument} {step.command}: the lab's policy forbids it — {decision.reason}"
                + (f" ({decision.fix_hint})" if decision.fix_hint else ""),
                "policy_limit",
            )
