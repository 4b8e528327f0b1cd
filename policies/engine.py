"""The policy engine: evaluate rules, first DENY wins, else any REQUIRE_APPROVAL, else ALLOW."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from policies.model import (
    Decision,
    ForbidCommandRule,
    ForbidLabwareRule,
    ForbidValueRule,
    LimitRule,
    PolicyRequest,
    RequireApprovalRule,
    RequireStateRule,
    Rule,
    RuleSet,
    Verdict,
)
from policies.recovery import RecoveryRules
from policies.safe_yaml import YamlError, read_yaml

RULES_DIR = Path(__file__).parent / "rules"
_RULE = TypeAdapter(Rule)


class PolicyError(ValueError):
    """A rules file or rule override that cannot be loaded."""


def _check(rule: Rule, req: PolicyRequest) -> Decision | None:
    if not rule.applies_to(req.command):
        return None
    if isinstance(rule, LimitRule):
        for value in req.numbers.get(rule.arg, []):
            # Written so that a value that is not a number (NaN) is never within a limit.
            low = rule.min is not None and not value >= rule.min
            high = rule.max is not None and not value <= rule.max
            if low or high:
                bound = f"min {rule.min}" if low else f"max {rule.max}"
                return Decision(
                    verdict=rule.verdict,
                    rule_id=rule.id,
                    reason=rule.reason or f"{rule.arg}={value} is beyond the {bound} of {rule.id}",
                    fix_hint=rule.fix_hint or f"keep {rule.arg} within the {bound}",
                )
        return None
    if isinstance(rule, ForbidLabwareRule):
        hit = sorted(req.labware & set(rule.labware))
        if hit:
            return Decision(
                verdict=Verdict.DENY,
                rule_id=rule.id,
                reason=rule.reason or f"{', '.join(hit)} must not be touched ({rule.id})",
                fix_hint=rule.fix_hint or "use other labware; protected labware is off limits",
            )
        return None
    if isinstance(rule, ForbidCommandRule):
        return Decision(
            verdict=Verdict.DENY,
            rule_id=rule.id,
            reason=rule.reason or f"{req.command} is forbidden on this instrument ({rule.id})",
            fix_hint=rule.fix_hint or "ask a person to change the instrument's policy",
        )
    if isinstance(rule, RequireApprovalRule):
        return Decision(
            verdict=Verdict.REQUIRE_APPROVAL,
            rule_id=rule.id,
            reason=rule.reason or f"{req.command} needs a person's approval ({rule.id})",
            fix_hint=rule.fix_hint or "have a person approve this action_id, then call again",
        )
    if isinstance(rule, ForbidValueRule):
        given = req.args.get(rule.arg)
        if given is not None and str(given) in rule.values:
            return Decision(
                verdict=rule.verdict,
                rule_id=rule.id,
                reason=rule.reason or f"{rule.arg}={given} is not allowed ({rule.id})",
                fix_hint=rule.fix_hint
                or f"choose a {rule.arg} other than {', '.join(rule.values)}",
            )
        return None
    if isinstance(rule, RequireStateRule):
        if not req.facts_known:
            return None
        actual = req.context.get(rule.key)
        if actual != rule.equals:
            known = "unknown" if actual is None else repr(actual)
            return Decision(
                verdict=rule.verdict,
                rule_id=rule.id,
                reason=rule.reason or f"{rule.key} must be {rule.equals!r}, it is {known}",
                fix_hint=rule.fix_hint or f"make {rule.key} {rule.equals!r} first",
            )
        return None
    return None  # pragma: no cover - closed union


class PolicyEngine:
    """An instrument's rules, composed: first DENY wins, approvals accumulate."""

    def __init__(self, rules: list[Rule], recovery: RecoveryRules | None = None) -> None:
        self.rules = list(rules)
        # What the instrument's device agent may do on its own after a failure.
        self.recovery = recovery or RecoveryRules()

    def evaluate(self, req: PolicyRequest) -> Decision:
        approvals: list[Decision] = []
        for rule in self.rules:
            decision = _check(rule, req)
            if decision is None:
                continue
            if decision.verdict is Verdict.DENY:
                return decision
            approvals.append(decision)
        if approvals:
            first = approvals[0]
            return first.model_copy(
                update={"approvals": [d.model_dump(exclude={"approvals"}) for d in approvals]}
            )
        return Decision(verdict=Verdict.ALLOW)

    def describe(self) -> list[dict[str, Any]]:
        return [r.model_dump(mode="json") for r in self.rules]


def load_rules_file(path: Path) -> RuleSet:
    """Parse one rules YAML file, naming the file and field on error."""
    try:
        data = read_yaml(path)
    except OSError as exc:
        raise PolicyError(f"{path}: cannot read rules: {exc.strerror or exc}") from exc
    except YamlError as exc:
        raise PolicyError(f"{path}: not valid YAML: {exc}") from exc
    try:
        return RuleSet.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise PolicyError(f"{path}: {where}: {first['msg']}") from exc


def build_engine(
    kind: str,
    rules_file: str | Path | None = None,
    extra_rules: list[dict[str, Any]] | None = None,
    protected_labware: list[str] | None = None,
) -> PolicyEngine:
    """The base rules, those of ``kind`` (or ``rules_file``), then lab overrides.

    A missing rules file is a :class:`PolicyError`, whether the lab names it or it is the
    kind's default (``rules/<kind>.yaml``).
    """
    path = Path(rules_file) if rules_file else RULES_DIR / f"{kind}.yaml"
    rules: list[Rule] = list(load_rules_file(RULES_DIR / "_base.yaml").rules)
    if not path.exists():
        # Every kind has its own rules: a kind without them must not be served at all.
        whose = "rules file" if rules_file else f"the {kind} kind's rules file"
        raise PolicyError(f"{path}: {whose} not found")
    ruleset = load_rules_file(path)
    rules.extend(ruleset.rules)
    recovery = ruleset.recovery
    for i, raw in enumerate(extra_rules or []):
        try:
            rules.append(_RULE.validate_python(raw))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise PolicyError(f"policy.rules[{i}]: {where}: {first['msg']}") from exc
    if protected_labware:
        rules.insert(
            0,
            ForbidLabwareRule(
                type="forbid_labware", id="protected_labware", labware=list(protected_labware)
            ),
        )
    return PolicyEngine(rules, recovery)
