"""Policy rules as data: small typed records loaded from YAML (never ``eval`` of strings).

Rule kinds:
- ``limit``: a numeric argument outside [min, max] gets the rule's verdict.
- ``forbid_labware``: touching one of the named labware ids is denied.
- ``forbid_command``: the named commands are denied outright.
- ``require_approval``: the named commands need a person's approval to execute.
- ``forbid_value``: an argument equal to one of the listed values gets the rule's verdict.
- ``require_state``: a fact the server reads before acting (``context``, e.g. whether the
  destination's drawer is open) must equal ``equals``; an unknown fact counts as not equal.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from policies.recovery import RecoveryRules


class Verdict(StrEnum):
    ALLOW = "ALLOW"
    REQUIRE_APPROVAL = "REQUIRE_APPROVAL"
    DENY = "DENY"


class _Rule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, max_length=80)
    commands: list[str] = Field(default_factory=list, description="Empty: every command.")
    reason: str = ""
    fix_hint: str = ""

    def applies_to(self, command: str) -> bool:
        return not self.commands or command in self.commands


class LimitRule(_Rule):
    type: Literal["limit"]
    arg: str = Field(description="A numeric argument name, e.g. volume_ul.")
    min: float | None = None
    max: float | None = None
    verdict: Literal[Verdict.DENY, Verdict.REQUIRE_APPROVAL] = Verdict.DENY


class ForbidLabwareRule(_Rule):
    type: Literal["forbid_labware"]
    labware: list[str] = Field(min_length=1)


class ForbidCommandRule(_Rule):
    type: Literal["forbid_command"]


class RequireApprovalRule(_Rule):
    type: Literal["require_approval"]


class ForbidValueRule(_Rule):
    type: Literal["forbid_value"]
    arg: str
    values: list[str] = Field(min_length=1)
    verdict: Literal[Verdict.DENY, Verdict.REQUIRE_APPROVAL] = Verdict.DENY


class RequireStateRule(_Rule):
    type: Literal["require_state"]
    key: str
    equals: bool | str | float = True
    verdict: Literal[Verdict.DENY, Verdict.REQUIRE_APPROVAL] = Verdict.DENY


Rule = Annotated[
    LimitRule
    | ForbidLabwareRule
    | ForbidCommandRule
    | RequireApprovalRule
    | ForbidValueRule
    | RequireStateRule,
    Field(discriminator="type"),
]


class RuleSet(BaseModel):
    """The rules of one instrument kind (one YAML file), plus per-lab overrides."""

    model_config = ConfigDict(extra="forbid")

    kind: str
    rules: list[Rule] = Field(default_factory=list)
    recovery: RecoveryRules | None = None


class PolicyRequest(BaseModel):
    """What a policy sees of a call: the command, numeric arguments, labware touched."""

    model_config = ConfigDict(frozen=True)

    instrument: str
    command: str
    numbers: dict[str, list[float]] = Field(default_factory=dict)
    labware: frozenset[str] = frozenset()
    args: dict[str, Any] = Field(default_factory=dict)
    context: dict[str, Any] = Field(default_factory=dict)
    dry_run: bool = True
    # False where the caller cannot know the instrument's facts (an agent checking before it
    # calls): ``require_state`` rules are then left to the server, which knows them.
    facts_known: bool = True

    @classmethod
    def for_command(
        cls,
        instrument: str,
        command: str,
        cmd: BaseModel | None,
        labware: set[str] | frozenset[str] = frozenset(),
        context: dict[str, Any] | None = None,
        dry_run: bool = True,
    ) -> PolicyRequest:
        """The request for a parsed command: its numeric fields, labware and arguments.

        A number anywhere in the arguments counts under the name of the field holding it, so
        a limit on ``celsius`` also sees every step of a nested temperature profile.
        """
        numbers: dict[str, list[float]] = {}
        args = cmd.model_dump(mode="json") if cmd is not None else {}

        def collect(key: str, value: Any) -> None:
            if isinstance(value, bool):
                return
            if isinstance(value, int | float):
                numbers.setdefault(key, []).append(float(value))
            elif isinstance(value, list):
                for item in value:
                    collect(key, item)
            elif isinstance(value, dict):
                for sub, item in value.items():
                    collect(str(sub), item)

        for key, value in args.items():
            collect(key, value)
        return cls(
            instrument=instrument,
            command=command,
            numbers=numbers,
            labware=frozenset(labware),
            args=args,
            context=context or {},
            dry_run=dry_run,
        )


class Decision(BaseModel):
    """A verdict with the rule that gave it."""

    model_config = ConfigDict(frozen=True)

    verdict: Verdict
    rule_id: str | None = None
    reason: str = ""
    fix_hint: str = ""
    approvals: list[dict[str, Any]] = Field(default_factory=list)
