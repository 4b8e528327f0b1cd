"""What a device agent may do on its own after a failure, before it asks a person.

The ``recovery:`` section of a kind's rules file (``policies/rules/<kind>.yaml``), as data:

- ``again``: failures after which what is left of the step may be sent again as a new action
  (after a read back), at most ``max`` times per step: e.g. a tip pick-up that failed (its
  spot is then marked and the next one taken), a gripper that closed on nothing.
- ``used_tip_on_channel``: ``drop`` a tip left on a channel before a pick-up, or ``ask``.
- ``in_doubt``: an action whose outcome is unknown is always read back first; per cause
  (``restart`` of the server, ``CONNECTION_LOST``, ``HARDWARE_TIMEOUT``, ``ESTOP_ACTIVE``,
  ``OPERATION_ABORTED``), which operations may be completed under the action's own id without
  a person once the read back shows exactly how far it got: ``any``, or a list of operation
  kinds (``[drop]``: only when nothing but dropping the tip is left; ``[]``: always ask).

Without a section nothing is done alone except completing an action a server restart left in
doubt, which the read back has resolved exactly.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

IN_DOUBT_CAUSES = (
    "restart",
    "CONNECTION_LOST",
    "HARDWARE_TIMEOUT",
    "ESTOP_ACTIVE",
    "OPERATION_ABORTED",
)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Again(_Strict):
    """Send what is left again after one of ``codes`` (at operation ``at``, if given)."""

    codes: list[str] = Field(min_length=1)
    at: str | None = Field(default=None, description="only when this operation failed (pick)")
    max: int = Field(default=1, ge=0, le=10)
    reason: str = ""


def _restart_only() -> dict[str, Literal["any"] | list[str]]:
    return {"restart": "any"}


class RecoveryRules(_Strict):
    """A device agent's own recovery, per instrument kind."""

    again: list[Again] = Field(default_factory=list)
    used_tip_on_channel: Literal["drop", "ask"] = "ask"
    in_doubt: dict[str, Literal["any"] | list[str]] = Field(default_factory=_restart_only)

    def again_for(self, code: str | None, op: str | None) -> Again | None:
        """The rule that lets what is left be sent again after ``code`` at ``op``."""
        for rule in self.again:
            if code in rule.codes and (rule.at is None or rule.at == op):
                return rule
        return None

    def may_complete(self, cause: str, left: list[str]) -> bool:
        """Whether an in-doubt action may be completed alone, ``left`` operations to go."""
        allowed = self.in_doubt.get(cause, [])
        return allowed == "any" or all(op in allowed for op in left)
