"""Labwright device errors: one base, one stable code each.

Tree::

    DeviceError                  every error a device server reports (code, detail, fix_hint)
    ├── ValidationFailed         the twin refused the command before anything moved
    ├── GateRefused              policy, e-stop, staleness or configuration refused it
    └── BackendFailed            the instrument (or its simulator) failed while acting

A *defined* error is one the system knows how to recover from (no tip, too little liquid);
an undefined one (adapter fault, unknown firmware state) stops the instrument and goes to a
person. ``retriable`` is true only where re-sending the same command cannot do harm.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from device_servers.contract import Code, ErrorInfo

# Codes the system knows how to recover from without a person.
_DEFINED = {
    Code.INVALID_ARGUMENT,
    Code.UNKNOWN_LABWARE,
    Code.UNKNOWN_WELL,
    Code.INSUFFICIENT_VOLUME,
    Code.WELL_OVERFLOW,
    Code.NO_TIP,
    Code.TIP_ALREADY_ATTACHED,
    Code.TIPRACK_EMPTY,
    Code.VOLUME_EXCEEDS_TIP,
    Code.OUT_OF_RANGE,
    Code.POLICY_DENIED,
    Code.APPROVAL_REQUIRED,
    Code.REAL_EXECUTION_DISABLED,
    Code.DEVICE_BUSY,
    Code.STATE_STALE,
    Code.ACTION_ID_REUSED,
    Code.RUN_NOT_FOUND,
    Code.PRECONDITION_FAILED,
    Code.GRIP_FAILED,
    Code.SENSOR_INVALID,
}

# Codes where sending the very same request again cannot cause a second physical action.
_RETRIABLE = {Code.DEVICE_BUSY}


class DeviceError(Exception):
    """Base of every error a Labwright device server reports."""

    def __init__(
        self,
        code: Code,
        detail: str,
        fix_hint: str = "",
        *,
        defined: bool | None = None,
        retriable: bool | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(f"{code}: {detail}")
        self.code = Code(code)
        self.detail = detail
        self.fix_hint = fix_hint
        self.defined = self.code in _DEFINED if defined is None else defined
        self.retriable = self.code in _RETRIABLE if retriable is None else retriable
        self.extra = extra or {}

    def info(self, action_id: str | None = None) -> ErrorInfo:
        """The typed wire form (:class:`~device_servers.contract.ErrorInfo`)."""
        return ErrorInfo(
            code=self.code,
            detail=self.detail,
            retriable=self.retriable,
            fix_hint=self.fix_hint,
            defined=self.defined,
            action_id=action_id,
            extra=self.extra or None,
        )

    def to_payload(self, action_id: str | None = None) -> dict[str, Any]:
        """The wire form: ``{code, detail, retriable, fix_hint, defined, action_id[, extra]}``."""
        return self.info(action_id).payload()

    @classmethod
    def from_payload(cls, payload: dict[str, Any]) -> DeviceError:
        """Rebuild an error recorded in a ledger or received over the wire."""
        return cls(
            Code(payload["code"]),
            payload.get("detail", ""),
            payload.get("fix_hint", ""),
            defined=payload.get("defined"),
            retriable=payload.get("retriable"),
            extra=payload.get("extra"),
        )


class ValidationFailed(DeviceError):
    """The twin refused the command: nothing was sent to the instrument."""


class GateRefused(DeviceError):
    """A policy, an e-stop, a stale twin or the server configuration refused the command."""


class BackendFailed(DeviceError):
    """The instrument (or its simulator) failed while acting; its state may have changed."""


class ConfigurationError(ValueError):
    """An instrument configuration that cannot be built; the message names the field."""


def pydantic_detail(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        where = ".".join(str(p) for p in err["loc"]) or "(arguments)"
        parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)
