"""Per-instrument safety rules: verdicts ALLOW, REQUIRE_APPROVAL or DENY."""

from policies.engine import RULES_DIR, PolicyEngine, PolicyError, build_engine, load_rules_file
from policies.model import Decision, PolicyRequest, RuleSet, Verdict
from policies.recovery import RecoveryRules

__all__ = [
    "RULES_DIR",
    "Decision",
    "PolicyEngine",
    "PolicyError",
    "PolicyRequest",
    "RecoveryRules",
    "RuleSet",
    "Verdict",
    "build_engine",
    "load_rules_file",
]
