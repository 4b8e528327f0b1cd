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

import re
from collections.abc import Mapping
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
    def for_args(
        cls,
        instrument: str,
        command: str,
        args: Mapping[str, Any],
        labware: set[str] | frozenset[str] = frozenset(),
        context: dict[str, Any] | None = None,
        dry_run: bool = True,
        facts_known: bool = True,
    ) -> PolicyRequest:
        """The request for a call with these arguments (plain JSON values): the one way every
        checker (the server's gate, a device agent, the task's simulation) builds it.

        Every number in the arguments counts (:func:`numbers_in`), nested ones too.
        """
        return cls(
            instrument=instrument,
            command=command,
            numbers=numbers_in(args),
            labware=frozenset(labware),
            args=dict(args),
            context=context or {},
            dry_run=dry_run,
            facts_known=facts_known,
        )

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
        """The request for a parsed command: its arguments as the model holds them."""
        args = cmd.model_dump(mode="json") if cmd is not None else {}
        return cls.for_args(instrument, command, args, labware, context, dry_run)


# A number written as text ("105", "-2.5", "1e2"): the servers' models read it as the number.
_NUMBER_TEXT = re.compile(r"\s*[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\s*")


def numbers_in(args: Mapping[str, Any]) -> dict[str, list[float]]:
    """Every number in ``args``, under the name of the field holding it.

    Numbers nested in lists and mappings count under their own field's name (a limit on
    ``celsius`` sees every step of a temperature profile; a list of volumes under
    ``volume_ul`` is every volume). Booleans are not numbers; a number written as text counts,
    as a command model would read it.
    """
    numbers: dict[str, list[float]] = {}
    todo: list[tuple[str, Any]] = [(str(k), v) for k, v in reversed(list(args.items()))]
    while todo:  # depth first, in the order written; no recursion however deep the nesting
        key, value = todo.pop()
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, int | float):
            numbers.setdefault(key, []).append(float(value))
        elif isinstance(value, str):
            if _NUMBER_TEXT.fullmatch(value):
                numbers.setdefault(key, []).append(float(value))
        elif isinstance(value, Mapping):
            todo += [(str(k), v) for k, v in reversed(list(value.items()))]
        elif isinstance(value, list | tuple):
            todo += [(key, v) for v in reversed(value)]
    return numbers


class Decision(BaseModel):
    """A verdict with the rule that gave it."""

    model_config = ConfigDict(frozen=True)

    verdict: Verdict
    rule_id: str | None = None
    reason: str = ""
    fix_hint: str = ""
    approvals: list[dict[str, Any]] = Field(default_factory=list)
