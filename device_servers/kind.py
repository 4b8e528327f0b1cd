"""What an instrument kind plugs into the shared server and runtime.

So far: the standard procedures (MCP prompts) a kind contributes to its server.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


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
