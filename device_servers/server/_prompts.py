"""Prompts: the procedure every server offers, plus those the instrument's kind contributes."""

from __future__ import annotations

import mcp.types as types

from device_servers.kind import Prompt, PromptArg


def _recover_from_error(instrument: str, args: dict[str, str]) -> str:
    code = args.get("code") or "?"
    return (
        f"After error {code} on {instrument}: 1. Do not re-send the failed action. "
        "2. If the error is undefined (defined=false) or the state is stale, call "
        "read_back and review the deviations. 3. If it is defined, follow its fix_hint, "
        "dry-run the corrected step, then execute it under a NEW action_id. 4. If an "
        "action is ACTION_IN_DOUBT, compare read_back with what the action would have "
        "done and let a person decide."
    )


COMMON_PROMPTS = (
    Prompt(
        "recover_from_error",
        "Standard procedure after a device error: make safe, read back, decide.",
        _recover_from_error,
        (PromptArg("code", "The error code", required=True),),
    ),
)


class Prompts:
    """The prompts of one server: its kind's and the common ones."""

    def __init__(self, instrument: str, kind_prompts: tuple[Prompt, ...]) -> None:
        self.instrument = instrument
        self.by_name = {p.name: p for p in (*kind_prompts, *COMMON_PROMPTS)}

    def listed(self) -> list[types.Prompt]:
        return [
            types.Prompt(
                name=p.name,
                description=p.description,
                arguments=[
                    types.PromptArgument(
                        name=a.name, description=a.description, required=a.required
                    )
                    for a in p.arguments
                ],
            )
            for p in self.by_name.values()
        ]

    def get(self, name: str, args: dict[str, str]) -> types.GetPromptResult:
        prompt = self.by_name.get(name)
        if prompt is None:
            raise ValueError(f"unknown prompt {name!r} on {self.instrument}")
        text = prompt.render(self.instrument, args)
        return types.GetPromptResult(
            description=prompt.description,
            messages=[
                types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))
            ],
        )
