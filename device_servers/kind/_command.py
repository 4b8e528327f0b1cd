"""A kind's command records, the event and deviation shapes, and its prompts."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict


class DeviceCommand(BaseModel):
    """One command of one instrument kind: a frozen, typed record with a tool name and summary.

    The server turns each command model into a tool whose input schema is the model's and
    whose description is ``summary``: the class docstring (what a model reads about the
    tool: units, ranges, preconditions, error codes), unless the class sets it itself.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    name: ClassVar[str]
    summary: ClassVar[str]
    # Text several commands of a kind share (their error codes), appended to the docstring.
    notes: ClassVar[str] = ""

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        if "summary" not in cls.__dict__ and cls.__doc__:
            cls.summary = " ".join(f"{cls.__doc__} {cls.notes}".split())

    def labware_ids(self) -> set[str]:
        """Every labware id the command touches (for policies)."""
        return set()

    def policy_numbers(self) -> dict[str, list[float]]:
        """Figures derived from the arguments that rules may limit (a profile's duration)."""
        return {}


CommandT = TypeVar("CommandT", bound=DeviceCommand)


def command_table(*commands: type[CommandT]) -> dict[str, type[CommandT]]:
    """A kind's commands by tool name."""
    return {c.name: c for c in commands}


Event = dict[str, Any]
Deviation = dict[str, Any]


@dataclass(frozen=True)
class PromptArg:
    """One argument of a prompt."""

    name: str
    description: str | None = None
    required: bool = False


@dataclass(frozen=True)
class Prompt:
    """A standard procedure offered as an MCP prompt.

    ``render(instrument_id, args)`` returns the procedure's text; it raises ``ValueError``
    for missing or unusable arguments (the server answers INVALID_PARAMS).
    """

    name: str
    description: str
    render: Callable[[str, dict[str, str]], str]
    arguments: tuple[PromptArg, ...] = field(default_factory=tuple)
