"""The base of every instrument command: a frozen, typed record with a tool name and summary.

Each instrument kind subclasses it (``LHCommand``, ``ReaderCommand``, ...); the server turns
each command model into a tool whose input schema is the model's and whose description is
``summary``.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict


class DeviceCommand(BaseModel):
    """One command of one instrument kind."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    name: ClassVar[str]
    summary: ClassVar[str]

    def labware_ids(self) -> set[str]:
        """Every labware id the command touches (for policies)."""
        return set()
